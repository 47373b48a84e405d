"""A lean JSON-RPC client over a subprocess's stdio (LSP framing), for measuring.

Deliberately thin: the server's own framing codec (``tether.framing``), ``json`` and
nothing else, so that what is measured is the server and not the client. Every message is
stamped with ``time.monotonic_ns()`` when its bytes were read, and ``agent/event``
notifications are kept with that stamp.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.framing import FrameDecoder, frame

Handler = Callable[[Any], Any]
"""Answers a server→client request (plain function or coroutine function)."""

TETHER = (sys.executable, "-m", "tether", "serve")


class RpcError(Exception):
    """An error answer from the server."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('message')} ({error.get('code')})")
        self.error = error


@dataclass(slots=True)
class Event:
    """An ``agent/event`` as received: arrival time (monotonic ns) and params."""

    at: int
    params: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.params.get("kind"))


@dataclass
class Server:
    """A started server process and the client end of its stdio."""

    process: asyncio.subprocess.Process
    started_ns: int
    handlers: dict[str, Handler] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    keep_events: bool = True
    on_event: Callable[[Event], None] | None = None
    _next_id: int = 0
    _pending: dict[int, asyncio.Future[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    _reader: asyncio.Task[None] | None = None
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    @classmethod
    async def start(
        cls,
        argv: Sequence[str] = TETHER,
        *,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Server:
        """Spawn ``argv`` with piped stdio; the stamp is taken just before the spawn."""
        started = time.monotonic_ns()
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            cwd=str(cwd) if cwd else None,
            limit=1 << 24,
        )
        server = cls(process, started)
        server.handlers.setdefault("window/workDoneProgress/create", lambda params: None)
        server._reader = asyncio.create_task(server._read())
        return server

    @property
    def pid(self) -> int:
        return self.process.pid

    # --- sending -----------------------------------------------------------------------
    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(frame(body))

    async def request_timed(self, method: str, params: Any) -> tuple[int, Any]:
        """Send a request; (arrival ns of the answer, result). ``RpcError`` on an error."""
        self._next_id += 1
        msg_id = self._next_id
        answer: asyncio.Future[tuple[int, dict[str, Any]]] = (
            asyncio.get_running_loop().create_future()
        )
        self._pending[msg_id] = answer
        self._write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        assert self.process.stdin is not None
        await self.process.stdin.drain()
        at, message = await answer
        if "error" in message:
            raise RpcError(message["error"])
        return at, message.get("result")

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its result."""
        return (await self.request_timed(method, params))[1]

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self._write({"jsonrpc": "2.0", "method": method, "params": params})
        assert self.process.stdin is not None
        await self.process.stdin.drain()

    # --- receiving ---------------------------------------------------------------------
    async def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        decoder = FrameDecoder()
        try:
            while chunk := await stream.read(1 << 20):
                at = time.monotonic_ns()
                decoder.feed(chunk)
                for body in decoder:
                    self._dispatch(at, json.loads(body))
        finally:
            for answer in self._pending.values():
                if not answer.done():
                    answer.set_result((time.monotonic_ns(), {"error": {"message": "exited"}}))
            self._pending.clear()

    def _dispatch(self, at: int, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            answer = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if answer is not None and not answer.done():
                answer.set_result((at, message))
        elif method == "agent/event":
            event = Event(at, message["params"])
            if self.keep_events:
                self.events.append(event)
            if self.on_event is not None:
                self.on_event(event)
        elif "id" in message:
            task = asyncio.create_task(self._answer(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _answer(self, message: dict[str, Any]) -> None:
        handler = self.handlers.get(message["method"])
        if handler is None:
            error = {"code": -32601, "message": f"unhandled {message['method']}"}
            self._write({"jsonrpc": "2.0", "id": message["id"], "error": error})
            return
        result = handler(message.get("params"))
        if isinstance(result, Awaitable):
            result = await result
        self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})

    # --- lifecycle ---------------------------------------------------------------------
    async def initialize(
        self,
        root: Path | None,
        options: dict[str, Any] | None = None,
        *,
        approvals: bool = True,
        events: bool = True,
        position_encodings: Sequence[str] | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """``initialize`` then ``initialized``; (answer arrival ns, result)."""
        general = {"positionEncodings": list(position_encodings)} if position_encodings else {}
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "rootUri": root.as_uri() if root else None,
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}] if root else None,
            "capabilities": {
                "general": general,
                "window": {"workDoneProgress": False},
                "workspace": {
                    "applyEdit": True,
                    "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]},
                },
                "experimental": {
                    "tether": {"events": events, "approvals": approvals, "saveDocuments": False}
                },
            },
            "initializationOptions": options or {},
        }
        at, result = await self.request_timed("initialize", params)
        await self.notify("initialized", {})
        return at, result

    async def run(self, prompt: str, **params: Any) -> dict[str, Any]:
        """``agent/run`` to its result."""
        return dict(await self.request("agent/run", {"prompt": prompt, **params}))

    async def close(self, patience: float = 5.0) -> None:
        """``shutdown`` + ``exit``; kill the process if it has not gone after ``patience`` s."""
        try:
            if self.process.returncode is None:
                await asyncio.wait_for(self.request("shutdown", None), patience)
                await self.notify("exit", None)
                self.process.stdin.close()  # type: ignore[union-attr]
                await asyncio.wait_for(self.process.wait(), patience)
        except (TimeoutError, ConnectionError, RpcError, RuntimeError):
            pass
        finally:
            await self.kill()

    async def kill(self) -> None:
        """Kill the process (if alive) and stop reading."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGKILL)
            await self.process.wait()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 2)
        for task in list(self._tasks):
            task.cancel()
