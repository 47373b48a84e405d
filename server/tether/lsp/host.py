"""The Host seam over LSP: open buffers from pygls' workspace, events and progress out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from tether_protocol import (
    AGENT_EVENT_METHOD,
    RunEvent,
    RunFinishedEvent,
    StepEvent,
    ToolCallEvent,
)

from ..host import Buffer
from ..workspace import path_from_uri

if TYPE_CHECKING:
    from .server import TetherServer


class LspBuffers:
    """The client's open documents, found by resolved file path."""

    def __init__(self, server: TetherServer) -> None:
        self._server = server
        self._paths: dict[str, Path] = {}

    def opened(self, uri: str) -> None:
        """Remember the resolved path of a document the client opened."""
        path = path_from_uri(uri)
        if path is not None:
            self._paths[uri] = path.resolve()

    def closed(self, uri: str) -> None:
        """Forget a closed document."""
        self._paths.pop(uri, None)

    def _buffer(self, uri: str, path: Path) -> Buffer | None:
        doc = self._server.workspace.text_documents.get(uri)
        if doc is None:
            return None
        return Buffer(path=path, uri=uri, text=doc.source, version=doc.version)

    def get(self, path: Path) -> Buffer | None:
        for uri, known in self._paths.items():
            if known == path:
                return self._buffer(uri, known)
        return None

    def all(self) -> Sequence[Buffer]:
        buffers = (self._buffer(uri, path) for uri, path in self._paths.items())
        return [b for b in buffers if b is not None]


class NotifySink:
    """Sends every event as an ``agent/event`` notification."""

    def __init__(self, server: TetherServer) -> None:
        self._server = server

    def publish(self, event: RunEvent) -> None:
        self._server.protocol.notify(
            AGENT_EVENT_METHOD, event.model_dump(mode="json", by_alias=True, exclude_none=True)
        )


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
