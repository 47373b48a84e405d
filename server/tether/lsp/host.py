"""The Host seam over LSP: open buffers from pygls' workspace, events and progress out."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from lsprotocol import types

from tether_protocol import (
    AGENT_EVENT_METHOD,
    RunEvent,
    RunFinishedEvent,
    StepEvent,
    ToolCallEvent,
)

from ..events import event_json
from ..host import Buffer
from ..workspace import path_from_uri
from .transport import frame

if TYPE_CHECKING:
    from .server import TetherServer

_EVENT_HEAD = b'{"jsonrpc":"2.0","method":"%s","params":' % AGENT_EVENT_METHOD.encode()


class LspBuffers:
    """The client's open documents by resolved file path, plus the agent's unsaved edits.

    Reads see, in order: an open document (unless a command changed its file on disk
    since, see ``mark_stale``), an edit the agent applied through the editor to a file
    that is not open and not saved yet, and otherwise the disk.
    """

    def __init__(self, server: TetherServer) -> None:
        self._server = server
        self._paths: dict[str, Path] = {}
        self._stale: dict[Path, int | None] = {}
        self._pending: dict[Path, Buffer] = {}
        self._agent_edited: dict[Path, str] = {}
        self._waiters: dict[Path, list[asyncio.Event]] = {}

    # --- notifications from the client ---------------------------------------------------
    def opened(self, uri: str) -> None:
        """Remember the resolved path of a document the client opened."""
        path = path_from_uri(uri)
        if path is not None:
            path = self._paths[uri] = path.resolve()
            self._pending.pop(path, None)
            self._stale.pop(path, None)
            self._wake(path)

    def changed(self, uri: str) -> None:
        """A document changed: its buffer is current again; wake edit confirmations."""
        path = self._paths.get(uri)
        if path is not None:
            self._stale.pop(path, None)
            self._wake(path)

    def closed(self, uri: str) -> None:
        """Forget a closed document."""
        path = self._paths.pop(uri, None)
        if path is not None:
            self._stale.pop(path, None)
            self._agent_edited.pop(path, None)

    def saved(self, path: Path) -> None:
        """The editor saved ``path``: the disk has what the agent wrote."""
        self._pending.pop(path, None)
        self._agent_edited.pop(path, None)

    def saved_uri(self, uri: str) -> None:
        """``didSave`` for ``uri``."""
        path = self._paths.get(uri) or path_from_uri(uri)
        if path is not None:
            self.saved(path.resolve())

    # --- the Buffers protocol --------------------------------------------------------------
    def _document(self, uri: str, path: Path) -> Buffer | None:
        # pygls keys documents by the percent-decoded URI (VS Code encodes spaces, non-ASCII).
        doc = self._server.workspace.text_documents.get(unquote(uri))
        if doc is None:
            return None
        return Buffer(path=path, uri=uri, text=doc.source, version=doc.version)

    def get_open(self, path: Path) -> Buffer | None:
        """The open document for ``path``, stale or not."""
        for uri, known in self._paths.items():
            if known == path:
                return self._document(uri, known)
        return None

    def get(self, path: Path) -> Buffer | None:
        buffer = self.get_open(path)
        if buffer is not None:
            if path in self._stale and self._stale[path] == buffer.version:
                return None  # a command changed the file; the editor will reload it
            return buffer
        return self._pending.get(path)

    def all(self) -> Sequence[Buffer]:
        buffers = [self.get(path) for path in {*self._paths.values(), *self._pending}]
        return [b for b in buffers if b is not None]

    def mark_stale(self, path: Path) -> None:
        """Read ``path`` from disk until the editor sends its next change for it."""
        buffer = self.get_open(path)
        self._stale[path] = buffer.version if buffer else None

    # --- the agent's edits -------------------------------------------------------------
    def note_agent_edit(self, path: Path, uri: str, text: str) -> None:
        """The editor applied an agent edit; until it is saved, reads must see ``text``."""
        self._agent_edited[path] = uri
        if self.get_open(path) is None:
            self._pending[path] = Buffer(path=path, uri=uri, text=text, version=None)

    def unsaved_agent_edits(self) -> list[Path]:
        """Files the agent edited through the editor that have not been saved since."""
        return list(self._agent_edited)

    def uri_of(self, path: Path) -> str:
        """The URI the client knows ``path`` by."""
        for uri, known in self._paths.items():
            if known == path:
                return uri
        return self._agent_edited.get(path) or path.as_uri()

    async def wait_for_text(self, path: Path, text: str, within: float) -> bool:
        """Wait until the open document for ``path`` holds ``text``; False after ``within``."""
        deadline = asyncio.get_running_loop().time() + within
        while True:
            buffer = self.get_open(path)
            if buffer is not None and buffer.text == text:
                return True
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return False
            event = asyncio.Event()
            self._waiters.setdefault(path, []).append(event)
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except TimeoutError:
                return False
            finally:
                waiting = self._waiters.get(path, [])
                if event in waiting:
                    waiting.remove(event)

    def _wake(self, path: Path) -> None:
        for event in self._waiters.pop(path, []):
            event.set()


class NotifySink:
    """Sends every event as an ``agent/event`` notification.

    The frame is built from the event's JSON (shared with the session log) and handed to
    the transport's writer directly: pygls' ``notify`` would turn the event into a dict,
    wrap it in an attrs message and serialize that again, several times the cost on the
    path every streamed token takes.
    """

    def __init__(self, server: TetherServer) -> None:
        self._server = server

    def publish(self, event: RunEvent) -> None:
        writer = self._server.protocol.writer
        if writer is None:  # no transport (yet): let pygls say so
            self._server.protocol.notify(
                AGENT_EVENT_METHOD, event.model_dump(mode="json", by_alias=True, exclude_none=True)
            )
            return
        writer.write(frame(_EVENT_HEAD + event_json(event) + b"}"))


def progress_message(event: StepEvent | ToolCallEvent, step: int) -> str:
    """``step 2`` or ``step 2 · read_file src/app.py``."""
    if isinstance(event, StepEvent):
        return f"step {event.step}"
    args = event.arguments
    target = args.get("path") or args.get("pattern") or args.get("command") or ""
    return f"step {step} · {event.tool} {target}".rstrip()


class ProgressSink:
    """Turns a run's events into ``$/progress`` begin/report/end on one token."""

    def __init__(self, server: TetherServer, token: str | int, prompt: str) -> None:
        self._server = server
        self._token = token
        self._step = 0
        excerpt = prompt if len(prompt) <= 60 else prompt[:57] + "…"
        server.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title="Tether", cancellable=True, message=excerpt)
        )

    def publish(self, event: RunEvent) -> None:
        progress = self._server.work_done_progress
        if isinstance(event, StepEvent):
            self._step = event.step
            progress.report(
                self._token, types.WorkDoneProgressReport(message=progress_message(event, 0))
            )
        elif isinstance(event, ToolCallEvent):
            message = progress_message(event, self._step)
            progress.report(self._token, types.WorkDoneProgressReport(message=message))
        elif isinstance(event, RunFinishedEvent):
            progress.end(self._token, types.WorkDoneProgressEnd(message=event.outcome))
