"""The first run, rehearsed: one run on a private server of its own before the editor's
first prompt, so that prompt finds every first-time cost of a run already paid.

A fresh ``tether serve`` paid, on its first ``agent/run``, for work no later run repeats:
cattrs making the converter functions of the messages a run sends (and, making some,
emptying its cache of the others), regular expressions compiled, the event loop's worker
threads started, and every function on a run's path — the server's, the SDK's, its HTTP
client's — running unspecialized by the interpreter until it has run a few times. On the
benchmark's read → write → answer task that was ~20 ms of CPU for a first prompt against
~13 ms for the next ones (docs/performance.md, "A first run rehearsed"). Listing what to
warm (``warm_run``'s modules and sample messages) always misses part of it; this runs the
real path instead:

- a second ``TetherServer`` with the same tools in a private temporary folder (0700:
  a workspace holding one file, the state folder, the model API's socket), under an
  environment of its own that holds no key and points the user's config folder into that
  folder: no settings file of the user's or of a project is read, no MCP server starts,
  nothing of the user's state is written;
- its model is the configured provider, through its SDK, whose requests go to
  ``RehearsalApi`` — a Unix socket in that folder answering with the script's turns in the
  provider's wire format (``providers.sdk.REHEARSAL_SOCKET``, set in this event loop only)
  — or, for any other provider, the scripted model playing the same turns;
- ``RehearsalEditor`` drives it in-process with the messages an editor sends —
  ``initialize`` with the real editor's capabilities (the same paths: events, approvals,
  the position encoding), ``initialized``, ``agent/run``, ``shutdown`` — as frames'
  bodies through ``lsp.dispatch``, and answers its requests as an editor would (allow,
  apply the edit to its own file);
- nothing leaves the process but to its own socket: the rehearsal's server writes to the
  rehearsal's editor only, opens no network socket and starts no process (the script
  reads, edits and creates a file; it runs no command); the folder is removed when it
  ends; one still under way when the process exits is cancelled first (``_Current``).

Once per process (a daemon's runs are forked after it: ``daemon.server.preload``), never
once a run was asked of the real server (the rehearsal would only compete with it), and
bounded by ``REHEARSAL_SECONDS``; a failure is logged at debug level and changes nothing.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import copy
import gc
import json
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import h11
from lsprotocol import types

from tether_protocol.methods import (
    AGENT_APPROVE,
    AGENT_DIAGNOSTICS,
    AGENT_RUN,
    AGENT_SAVE_DOCUMENTS,
)

from ..providers import SDK_MODULES, rehearsal_stream
from ..providers.sdk import REHEARSAL_SOCKET
from ..text.model import offset_at
from ..tools.registry import ToolRegistry
from ..workspace.folders import path_from_uri
from .dispatch import dispatch
from .server import warm_run

log = logging.getLogger(__name__)

STOP_SECONDS = 1.0
"""At exit, how long a rehearsal still running is given to end once cancelled."""

REHEARSAL_SECONDS = 10.0
"""The longest a rehearsal may take (an idle machine: 80-200 ms); then it is given up."""

SOURCE = "def greet(name):\n    return 'hello ' + name\n"
"""The rehearsal workspace's one file."""

SCRIPT: dict[str, Any] = {
    "turns": [
        {
            "text": "Let me read the file first.",
            "toolCalls": [{"name": "read_file", "arguments": {"path": "src/app.py"}}],
        },
        {
            "text": "Now the change.",
            "toolCalls": [
                {
                    "name": "edit_file",
                    "arguments": {
                        "path": "src/app.py",
                        "old_text": "'hello '",
                        "new_text": "'hi '",
                    },
                }
            ],
        },
        {
            "text": "And a new file.",
            "toolCalls": [
                {
                    "name": "write_file",
                    "arguments": {"path": "src/greeting.py", "content": "GREETING = 'hey'\n"},
                }
            ],
        },
        {"text": "Done: it says hey now."},
    ]
}
"""A run's usual shape: read, edit, create a file (each approved and applied), answer."""

