"""A language server that misbehaves on purpose (standard library only), for the code tools'
bad cases: ``python fake_langserver.py MODE [URI...] [--mark FILE]``.

It answers ``initialize`` and ``shutdown`` like a server; on any other request, by ``MODE``:
``hang`` never answers, ``crash`` writes "boom" to stderr and exits with code 3, ``garbage``
writes a frame that is not JSON, ``rename`` answers a workspace edit changing line 0 of each
``URI`` given (``definition``: a location in the first). ``--mark FILE``: write its process id,
folder and environment's names to FILE (JSON) when started (the test sees whether it ran,
where, with what, and that it ended).
"""

from __future__ import annotations

import json
import os
import sys


def read() -> dict | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(sys.stdin.buffer.read(length))


def send(message: dict) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


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
            sys.stdout.buffer.write(b"Content-Length: 9\r\n\r\nnot json!")
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
