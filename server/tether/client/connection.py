"""A small JSON-RPC client over a ``tether serve`` subprocess's stdio (LSP framing)."""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process, TaskGroup
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectSendStream

from tether_protocol import (
    AGENT_CANCEL_METHOD,
    AGENT_EVENT_METHOD,
    AGENT_RUN_METHOD,
    RunEvent,
    parse_event,
)

from ..framing import HEADER_END, MAX_HEADER_LINE, content_length, frame
from .spawn import serve_command

log = logging.getLogger(__name__)

RequestHandler = Callable[[Any], Awaitable[Any]]
EventHandler = Callable[[RunEvent], None]


MESSAGE_TYPES: dict[Any, str] = {1: "error: ", 2: "warning: "}
"""How a ``window/showMessage`` type is labelled in the terminal (info and log: none)."""


SERVER_EXITED = -32099
"""The code of the error a request gets when the server has gone."""
REQUEST_CANCELLED = -32800
WITHDRAWABLE = frozenset({"agent/ask"})
"""The server's requests whose handler ends when the server withdraws them
(``$/cancelRequest``: a question no longer waited for is no longer asked)."""


class ServerError(Exception):
    """A JSON-RPC error answer from the server."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message


def client_capabilities(
    events: bool = True, approvals: bool = False, save_documents: bool = False, ask: bool = False
) -> dict[str, Any]:
    """What the terminal client declares in ``initialize``: no documents (no
    ``workspace/applyEdit``: the server writes approved edits itself), Tether's events,
    approvals and the model's questions (``agent/ask``) as asked."""
    tether = {"events": events, "approvals": approvals, "saveDocuments": save_documents}
    if approvals:  # the terminal shows every file of a change (a rename) as one diff
        tether["changeSets"] = True
    if ask:
        tether["ask"] = True
    return {"window": {"workDoneProgress": False}, "experimental": {"tether": tether}}