DEFAULT_CAPABILITIES: dict[str, Any] = {
    "window": {"workDoneProgress": True},
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]},
    },
    "experimental": {"tether": {"events": True, "approvals": True}},
}
"""An editor with Tether's plugin, when the real editor's capabilities are not known."""

_DONE = threading.Event()
_LOCK = threading.Lock()


def rehearsed() -> bool:
    """Whether this process (or the one it was forked from) has rehearsed a run."""
    return _DONE.is_set()


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
    warm-up's)."""
    with _LOCK:
        if _DONE.is_set():
            return False
        if not wanted():
            log.debug("no rehearsal of a first run: a run was asked first")
            return False
        _DONE.set()
        began = time.monotonic()
        # What is loaded so far stays for good; what the rehearsal leaves (its server, with
        # cycles) is collected after it, not frozen with the rest (``warm_up_thread``).
        gc.freeze()
        current = _Current()
        try:
            current.folder = Path(tempfile.mkdtemp(prefix="tether-rehearsal-"))
            atexit.register(current.stop)
            # ``warm_run`` before and after: cattrs empties its cache of converter functions
            # whenever it makes one for a new kind of list or mapping (the run's messages
            # bring some); after the run, meeting no new kind, ``warm_run`` leaves its own
            # functions made, which a daemon's forks would otherwise make again each.
            warm_run()
            asyncio.run(current.rehearse(tools(), capabilities, provider))
            warm_run()
        except (Exception, asyncio.CancelledError) as exc:  # the first real run pays, as before
            log.debug("the rehearsal of a first run failed: %r", exc)
            return False
        finally:
            current.end()
            atexit.unregister(current.stop)
            gc.collect()
        log.info("a first run rehearsed in %.0f ms", (time.monotonic() - began) * 1000)
        return True


class _Current:
    """A rehearsal under way: its folder, event loop and task, so that one still running
    when the process exits (``tether serve``'s input ended: the warm-up thread is a daemon
    thread) is cancelled and its folder removed before the interpreter goes — not cut off
    mid-write with the folder gone under it."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[None] | None = None
        self.ended = threading.Event()

    async def rehearse(
        self, tools: ToolRegistry, capabilities: Mapping[str, Any] | None, provider: str | None
    ) -> None:
        assert self.folder is not None
        self.loop, self.task = asyncio.get_running_loop(), asyncio.current_task()
        run = _run(self.folder, tools, capabilities, provider)
        await asyncio.wait_for(run, REHEARSAL_SECONDS)

    def end(self) -> None:
        """After the rehearsal: its folder removed, its event loop's worker threads gone
        (anyio's, told to stop as the loop ended; the loop's own executor is joined by
        ``asyncio.run``), before a daemon forks."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        for thread in threading.enumerate():
            if self.loop is not None and getattr(thread, "loop", None) is self.loop:
                thread.join(timeout=1.0)
        self.ended.set()

    def stop(self) -> None:
        """At exit (``atexit``): cancel the rehearsal still running, wait a moment for it to
        end, and remove its folder."""
        if self.loop is not None and self.task is not None and not self.ended.is_set():
            with contextlib.suppress(RuntimeError):  # its loop has just closed
                self.loop.call_soon_threadsafe(self.task.cancel)
            self.ended.wait(STOP_SECONDS)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def rehearsal_capabilities(capabilities: Mapping[str, Any] | None) -> dict[str, Any]:
    """The editor's capabilities for the rehearsal: as declared (the same paths), less
    ``agent/diagnostics`` (a rehearsal does not wait for problems an editor reports)."""
    chosen = copy.deepcopy(dict(capabilities or DEFAULT_CAPABILITIES))
    experimental = chosen.get("experimental")
    tether = experimental.get("tether") if isinstance(experimental, dict) else None
    if isinstance(tether, dict):
        tether["diagnostics"] = False
    return chosen


