"""What every front's rehearsal of a first run shares: the task, the private folder and
environment, the model API on its private socket, the once-per-process guard, and the
cancel at exit.

A front (``lsp.rehearsal`` for ``tether serve`` and the daemon, ``acp.rehearsal`` for
``tether acp``) rehearses one run on a private server of its own before the client's first
prompt, so that prompt finds every first-time cost of a run already paid; the front gives
``rehearse`` how to drive it (``Drive``: make its server in the folder, send it what its
client would, answer it as its client would) and this module gives the rest:

- a private temporary folder (0700: a workspace holding one file, the state folder, the
  model API's socket), removed when the rehearsal ends;
- an environment of the server's own (``environment``): no key, the user's config folder
  pointed into that folder, so no settings file of the user's or of a project is read, no
  MCP server starts, nothing of the user's state is written;
- the model (``ModelApi``): the configured provider through its SDK, whose requests go to
  ``RehearsalApi`` — a Unix socket in that folder answering with the script's turns in the
  provider's wire format (``providers.sdk.REHEARSAL_SOCKET``, set in the rehearsal's event
  loop only) — or, for any other provider, the scripted model playing the same turns;
- once per process (a daemon's runs are forked after it), never once a run was asked of
  the real server (the rehearsal would only compete with it), bounded by
  ``REHEARSAL_SECONDS``; a failure is logged at debug level and changes nothing; one still
  under way when the process exits is cancelled first (``_Current``).

The script reads, edits and creates a file and runs no command: nothing leaves the process
but to its own socket.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import json
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h11

from ..providers import SDK_MODULES, rehearsal_stream
from ..providers.sdk import REHEARSAL_SOCKET
from ..tools.registry import ToolRegistry

log = logging.getLogger(__name__)

STOP_SECONDS = 1.0
"""At exit, how long a rehearsal still running is given to end once cancelled."""

REHEARSAL_SECONDS = 10.0
"""The longest a rehearsal may take (an idle machine: 80-200 ms); then it is given up."""

SOURCE = "def greet(name):\n    return 'hello ' + name\n"
"""The rehearsal workspace's one file."""

PROMPT = "Make it say hey."

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

BASE_URLS = {"openai": "http://rehearsal.invalid/v1", "anthropic": "http://rehearsal.invalid"}
"""What the rehearsal's SDK providers are configured with: their requests go to the
rehearsal's socket whatever the address (``providers.sdk.REHEARSAL_SOCKET``)."""

_DONE = threading.Event()
_LOCK = threading.Lock()


def script() -> dict[str, Any]:
    """The script the scripted model plays (``SCRIPT``, read when a rehearsal starts)."""
    return SCRIPT


def rehearsed() -> bool:
    """Whether this process (or the one it was forked from) has rehearsed a run."""
    return _DONE.is_set()


def environment(folder: Path) -> dict[str, str]:
    """The rehearsal server's whole environment: its config and state folders inside
    ``folder``; no key, no ``TETHER_*`` setting of the user's."""
    return {
        "HOME": str(folder),
        "XDG_CONFIG_HOME": str(folder / "config"),
        "TETHER_STATE_DIR": str(folder / "state"),
    }


def workspace(folder: Path) -> Path:
    """The rehearsal's workspace in ``folder``, holding its one file."""
    root = folder / "workspace"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(SOURCE, encoding="utf-8")
    return root


@dataclass(frozen=True)
class ModelSettings:
    """The rehearsal server's model settings (a provider, its address and model, or the
    scripted model with the script)."""

    provider: str
    base_url: str | None = None
    model: str | None = None
    script: Mapping[str, Any] | None = None

    def options(self) -> dict[str, Any]:
        """As ``initializationOptions``."""
        if self.script is not None:
            return {"provider": self.provider, "script": self.script}
        return {"provider": self.provider, "baseUrl": self.base_url, "model": self.model}

    def variables(self) -> dict[str, str]:
        """As ``TETHER_*`` variables."""
        if self.script is not None:
            return {"TETHER_PROVIDER": self.provider, "TETHER_SCRIPT": json.dumps(self.script)}
        assert self.base_url is not None and self.model is not None
        return {
            "TETHER_PROVIDER": self.provider,
            "TETHER_BASE_URL": self.base_url,
            "TETHER_MODEL": self.model,
        }


@contextlib.asynccontextmanager
async def model_api(
    folder: Path, provider: str | None, script: Mapping[str, Any]
) -> AsyncIterator[ModelSettings]:
    """The rehearsal's model while the block runs: an SDK provider's requests answered by
    ``RehearsalApi`` on ``folder``'s socket (for this event loop only), any other provider
    as the scripted model playing ``script``."""
    if provider not in SDK_MODULES:
        yield ModelSettings("scripted", script=script)
        return
    assert provider is not None
    path = folder / "api.sock"
    api = await RehearsalApi(provider).listen(path)
    REHEARSAL_SOCKET.set(str(path))  # this event loop's providers connect there only
    try:
        yield ModelSettings(provider, BASE_URLS[provider], "rehearsal")
    finally:
        api.close()


Drive = Callable[
    [Path, Path, ModelSettings, ToolRegistry, Mapping[str, Any] | None], Awaitable[None]
]
"""A front's rehearsal: given the private folder, the workspace in it, the model, the tools
and the real client's capabilities, make its server there and drive it as its client."""


def rehearse(
    drive: Drive,
    tools: Callable[[], ToolRegistry],
    capabilities: Mapping[str, Any] | None = None,
    wanted: Callable[[], bool] = lambda: True,
    provider: str | None = None,
    around: Callable[[], None] = lambda: None,
) -> bool:
    """Rehearse one run with ``drive`` unless it was done in this process or ``wanted()``
    says no more (a real run was asked meanwhile); True when it ran to its end.
    ``capabilities``: the real client's, from its ``initialize``; ``provider``: the
    configured one (an SDK provider is rehearsed through its SDK, any other name as the
    scripted model); ``around`` runs before and after it (a front's own warm-up).
    Blocking: call it on a thread with no running event loop (the warm-up's)."""

    async def body(folder: Path) -> None:
        root = workspace(folder)
        async with model_api(folder, provider, script()) as model:
            await drive(folder, root, model, tools(), capabilities)

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
            around()
            asyncio.run(current.rehearse(body))
            around()
        except (Exception, asyncio.CancelledError) as exc:  # the first real run pays, as before
            log.debug("the rehearsal of a first run failed: %r", exc)
            return False
        finally:
            current.end()
            atexit.unregister(current.stop)
            gc.collect()
        log.info("a first run rehearsed in %.0f ms", (time.monotonic() - began) * 1000)
        return True


Body = Callable[[Path], Awaitable[None]]


class _Current:
    """A rehearsal under way: its folder, event loop and task, so that one still running
    when the process exits (the client went away: the warm-up thread is a daemon thread)
    is cancelled and its folder removed before the interpreter goes — not cut off
    mid-write with the folder gone under it."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[None] | None = None
        self.ended = threading.Event()

    async def rehearse(self, body: Body) -> None:
        assert self.folder is not None
        self.loop, self.task = asyncio.get_running_loop(), asyncio.current_task()
        await asyncio.wait_for(body(self.folder), REHEARSAL_SECONDS)

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
