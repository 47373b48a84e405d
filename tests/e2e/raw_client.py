"""A client that writes raw bytes to a real ``tether serve`` and reads its frames back.

pytest-lsp cannot send a malformed frame; this one can. A reader thread parses the server's
stdout into messages, so a test waits for an answer with a timeout instead of hanging.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from tether.framing import content_length, frame

from .conftest import SERVE, server_env

ANSWER_SECONDS = 5.0
"""How long a test waits for an answer that should come at once: the contract says within
1 s, and 5 s keeps a loaded 2-core machine from failing a healthy server."""


def encode(message: dict[str, Any]) -> bytes:
    """A JSON-RPC message as compact JSON bytes."""
    return json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")).encode()


def read_body(stream: IO[bytes]) -> bytes | None:
    """The next body the server wrote (blocking), None at the end of its output."""
    head = bytearray()
    while (line := stream.readline()) not in (b"\r\n", b""):
        head += line
    return stream.read(content_length(bytes(head))) if line else None


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """A memory figure of a live process, from /proc (VmRSS now, VmHWM the peak)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


class RawServer:
    """``tether serve`` on pipes; stderr goes to a file the test reads at the end."""

    def __init__(
        self,
        tmp_path: Path,
        env: dict[str, str] | None = None,
        argv: Sequence[str] = SERVE,
        name: str = "server",
    ) -> None:
        self.stderr_path = tmp_path / f"{name}-stderr.txt"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env={**server_env(tmp_path / "state"), **(env or {})},
            cwd=tmp_path,
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.pending: list[dict[str, Any]] = []
        self._write_lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        try:
            while (body := read_body(stream)) is not None:
                self.messages.put(json.loads(body))
        finally:
            self.messages.put(None)  # also when the output was not framed: the test says so

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.proc.pid

    def send(self, data: bytes) -> None:
        """Write raw bytes to the server's stdin."""
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def request(self, msg_id: Any, method: str, params: Any = None) -> None:
        """Send one well-formed request."""
        message: dict[str, Any] = {"id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(frame(encode(message)))

    def respond(self, msg_id: Any, result: Any) -> None:
        """Answer one of the server's requests."""
        self.send(frame(encode({"id": msg_id, "result": result})))

    def notify(self, method: str, params: Any = None) -> None:
        """Send one well-formed notification."""
        self.send(frame(encode({"method": method, "params": params})))

    def next_message(self, timeout: float = ANSWER_SECONDS) -> dict[str, Any]:
        """The next message from the server (AssertionError if none comes in time)."""
        try:
            message = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the server sent nothing for {timeout} s") from None
        if message is None:
            self.messages.put(None)  # stays ended
            raise AssertionError(f"the server's output ended (exit status {self.proc.poll()})")
        return message

    def answer(self, msg_id: Any, timeout: float = ANSWER_SECONDS) -> dict[str, Any]:
        """The server's answer to ``msg_id`` (other messages are kept in ``pending``)."""
        for index, message in enumerate(self.pending):
            if message.get("id") == msg_id and "method" not in message:
                return self.pending.pop(index)
        while True:
            message = self.next_message(timeout)
            if message.get("id") == msg_id and "method" not in message:
                return message
            self.pending.append(message)

    def initialize(self, root: Path, options: dict[str, Any] | None = None) -> dict[str, Any]:
        """``initialize`` (scripted provider, no model turns) and ``initialized``."""
        self.request(
            "init",
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {},
                "initializationOptions": {
                    "provider": "scripted",
                    "script": {"turns": []},
                    **(options or {}),
                },
            },
        )
        result = self.answer("init")
        assert "result" in result, result
        self.notify("initialized", {})
        # The answer comes before the server has imported the rest (the lean start): the
        # first request after it waits for that; the tests' budgets are for what follows.
        self.request("ready", "agent/cancel", {"runId": "no-such-run"})
        self.answer("ready", timeout=60)
        return result

    def ping(self, msg_id: Any) -> dict[str, Any]:
        """A cheap request that must be answered: ``agent/cancel`` of an unknown run."""
        self.request(msg_id, "agent/cancel", {"runId": "no-such-run"})
        return self.answer(msg_id)

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def close(self, timeout: float = 10) -> int:
        """Close stdin and wait for the exit status (killed if it does not come)."""
        try:
            if self.proc.stdin is not None and not self.proc.stdin.closed:
                self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            raise AssertionError(f"the server did not exit within {timeout} s") from None
        finally:
            self._stderr.close()

    def kill(self) -> None:
        """Make sure the process is gone (test teardown)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        if not self._stderr.closed:
            self._stderr.close()