def environment(folder: Path) -> dict[str, str]:
    """The rehearsal server's whole environment: its config and state folders inside
    ``folder``; no key, no ``TETHER_*`` setting of the user's."""
    return {
        "HOME": str(folder),
        "XDG_CONFIG_HOME": str(folder / "config"),
        "TETHER_STATE_DIR": str(folder / "state"),
    }


async def _run(
    folder: Path,
    tools: ToolRegistry,
    capabilities: Mapping[str, Any] | None,
    provider: str | None,
) -> None:
    from .handlers import create_server  # the server's modules: loaded by now

    root = folder / "workspace"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(SOURCE, encoding="utf-8")
    options: dict[str, Any] = {"provider": "scripted", "script": SCRIPT}
    api: asyncio.Server | None = None
    if provider in SDK_MODULES:
        assert provider is not None
        path = folder / "api.sock"
        api = await RehearsalApi(provider).listen(path)
        REHEARSAL_SOCKET.set(str(path))  # this event loop's providers connect there only
        options = {"provider": provider, "baseUrl": BASE_URLS[provider], "model": "rehearsal"}
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
                "initializationOptions": options,
            },
        )
        editor.notify(types.INITIALIZED, {})
        result = await editor.request(AGENT_RUN, {"prompt": "Make it say hey."})
        if not isinstance(result, dict) or result.get("outcome") != "done":
            raise RuntimeError(f"the rehearsal's run ended {result!r}")
        await editor.request(types.SHUTDOWN, None)
    finally:
        await server.close()
        if api is not None:
            api.close()


BASE_URLS = {"openai": "http://rehearsal.invalid/v1", "anthropic": "http://rehearsal.invalid"}
"""What the rehearsal's SDK providers are configured with: their requests go to the
rehearsal's socket whatever the address (``providers.sdk.REHEARSAL_SOCKET``)."""

MAX_REQUEST = 1024 * 1024
"""The largest request head the rehearsal's model API reads."""
READ_BYTES = 65536
SSE = ("content-type", "text/event-stream")


class RehearsalApi:
    """The rehearsal's model API: a Unix socket in its private folder that answers each
    HTTP request with the script's next turn in the provider's wire format, so the SDK, its
    HTTP client and its connection code run as for a real API — and no network socket is
    opened. Past the script's end it repeats the last turn (an answer, no tool call)."""

    def __init__(self, provider: str) -> None:
        turns = SCRIPT["turns"]
        self._replies = [_reply(provider, index, turn) for index, turn in enumerate(turns)]
        self._served = 0

    async def listen(self, path: Path) -> asyncio.Server:
        return await asyncio.start_unix_server(self._answer, path=str(path))

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection (the SDK's client opens one per model call)."""
        connection = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST)
        try:
            while True:
                event = connection.next_event()
                if event is h11.NEED_DATA:
                    connection.receive_data(await reader.read(READ_BYTES))  # b"": closed
                elif isinstance(event, h11.EndOfMessage):  # a whole request: the next turn
                    body = self._replies[min(self._served, len(self._replies) - 1)]
                    self._served += 1
                    head = h11.Response(status_code=200, headers=[SSE])  # chunked, as the APIs
                    for part in (head, h11.Data(data=body), h11.EndOfMessage()):
                        writer.write(connection.send(part) or b"")
                    await writer.drain()
                    connection.start_next_cycle()
                elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                    return
        except (h11.ProtocolError, OSError):
            pass  # a request it cannot read: the connection is closed
        finally:
            writer.close()


def _reply(provider: str, index: int, turn: Mapping[str, Any]) -> bytes:
    calls = turn.get("toolCalls") or ()
    call = None
    if calls:
        call = (f"call_{index + 1}", calls[0]["name"], json.dumps(calls[0]["arguments"]))
    return rehearsal_stream(provider, turn["text"], call)


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
