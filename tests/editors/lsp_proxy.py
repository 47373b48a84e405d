"""A transparent LSP pipe between Neovim and ``tether serve`` that records the wire.

``python lsp_proxy.py LOG SERVER_COMMAND...`` starts the server and copies every message
both ways unchanged, appending each to LOG (JSON lines: ``{"from": "editor"|"server",
"message": ...}``). Tests read LOG to see what the plugin really sent (``agent/run`` params).

It also lets a scenario ask the editor what a server would ask: the editor's notification
``$/tetherTest/request {method, params}`` is not forwarded; instead the proxy sends the editor
the request ``method`` (id ``tether-test-N``), keeps its answer from the server, logs it and
hands it back to the editor as the notification ``$/tetherTest/answered {id, result?, error?}``.
So a test sees the plugin's answer as the editor encoded it on the wire, before the server
side that sends such requests exists.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import IO, Any

from tether.framing.codec import content_length, frame

TEST_REQUEST = "$/tetherTest/request"
TEST_ANSWERED = "$/tetherTest/answered"
ID_PREFIX = "tether-test-"


def read_message(stream: IO[bytes]) -> dict[str, Any] | None:
    """One framed message, or None at the end of the stream."""
    head = b""
    while (line := stream.readline()) not in (b"", b"\r\n", b"\n"):
        head += line
    if not head:
        return None
    body = stream.read(content_length(head))
    message: dict[str, Any] = json.loads(body)
    return message


def frame_message(message: dict[str, Any]) -> bytes:
    """The message as an LSP frame."""
    return frame(json.dumps(message, ensure_ascii=False).encode())


class Proxy:
    """Copies messages between the editor (our stdio) and the server (a child)."""

    def __init__(self, log_path: str, command: list[str]) -> None:
        self.log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as we do
        self.lock = threading.Lock()
        self.server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.to_editor = sys.stdout.buffer
        self.asked = 0

    def record(self, source: str, message: dict[str, Any]) -> None:
        with self.lock:
            self.log.write(json.dumps({"from": source, "message": message}) + "\n")
            self.log.flush()

    def send_editor(self, message: dict[str, Any]) -> None:
        with self.lock:
            self.to_editor.write(frame_message(message))
            self.to_editor.flush()

    def send_server(self, message: dict[str, Any]) -> None:
        assert self.server.stdin is not None
        with self.lock:
            self.server.stdin.write(frame_message(message))
            self.server.stdin.flush()

    def from_server(self) -> None:
        assert self.server.stdout is not None
        while (message := read_message(self.server.stdout)) is not None:
            self.record("server", message)
            self.send_editor(message)

    def from_editor(self) -> None:
        while (message := read_message(sys.stdin.buffer)) is not None:
            self.record("editor", message)
            if message.get("method") == TEST_REQUEST:
                self.asked += 1
                params = message.get("params") or {}
                request = {
                    "jsonrpc": "2.0",
                    "id": f"{ID_PREFIX}{self.asked}",
                    "method": params.get("method"),
                    "params": params.get("params"),
                }
                self.record("proxy", request)
                self.send_editor(request)
            elif str(message.get("id", "")).startswith(ID_PREFIX) and "method" not in message:
                answered = {k: message[k] for k in ("id", "result", "error") if k in message}
                self.send_editor({"jsonrpc": "2.0", "method": TEST_ANSWERED, "params": answered})
            else:
                self.send_server(message)

    def stop(self, *_: object) -> None:
        """SIGTERM (Neovim stopping the client): the server goes too."""
        self.server.terminate()
        try:
            self.server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.server.kill()
        os._exit(0)

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self.stop)
        reader = threading.Thread(target=self.from_server, daemon=True)
        reader.start()
        try:
            self.from_editor()
        finally:
            if self.server.stdin is not None:
                self.server.stdin.close()  # the editor is gone: so is the server's input
            try:
                code = self.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                code = self.server.wait(timeout=10)
            reader.join(timeout=5)
        return code


if __name__ == "__main__":
    sys.exit(Proxy(sys.argv[1], sys.argv[2:]).run())
