"""The first prompt of ``tether acp``, rehearsed: one prompt on a private ACP server of its
own before the client's first, so that one finds the first-time work of a run done.

A fresh ``tether acp`` answered its first ``session/prompt`` 2 s after its spawn in ~3.4×
the time of the same server's later prompts (87 against 25 ms on the benchmark's read →
write → answer task): the SDK's first request, the run's modules and regular expressions,
the event loop's worker threads, every function on the path running unspecialized. As
for ``tether serve`` (``lsp.rehearsal``), the real path is run instead of a list of
things to warm:

- a second ``AcpServer`` with the same tools in the rehearsal's private folder, under its
  own environment (no key, no settings of the user's) with its own model as ``TETHER_*``
  variables (``run.rehearsal``: the folder, the model API on its private socket, once per
  process, the cancel at exit);
- ``RehearsalClient`` drives it in-process as the client does — ``initialize`` with the
  real client's capabilities, ``session/new`` in the rehearsal's workspace,
  ``session/prompt`` — through the wire's own request handling (``wire.Connection``: each
  message parsed, each request in its task, each answer and update encoded), and answers
  its requests as a client would (allow once, read and write its own files);
- what the server sends reaches that client only; it opens no network socket and starts
  no process (the script runs no command).
"""

from __future__ import annotations

import asyncio
import copy
import io
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..run import rehearsal as shared
from ..run.rehearsal import PROMPT, ModelSettings, environment
from ..tools.registry import ToolRegistry
from .front import PROTOCOL_VERSION
from .wire import INTERNAL_ERROR, METHOD_NOT_FOUND, Connection, Handler, NotificationHandler

DEFAULT_CAPABILITIES: dict[str, Any] = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
}
"""A client that offers its buffers and terminals, when the real one's are not known."""

RESOURCE_NOT_FOUND = -32002


def rehearse(
    tools: Callable[[], ToolRegistry],
    capabilities: Mapping[str, Any] | None = None,
    wanted: Callable[[], bool] = lambda: True,
    provider: str | None = None,
) -> bool:
    """Rehearse one prompt (see the module's docstring) unless it was done in this process
    or ``wanted()`` says no more (a prompt was asked meanwhile); True when it ran to its
    end. ``capabilities``: the real client's, from its ``initialize``; ``provider``: the
    configured one (an SDK provider is rehearsed through its SDK, any other name as the
    scripted model). Blocking: call it on a thread with no running event loop."""
    return shared.rehearse(_run, tools, capabilities, wanted, provider)


async def _run(
    folder: Path,
    root: Path,
    model: ModelSettings,
    tools: ToolRegistry,
    capabilities: Mapping[str, Any] | None,
) -> None:
    from .server import AcpServer  # the core's modules: loaded by now

    server = AcpServer(tools, {**environment(folder), **model.variables()})
    client = RehearsalClient(server.handlers(), server.notifications(), root)
    server.connection = client
    try:
        declared = copy.deepcopy(dict(capabilities or DEFAULT_CAPABILITIES))
        await client.call(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "clientCapabilities": declared,
                "clientInfo": {"name": "tether-rehearsal"},
            },
        )
        opened = await client.call("session/new", {"cwd": str(root), "mcpServers": []})
        prompt = [{"type": "text", "text": PROMPT}]
        answer = await client.call(
            "session/prompt", {"sessionId": opened["sessionId"], "prompt": prompt}
        )
        if not isinstance(answer, dict) or answer.get("stopReason") != "end_turn":
            raise RuntimeError(f"the rehearsal's prompt ended {answer!r}")
    finally:
        await server.close()


class _Discarded(io.BytesIO):
    """The rehearsal connection's output: written as to a client, kept by nobody."""

    def write(self, data: Any) -> int:
        return len(data)


class RehearsalClient(Connection):
    """The rehearsal's client: the server's connection, fed the client's messages in-process
    (``call``), its output encoded as for the wire and then read here — answers to the
    client's requests, the server's own requests answered as a client would, updates
    dropped."""

    def __init__(
        self,
        handlers: Mapping[str, Handler],
        notifications: Mapping[str, NotificationHandler],
        root: Path,
    ) -> None:
        super().__init__(io.BytesIO(), _Discarded(), handlers, notifications)
        self._root = root.resolve()
        self._loop = asyncio.get_running_loop()
        self._calls: dict[str, asyncio.Future[Any]] = {}
        self._next_call = 0

    async def call(self, method: str, params: Any) -> Any:
        """Send a request as the client; its result (an error answer raises)."""
        assert self._loop is not None
        self._next_call += 1
        call_id = f"rehearsal-{self._next_call}"
        answer = self._loop.create_future()
        self._calls[call_id] = answer
        message = {"jsonrpc": "2.0", "id": call_id, "method": method, "params": params}
        self._receive(json.dumps(message).encode())
        return await answer

    def _write(self, message: dict[str, Any]) -> None:
        super()._write(message)
        assert self._loop is not None
        if "method" not in message:  # an answer to one of the client's
            answer = self._calls.pop(message.get("id"), None)  # type: ignore[arg-type]
            if answer is not None and not answer.done():
                if "error" in message:
                    answer.set_exception(RuntimeError(f"{message['error']}"))
                else:
                    answer.set_result(message.get("result"))
        elif "id" in message:  # the server's request: answered as a client would
            self._loop.call_soon(self._reply, message)

    def _reply(self, request: dict[str, Any]) -> None:
        try:
            result = self._as_client(request["method"], request["params"])
            reply: dict[str, Any] = {"result": result}
        except LookupError as exc:
            reply = {"error": {"code": RESOURCE_NOT_FOUND, "message": str(exc)}}
        except Exception as exc:  # it ends the rehearsal, never reaches the server's writer
            reply = {"error": {"code": INTERNAL_ERROR, "message": repr(exc)}}
            for waiting in self._calls.values():
                if not waiting.done():
                    waiting.set_exception(RuntimeError(f"the rehearsal's client failed: {exc!r}"))
            self._calls.clear()
        self._answered({"jsonrpc": "2.0", "id": request["id"], **reply})

    def _as_client(self, method: str, params: Any) -> Any:
        if method == "session/request_permission":
            chosen = next(o for o in params["options"] if o["kind"] == "allow_once")
            return {"outcome": {"outcome": "selected", "optionId": chosen["optionId"]}}
        if method == "fs/read_text_file":
            path = self._own(params["path"])
            if not path.is_file():
                raise LookupError(params["path"])
            return {"content": path.read_text(encoding="utf-8")}
        if method == "fs/write_text_file":
            self._own(params["path"]).write_text(params["content"], encoding="utf-8")
            return None
        raise RuntimeError(f"{METHOD_NOT_FOUND}: the rehearsal's client has no {method}")

    def _own(self, name: str) -> Path:
        """A path of the rehearsal's own workspace (the only ones its prompt touches)."""
        path = Path(name).resolve()
        if not path.is_relative_to(self._root):
            raise RuntimeError(f"{name} is outside the rehearsal's workspace")
        return path
