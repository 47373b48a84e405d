"""JSON-RPC 2.0 as ACP frames it: one JSON message per line over stdio.

``Connection`` reads stdin on a daemon thread (a blocked read neither keeps the process
alive nor delays the exit), handles each request in its own task (a long
``session/prompt`` does not hold up ``session/cancel`` or the answers to the agent's own
requests), and sends its own requests with ``request``: cancelling the wait withdraws the
request with ``$/cancel_request`` and a late answer is dropped. Output is written in the
order it is sent, batched per turn of the event loop (a streamed answer is many small
notifications). End of input or SIGTERM ends ``serve``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, BinaryIO

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

MAX_LINE_BYTES = 64 * 1024 * 1024
"""A line longer than this is dropped (answered with an error when it has an id)."""
CANCEL_METHOD = "$/cancel_request"
END_GRACE_SECONDS = 0.3
"""How long the requests still being handled at the end of input may take to answer."""

Handler = Callable[[Any], Awaitable[Any]]
NotificationHandler = Callable[[Any], Awaitable[None] | None]


class RpcError(Exception):
    """An error answer: raised by a handler, or carried by ``request`` from the client."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message[:1000]}
        if self.data is not None:
            error["data"] = self.data
        return error


def _is_id(value: object) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


class _LineReader:
    """Lines from a raw file descriptor; a too long line is reported as ``None`` once."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._skipping = False

    def lines(self) -> Any:
        while True:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                if self._buffer.strip() and not self._skipping:
                    yield bytes(self._buffer)
                return
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                piece = chunk[start:end]
                start = end + 1
                if self._skipping:
                    self._skipping = False
                    self._buffer.clear()
                    continue
                self._buffer += piece
                line = bytes(self._buffer)
                self._buffer.clear()
                if line.strip():
                    yield line
            if not self._skipping:
                self._buffer += chunk[start:]
                if len(self._buffer) > MAX_LINE_BYTES:
                    self._buffer.clear()
                    self._skipping = True
                    yield None


class Connection:
    """One client on stdio: its requests to ``handlers``, notifications to
    ``notifications``, and the agent's own requests and notifications out."""

    def __init__(
        self,
        stdin: BinaryIO,
        stdout: BinaryIO,
        handlers: Mapping[str, Handler],
        notifications: Mapping[str, NotificationHandler],
    ) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._handlers = handlers
        self._notifications = notifications
        self._loop: asyncio.AbstractEventLoop | None = None
        self._out: list[bytes] = []
        self._scheduled = False
        self._broken = False
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._serving: dict[Any, asyncio.Task[None]] = {}
        """The client's requests being handled, by id (for its ``$/cancel_request``)."""
        self._tasks: set[asyncio.Task[Any]] = set()

    # --- output ------------------------------------------------------------------------
    def _write(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        self._out.append(line)
        if self._loop is None:
            self.flush()
        elif not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write out everything queued."""
        self._scheduled = False
        if not self._out:
            return
        data = b"".join(self._out)
        self._out.clear()
        if self._broken:
            return
        try:
            self._stdout.write(data)
            self._stdout.flush()
        except (OSError, ValueError) as exc:  # the client is gone; end of input follows
            self._broken = True
            log.debug("cannot write to the client: %s", exc)

    def notify(self, method: str, params: Any) -> None:
        """Send a notification (never blocks)."""
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its result; an error answer raises ``RpcError``.
        Cancelling the wait withdraws the request (``$/cancel_request``); its late answer,
        whatever it says, is dropped."""
        assert self._loop is not None, "request before serve"
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[Any] = self._loop.create_future()
        self._pending[request_id] = future
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            return await future
        except asyncio.CancelledError:
            if self._pending.pop(request_id, None) is not None:
                self.notify(CANCEL_METHOD, {"requestId": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)

    # --- input -------------------------------------------------------------------------
    async def serve(self, on_close: Callable[[], Awaitable[None]]) -> None:
        """Serve until end of input or SIGTERM, then await ``on_close``."""
        loop = self._loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[bytes | None | bool] = asyncio.Queue()
        reader = _LineReader(self._stdin.fileno())

        def pump() -> None:
            for line in reader.lines():
                loop.call_soon_threadsafe(inbox.put_nowait, True if line is None else line)
            with contextlib.suppress(RuntimeError):  # the loop is gone already
                loop.call_soon_threadsafe(inbox.put_nowait, None)

        threading.Thread(target=pump, name="tether-acp-stdin", daemon=True).start()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGTERM, inbox.put_nowait, None)
        try:
            while (item := await inbox.get()) is not None:
                if item is True:
                    log.warning("dropped a message longer than %d bytes", MAX_LINE_BYTES)
                    self._write(
                        {
                            "jsonrpc": "2.0",
                            "id": None,
                            "error": {"code": INVALID_REQUEST, "message": "message too long"},
                        }
                    )
                    continue
                assert isinstance(item, bytes)
                self._receive(item)
        finally:
            for future in self._pending.values():
                future.cancel()
            await on_close()
            # Requests read before the end are still answered (a client may write and
            # close at once); the runs are stopped by now, so this is short.
            if self._tasks:
                await asyncio.wait(set(self._tasks), timeout=END_GRACE_SECONDS)
            for task in list(self._tasks):
                task.cancel()
            self.flush()

    def _receive(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            self._answer(None, error=RpcError(PARSE_ERROR, "not a JSON message"))
            return
        if not isinstance(message, dict):
            self._answer(None, error=RpcError(INVALID_REQUEST, "a message is a JSON object"))
            return
        method = message.get("method")
        if method is None:
            self._answered(message)
            return
        has_id = "id" in message
        if not isinstance(method, str) or (has_id and not _is_id(message["id"])):
            bad_id = message.get("id") if _is_id(message.get("id")) else None
            self._answer(bad_id, error=RpcError(INVALID_REQUEST, "invalid request"))
            return
        params = message.get("params")
        if has_id:
            self._start(self._handle_request(message["id"], method, params), message["id"])
        else:
            self._handle_notification(method, params)

    def _start(self, work: Awaitable[None], request_id: Any = None) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._tasks.add(task)
        if request_id is not None:
            self._serving[request_id] = task

        def done(finished: asyncio.Task[None]) -> None:
            self._tasks.discard(finished)
            if request_id is not None and self._serving.get(request_id) is finished:
                del self._serving[request_id]
            if not finished.cancelled() and finished.exception() is not None:
                log.error("handler failed", exc_info=finished.exception())

        task.add_done_callback(done)

    def _answered(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        future = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if future is None:
            log.debug("dropped an answer to no pending request: %.200r", request_id)
            return
        if future.done():
            return
        error = message.get("error")
        if error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            text = error.get("message") if isinstance(error, dict) else None
            future.set_exception(
                RpcError(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    text if isinstance(text, str) else "error",
                    error.get("data") if isinstance(error, dict) else None,
                )
            )
        else:
            future.set_result(message.get("result"))

    async def _handle_request(self, request_id: Any, method: str, params: Any) -> None:
        handler = self._handlers.get(method)
        if handler is None:
            self._answer(request_id, error=RpcError(METHOD_NOT_FOUND, f"unknown method {method}"))
            return
        try:
            result = await handler(params)
        except RpcError as exc:
            self._answer(request_id, error=exc)
        except asyncio.CancelledError:
            self._answer(request_id, error=RpcError(REQUEST_CANCELLED, "request cancelled"))
            raise
        except Exception as exc:
            log.exception("%s failed", method)
            self._answer(request_id, error=RpcError(INTERNAL_ERROR, f"{method} failed: {exc}"))
        else:
            self._answer(request_id, result=result)

    def _handle_notification(self, method: str, params: Any) -> None:
        if method == CANCEL_METHOD:
            wanted = params.get("requestId") if isinstance(params, dict) else None
            task = self._serving.get(wanted)
            if task is not None:
                task.cancel()
            return
        handler = self._notifications.get(method)
        if handler is None:
            log.debug("dropped an unknown notification %.100s", method)
            return
        try:
            outcome = handler(params)
        except Exception:
            log.exception("notification %s failed", method)
            return
        if outcome is not None:
            self._start(outcome)

    def _answer(self, request_id: Any, result: Any = None, error: RpcError | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            message["error"] = error.to_wire()
        else:
            message["result"] = result
        self._write(message)