class TetherClient:
    """Spawns the server, initializes it, runs prompts and relays events.

    Use as ``async with TetherClient.spawn(root, options) as client: await client.run(...)``.
    """

    def __init__(self, process: Process, task_group: TaskGroup) -> None:
        self._process = process
        self._tg = task_group
        assert process.stdout is not None and process.stdin is not None
        self._reader = BufferedByteReceiveStream(process.stdout)
        self._ids = itertools.count(1)
        self._pending: dict[int, MemoryObjectSendStream[dict[str, Any]]] = {}
        self._handlers: dict[str, RequestHandler] = {
            "window/workDoneProgress/create": _null,
        }
        self.on_event: EventHandler | None = None
        self.on_notice: Callable[[], None] | None = None
        """Called before a server message is printed to stderr (the terminal it shares)."""
        self._shown: set[str] = set()
        self.capabilities: dict[str, Any] = {}
        self._closed = False
        """The server closed its output: no answer can come any more."""
        self._answering: dict[Any, anyio.CancelScope] = {}
        """The withdrawable requests being answered, by id."""

    @classmethod
    def command(cls) -> Sequence[str]:
        """How the server is started: this interpreter's ``tether``."""
        return serve_command()

    def handle(self, method: str, handler: RequestHandler) -> None:
        """Answer the server's ``method`` requests with ``handler``."""
        self._handlers[method] = handler

    async def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self._process.stdin is not None
        try:
            await self._process.stdin.send(frame(body))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            raise ServerError(SERVER_EXITED, "the server exited") from None

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its answer; ``ServerError`` on an error answer."""
        if self._closed:
            raise ServerError(SERVER_EXITED, "the server exited")
        msg_id = next(self._ids)
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](1)
        self._pending[msg_id] = send
        try:
            await self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
            with receive:
                answer = await receive.receive()
        finally:  # answered, or given up (cancelled): a late answer goes nowhere
            self._pending.pop(msg_id, None)
        if "error" in answer:
            raise ServerError(answer["error"].get("code", 0), answer["error"].get("message", ""))
        return answer.get("result")

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def read_messages(self) -> None:
        """Dispatch the server's messages until it closes its output."""
        try:
            while True:
                headers = await self._reader.receive_until(HEADER_END, MAX_HEADER_LINE)
                body = await self._reader.receive_exactly(content_length(headers))
                message = json.loads(body)
                await self._dispatch(message)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError):
            pass
        finally:
            self._closed = True
            exited = {"error": {"code": SERVER_EXITED, "message": "the server exited"}}
            for send in self._pending.values():
                with contextlib.suppress(anyio.BrokenResourceError):
                    send.send_nowait(exited)
            self._pending.clear()

    async def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            send = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if send is not None:
                with contextlib.suppress(anyio.BrokenResourceError):  # its asker gave up
                    send.send_nowait(message)
        elif method == AGENT_EVENT_METHOD:
            if self.on_event is not None:
                try:
                    event = parse_event(message["params"])
                except ValueError:  # a kind newer than this client, or a bad one: not shown
                    log.debug("an event this client cannot show: %.200r", message["params"])
                    return
                self.on_event(event)
        elif "id" in message:
            self._tg.start_soon(self._answer, message)
        elif method == "$/cancelRequest":
            params = message.get("params")
            scope = self._answering.get(params.get("id")) if isinstance(params, dict) else None
            if scope is not None:
                scope.cancel()
        elif method == "window/showMessage":
            self._show_message(message.get("params"))

    def _show_message(self, params: Any) -> None:
        """A ``window/showMessage`` for the terminal user: one line, each message once."""
        if not isinstance(params, dict):
            return
        text = str(params.get("message", "")).removeprefix("Tether: ")
        if not text or text in self._shown:
            return
        self._shown.add(text)
        kind = MESSAGE_TYPES.get(params.get("type", 0), "")
        if self.on_notice is not None:
            self.on_notice()
        print(f"tether: {kind}{text}", file=sys.stderr)

    async def _answer(self, message: dict[str, Any]) -> None:
        handler = self._handlers.get(message["method"])
        if handler is None:
            error = {"code": -32601, "message": f"unhandled method {message['method']}"}
            await self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})
            return
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        with anyio.CancelScope() as withdrawn:
            if message["method"] in WITHDRAWABLE:
                self._answering[message["id"]] = withdrawn
            try:
                answer["result"] = await handler(message.get("params"))
            except Exception as exc:
                log.exception("handler for %s failed", message["method"])
                answer["error"] = {"code": -32603, "message": str(exc)}
            finally:
                self._answering.pop(message["id"], None)
        if withdrawn.cancelled_caught:
            answer["error"] = {"code": REQUEST_CANCELLED, "message": "withdrawn by the server"}
        with contextlib.suppress(ServerError):  # the server went away meanwhile
            await self._send(answer)

    async def initialize(
        self,
        root: Path,
        options: dict[str, Any],
        *,
        events: bool = True,
        approvals: bool = False,
        save_documents: bool = False,
        ask: bool = False,
    ) -> dict[str, Any]:
        """``initialize`` + ``initialized`` for a workspace folder (an absolute path)."""
        result = await self.request(
            "initialize",
            {
                "processId": None,
                "clientInfo": {"name": "tether-headless"},
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": client_capabilities(events, approvals, save_documents, ask),
                "initializationOptions": options,
            },
        )
        await self.notify("initialized", {})
        self.capabilities = result.get("capabilities", {})
        return dict(result)

    async def run(self, prompt: str, **params: Any) -> dict[str, Any]:
        """``agent/run``; the result as a dict."""
        result = await self.request(AGENT_RUN_METHOD, {"prompt": prompt, **params})
        return dict(result)

    def cancel_soon(self, run_id: str, then: Callable[[], None] | None = None) -> None:
        """Ask the server to cancel run ``run_id`` (``agent/cancel``) without waiting;
        ``then`` is called once the server has answered (or is gone)."""
        self._tg.start_soon(self._cancel, run_id, then)

    async def _cancel(self, run_id: str, then: Callable[[], None] | None) -> None:
        try:
            with contextlib.suppress(ServerError):
                await self.request(AGENT_CANCEL_METHOD, {"runId": run_id})
        finally:
            if then is not None:
                then()

    async def shutdown(self, grace: float = 3.0) -> None:
        """``shutdown`` + ``exit``, then wait (at most ``grace`` seconds) for the process."""
        with anyio.move_on_after(grace):
            try:
                await self.request("shutdown", None)
                await self.notify("exit", None)
            except ServerError:
                pass
            await self._process.wait()
        if self._process.returncode is None:
            self._process.kill()
            with anyio.move_on_after(grace):
                await self._process.wait()


async def _null(params: Any) -> None:
    return None
