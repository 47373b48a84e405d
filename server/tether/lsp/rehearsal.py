"""The first run of ``tether serve`` (and of the daemon's runs), rehearsed: one run on a
private server of its own before the editor's first prompt, so that prompt finds every
first-time cost of a run already paid.

A fresh ``tether serve`` paid, on its first ``agent/run``, for work no later run repeats:
cattrs making the converter functions of the messages a run sends (and, making some,
emptying its cache of the others), regular expressions compiled, the event loop's worker
threads started, and every function on a run's path — the server's, the SDK's, its HTTP
client's — running unspecialized by the interpreter until it has run a few times. On the
benchmark's read → write → answer task that was ~20 ms of CPU for a first prompt against
~13 ms for the next ones (docs/performance.md, "A first run rehearsed"). Listing what to
warm (``warm_run``'s modules and sample messages) always misses part of it; this runs the
real path instead:

- a second ``TetherServer`` with the same tools in the rehearsal's private folder, under
  its own environment, with its own model (``run.rehearsal``: what every front's
  rehearsal shares — the folder, the environment, the model API on its private socket,
  once per process, the cancel at exit);
- ``RehearsalEditor`` drives it in-process with the messages an editor sends —
  ``initialize`` with the real editor's capabilities (the same paths: events, approvals,
  the position encoding), ``initialized``, ``agent/run``, ``shutdown`` — as frames'
  bodies through ``lsp.dispatch``, and answers its requests as an editor would (allow,
  apply the edit to its own file);
- the rehearsal's server writes to the rehearsal's editor only, opens no network socket
  and starts no process.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types

from tether_protocol.methods import (
    AGENT_APPROVE,
    AGENT_DIAGNOSTICS,
    AGENT_RUN,
    AGENT_SAVE_DOCUMENTS,
)

from ..run import rehearsal as shared
from ..run.rehearsal import PROMPT, SCRIPT, SOURCE, ModelSettings, environment, rehearsed
from ..text.model import offset_at
from ..tools.registry import ToolRegistry
from ..workspace.folders import path_from_uri
from .dispatch import dispatch
from .server import warm_run

__all__ = ["SCRIPT", "SOURCE", "environment", "rehearse", "rehearsed"]

DEFAULT_CAPABILITIES: dict[str, Any] = {
    "window": {"workDoneProgress": True},
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]},
    },
    "experimental": {"tether": {"events": True, "approvals": True}},
}
"""An editor with Tether's plugin, when the real editor's capabilities are not known."""


def rehearse(
    tools: Callable[[], ToolRegistry],
    capabilities: Mapping[str, Any] | None = None,
    wanted: Callable[[], bool] = lambda: True,
    provider: str | None = None,
) -> bool:
    """Rehearse one run (see the module's docstring) unless it was done in this process or
    ``wanted()`` says no more (a real run was asked meanwhile); True when it ran to its
    end. ``capabilities``: the real editor's, from its ``initialize``; ``provider``: the
    configured one (an SDK provider is rehearsed through its SDK, any other name as the
    scripted model). Blocking: call it on a thread with no running event loop (the
    warm-up's).

    ``warm_run`` before and after: cattrs empties its cache of converter functions
    whenever it makes one for a new kind of list or mapping (the run's messages bring
    some); after the run, meeting no new kind, ``warm_run`` leaves its own functions made,
    which a daemon's forks would otherwise make again each."""
    return shared.rehearse(_run, tools, capabilities, wanted, provider, warm_run)


def rehearsal_capabilities(capabilities: Mapping[str, Any] | None) -> dict[str, Any]:
    """The editor's capabilities for the rehearsal: as declared (the same paths), less
    ``agent/diagnostics`` (a rehearsal does not wait for problems an editor reports)."""
    chosen = copy.deepcopy(dict(capabilities or DEFAULT_CAPABILITIES))
    experimental = chosen.get("experimental")
    tether = experimental.get("tether") if isinstance(experimental, dict) else None
    if isinstance(tether, dict):
        tether["diagnostics"] = False
    return chosen


async def _run(
    folder: Path,
    root: Path,
    model: ModelSettings,
    tools: ToolRegistry,
    capabilities: Mapping[str, Any] | None,
) -> None:
    from .handlers import create_server  # the server's modules: loaded by now

    server = create_server(tools, environment(folder))
    editor = RehearsalEditor(server.protocol, root)
    try:
        await editor.request(
            types.INITIALIZE,
            {
                "processId": None,
                "clientInfo": {"name": "tether-rehearsal"},
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": rehearsal_capabilities(capabilities),
                "initializationOptions": model.options(),
            },
        )
        editor.notify(types.INITIALIZED, {})
        result = await editor.request(AGENT_RUN, {"prompt": PROMPT})
        if not isinstance(result, dict) or result.get("outcome") != "done":
            raise RuntimeError(f"the rehearsal's run ended {result!r}")
        await editor.request(types.SHUTDOWN, None)
    finally:
        await server.close()


class RehearsalEditor:
    """The rehearsal's editor: sends an editor's messages to ``protocol`` in-process and
    answers the server's requests as an editor with Tether's plugin would."""

    def __init__(self, protocol: Any, root: Path) -> None:
        self._protocol = protocol
        self._root = root
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        protocol.set_writer(self, include_headers=False)

    # --- the server's writer ---------------------------------------------------------
    def write(self, body: bytes) -> None:
        """A message from the server (on another thread: handed to the loop)."""
        if threading.get_ident() == self._thread:
            self._received(body)
        else:
            self._loop.call_soon_threadsafe(self._received, body)

    def close(self) -> None:
        """The server closes its writer (``exit``): nothing to do."""

    # --- sending ---------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        dispatch(self._protocol, bytearray(json.dumps(message).encode("utf-8")))

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        """Send a request; its result (an error answer raises ``RuntimeError``)."""
        self._next_id += 1
        msg_id = self._next_id
        answer = self._loop.create_future()
        self._waiting[msg_id] = answer
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return await answer

    # --- receiving -------------------------------------------------------------------
    def _received(self, body: bytes) -> None:
        """Never raises into the server's writer: a message it cannot handle ends the
        rehearsal (its requests fail) instead."""
        try:
            self._handle(json.loads(body))
        except Exception as exc:
            for waiting in self._waiting.values():
                if not waiting.done():
                    waiting.set_exception(RuntimeError(f"the rehearsal's editor failed: {exc!r}"))
            self._waiting.clear()

    def _handle(self, message: dict[str, Any]) -> None:
        if "method" not in message:  # an answer to one of ours
            waiting = self._waiting.pop(message.get("id", 0), None)  # ours start at 1
            if waiting is not None and not waiting.done():
                if "error" in message:
                    waiting.set_exception(RuntimeError(f"{message['error']}"))
                else:
                    waiting.set_result(message.get("result"))
        elif "id" in message:  # a request: answered at once
            result = self._answer(message["method"], message.get("params"))
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        # notifications (events, progress, log lines) are dropped

    def _answer(self, method: str, params: Any) -> Any:
        if method == AGENT_APPROVE:
            return {"decision": "allow"}
        if method == types.WORKSPACE_APPLY_EDIT:
            return {"applied": self._apply(params["edit"])}
        if method == types.WINDOW_SHOW_MESSAGE_REQUEST:  # an approval asked as a message
            titles = [a["title"] for a in params.get("actions") or ()]
            return {"title": "Allow"} if "Allow" in titles else None
        if method == AGENT_SAVE_DOCUMENTS:
            return {"saved": list(params.get("uris") or ())}
        if method == AGENT_DIAGNOSTICS:
            return {"items": []}
        if method == types.WINDOW_SHOW_DOCUMENT:
            return {"success": False}
        return None  # window/workDoneProgress/create and the like

    def _apply(self, edit: dict[str, Any]) -> bool:
        """Apply a ``WorkspaceEdit``'s text edits to the files of the rehearsal's own
        workspace (the only ones its run touches), as an editor saves them."""
        for change in edit.get("documentChanges") or ():
            if "edits" not in change:
                continue  # a CreateFile: the text edit after it writes the file
            path = path_from_uri(change["textDocument"]["uri"])
            if path is None or not path.resolve().is_relative_to(self._root.resolve()):
                return False
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            # ASCII text: a position is the same in every encoding an editor may choose.
            text = applied_text(text, change["edits"])
            path.write_text(text, encoding="utf-8")
        return True


def applied_text(text: str, edits: Sequence[Mapping[str, Any]]) -> str:
    """``text`` with an editor's LSP ``TextEdit``s applied (ranges in ``text``, UTF-16)."""
    spans = []
    for edit in edits:
        start, end = edit["range"]["start"], edit["range"]["end"]
        spans.append(
            (
                offset_at(text, start["line"], start["character"]),
                offset_at(text, end["line"], end["character"]),
                edit["newText"],
            )
        )
    for begin, finish, new in sorted(spans, reverse=True):
        text = text[:begin] + new + text[finish:]
    return text


def editor_capabilities(first: object) -> dict[str, Any] | None:
    """The capabilities of the ``initialize`` the lean start read (its body), if any."""
    if not isinstance(first, (bytes, bytearray)):
        return None
    try:
        params = json.loads(first).get("params")
    except (ValueError, AttributeError, RecursionError):
        return None
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    return capabilities if isinstance(capabilities, dict) else None
