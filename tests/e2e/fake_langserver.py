"""A language server that misbehaves on purpose (Tether's framing, nothing else of it), for
the code tools' bad cases: ``python fake_langserver.py MODE [URI...] [--mark FILE]``.

It answers ``initialize`` and ``shutdown`` like a server; on any other request, by ``MODE``:
``hang`` never answers, ``crash`` writes "boom" to stderr and exits with code 3, ``garbage``
writes a frame that is not JSON, ``flood`` announces a 1 GiB message, ``rename`` answers a
workspace edit changing line 0 of each ``URI`` given (``definition``: a location in the
first). ``--mark FILE``: write its process id,
folder and environment's names to FILE (JSON) when started (the test sees whether it ran,
where, with what, and that it ended).
"""

from __future__ import annotations

import json
import os
import sys

from tether.framing.codec import FrameDecoder, frame, frame_head

_decoder = FrameDecoder()
_bodies: list[bytes] = []


def read() -> dict | None:
    while not _bodies:
        data = os.read(0, 65536)
        if not data:
            return None
        _decoder.feed(data)
        _bodies.extend(_decoder)
    return json.loads(_bodies.pop(0))


def write(body: bytes) -> None:
    sys.stdout.buffer.write(frame(body))
    sys.stdout.buffer.flush()


def send(message: dict) -> None:
    write(json.dumps(message).encode())


def main() -> None:
    args = sys.argv[1:]
    mark = None
    if "--mark" in args:
        at = args.index("--mark")
        mark = args[at + 1]
        del args[at : at + 2]
    mode, uris = args[0], args[1:]
    if mark:
        with open(mark, "w") as handle:
            json.dump({"pid": os.getpid(), "cwd": os.getcwd(), "env": sorted(os.environ)}, handle)
    while (message := read()) is not None:
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            if method == "exit":
                return
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": ident, "result": {"capabilities": {}}})
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": ident, "result": None})
        elif mode == "hang":
            continue
        elif mode == "crash":
            sys.stderr.write("boom\n")
            sys.stderr.flush()
            os._exit(3)
        elif mode == "garbage":
            write(b"not json!")
        elif mode == "flood":  # announces a message too long to take, then nothing
            sys.stdout.buffer.write(frame_head(1 << 30))
            sys.stdout.buffer.flush()
        elif method == "textDocument/rename":
            span = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
            changes = {uri: [{"range": span, "newText": "# renamed\n"}] for uri in uris}
            send({"jsonrpc": "2.0", "id": ident, "result": {"changes": changes}})
        else:
            span = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
            send({"jsonrpc": "2.0", "id": ident, "result": {"uri": uris[0], "range": span}})


if __name__ == "__main__":
    main()
