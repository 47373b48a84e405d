"""The Host seam over LSP: open buffers from pygls' workspace, events and progress out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types

from tether_protocol import (
    AGENT_EVENT_METHOD,
    RunEvent,
    RunFinishedEvent,
    StepEvent,
    ToolCallEvent,
    ToolProgressEvent,
)

from ..events import event_json
from ..host import Buffer, BufferDrift, FileEdit
from ..text.display import shown
from ..workspace.folders import path_from_uri
from .documents import LineDocument
from .link import ClientLink
from .overlay import ApprovedText, drift

MAX_RUNS_WITH_DRIFT = 64
"""Runs whose buffer differences are kept for their next tool result (oldest dropped)."""

_EVENT_HEAD = b'{"jsonrpc":"2.0","method":"%s","params":' % AGENT_EVENT_METHOD.encode()


class LspBuffers:
    """The client's open documents by resolved file path, plus the agent's unsaved edits.

    Reads see, in order: the approved text of an edit the editor said it applied and has
    not reported yet (see ``overlay``), an open document (unless a command changed its file
    on disk since, see ``mark_stale``), and otherwise the disk.
    """

    def __init__(self, link: ClientLink) -> None:
        self._link = link
        self._paths: dict[str, Path] = {}
        self._stale: dict[Path, int | None] = {}
        self._approved: dict[Path, ApprovedText] = {}
        self._agent_edited: dict[Path, str] = {}
        self._drift: dict[str, list[BufferDrift]] = {}
        self._recent: dict[str, None] = {}
        """Open documents' URIs, the most recently opened or changed last."""

    # --- notifications from the client ---------------------------------------------------
    def opened(self, uri: str) -> None:
        """Remember the resolved path of a document the client opened."""
        path = path_from_uri(uri)
        if path is not None:
            self._touch(uri)
            path = self._paths[uri] = path.resolve()
            self._stale.pop(path, None)
            record = self._approved.get(path)
            if record is not None:  # an edit of a file that was not open: the editor has it
                record.open = True
                self._reconcile(record, settle_on_difference=False)

    def changed(self, uri: str) -> None:
        """A document changed: its buffer is current again; an applied edit is reconciled."""
        path = self._paths.get(uri)
        if path is not None:
            self._touch(uri)
            self._stale.pop(path, None)
            record = self._approved.get(path)
            if record is not None and record.answered:
                self._reconcile(record, settle_on_difference=True)

    def closed(self, uri: str) -> None:
        """Forget a closed document (and what it was expected to hold)."""
        path = self._paths.pop(uri, None)
        self._recent.pop(uri, None)
        if path is not None:
            self._stale.pop(path, None)
            self._agent_edited.pop(path, None)
            self._approved.pop(path, None)

    def _touch(self, uri: str) -> None:
        self._recent.pop(uri, None)
        self._recent[uri] = None

    def most_recent_uri(self) -> str | None:
        """The open document the user opened or changed last (a plain client's run context)."""
        return next(reversed(self._recent), None)

    def saved(self, path: Path) -> None:
        """The editor saved ``path``: the disk has what the agent wrote."""
        record = self._approved.get(path)
        if record is not None and not record.open:
            del self._approved[path]
        self._agent_edited.pop(path, None)

    def saved_uri(self, uri: str) -> None:
        """``didSave`` for ``uri``."""
        path = self._paths.get(uri) or path_from_uri(uri)
        if path is not None:
            self.saved(path.resolve())

    # --- the Buffers protocol --------------------------------------------------------------
    def _document(self, uri: str, path: Path) -> Buffer | None:
        # pygls keys documents by the percent-decoded URI (VS Code encodes spaces, non-ASCII).
        doc = self._link.workspace.text_documents.get(unquote(uri))
        if doc is None:
            return None
        return Buffer(path=path, uri=uri, text=doc.source, version=doc.version)

    def _open_document(self, path: Path) -> object | None:
        """The client's open document for ``path`` (pygls' object), if any."""
        for uri, known in self._paths.items():
            if known == path:
                document: object | None = self._link.workspace.text_documents.get(unquote(uri))
                return document
        return None

    def get_open(self, path: Path) -> Buffer | None:
        """The open document for ``path`` as the editor last reported it, stale or not."""
        for uri, known in self._paths.items():
            if known == path:
                return self._document(uri, known)
        return None

    def get(self, path: Path) -> Buffer | None:
        record = self._approved.get(path)
        if record is not None and record.answered:
            # The version the editor will give it is unknown until it reports the change.
            return Buffer(path=path, uri=record.uri, text=record.text, version=None)
        buffer = self.get_open(path)
        if buffer is not None and path in self._stale and self._stale[path] == buffer.version:
            return None  # a command changed the file; the editor will reload it
        return buffer

    def all(self) -> Sequence[Buffer]:
        buffers = [self.get(path) for path in {*self._paths.values(), *self._approved}]
        return [b for b in buffers if b is not None]

    def mark_stale(self, path: Path) -> None:
        """Read ``path`` from disk until the editor sends its next change for it."""
        self._approved.pop(path, None)  # the disk is newer than an approved text, too
        buffer = self.get_open(path)
        self._stale[path] = buffer.version if buffer else None

    # --- the agent's edits -------------------------------------------------------------
    def expect(self, edit: FileEdit) -> ApprovedText:
        """``edit`` is being sent to the editor; ``answered`` tells what became of it."""
        open_ = self.get_open(edit.path) is not None
        record = ApprovedText.of(edit, open_, self._approved.get(edit.path))
        self._approved[edit.path] = record
        return record

    def answered(self, record: ApprovedText, applied: bool) -> None:
        """The editor's answer to ``record``'s edit (called as the answer is read, so that
        every ``didChange`` after it in the stream is known to come after it)."""
        if self._approved.get(record.path) is not record:
            return  # the document was closed meanwhile
        if not applied:
            if record.previous is not None:
                self._approved[record.path] = record.previous
            else:
                del self._approved[record.path]
            return
        record.answered = True
        record.previous = None
        self._agent_edited[record.path] = record.uri
        if record.open:  # editors that report before answering (VS Code) are settled now
            self._reconcile(record, settle_on_difference=False)

    def _reconcile(self, record: ApprovedText, settle_on_difference: bool) -> None:
        """Compare an applied edit's text with the editor's report of the buffer."""
        if not record.answered:
            return
        document = self._open_document(record.path)
        if isinstance(document, LineDocument):
            # Compared where the document changed since the edit's text before was read
            # and where the edit changes it (else as a whole). The same text is then the
            # edit's text after, made only when read: the next edit's text before is the
            # one this edit logged (its hash remembered, see ``text_hash``), and the
            # document's lines are never joined into a copy of it.
            held = document.holds_edit(record.edit)
            if held is None and document.holds(record.text):
                held = True
            if held:
                document.keep_edit(record.edit)
                del self._approved[record.path]
                return
        buffer = self.get_open(record.path)
        if buffer is None:
            return
        if buffer.text == record.text:
            del self._approved[record.path]
        elif settle_on_difference:
            del self._approved[record.path]
            if record.run_id is not None:
                found = drift(record.path, record.text, buffer.text)
                self._drift.setdefault(record.run_id, []).append(found)
                while len(self._drift) > MAX_RUNS_WITH_DRIFT:  # runs that ended never ask
                    del self._drift[next(iter(self._drift))]

    def take_drift(self, run_id: str) -> list[BufferDrift]:
        """Differences found for ``run_id``'s applied edits since the last call."""
        return self._drift.pop(run_id, [])

    def unsaved_agent_edits(self) -> list[Path]:
        """Files the agent edited through the editor that have not been saved since."""
        return list(self._agent_edited)

    def uri_of(self, path: Path) -> str:
        """The URI the client knows ``path`` by."""
        for uri, known in self._paths.items():
            if known == path:
                return uri
        return self._agent_edited.get(path) or path.as_uri()


class NotifySink:
    """Sends every event as an ``agent/event`` notification.

    The body is built from the event's JSON (shared with the session log) and handed to
    the transport's writer directly: pygls' ``notify`` would turn the event into a dict,
    wrap it in an attrs message and serialize that again, several times the cost on the
    path every streamed token takes.
    """

    def __init__(self, link: ClientLink) -> None:
        self._link = link

    def publish(self, event: RunEvent) -> None:
        body = event_json(event)
        if b"\\u0000" in body:
            body = nul_as_text(body)
        if not self._link.write_message(_EVENT_HEAD + body + b"}"):
            # no transport (yet): let pygls say so
            self._link.send_notification(
                AGENT_EVENT_METHOD, event.model_dump(mode="json", by_alias=True, exclude_none=True)
            )


_JSON_NUL = re.compile(rb"(?<!\\)((?:\\\\)*)\\u0000")
"""A JSON string's escaped NUL (after an even run of backslashes: not the text ``\\u0000``)."""


def nul_as_text(body: bytes) -> bytes:
    """``body`` (JSON) with each NUL of its strings written as the text ``\\x00``, as the
    display sanitiser shows it: Emacs 28's JSON reader refuses a whole message for one
    ``\\u0000``. For what is only shown (events, a run's answer), never for an edit."""
    return _JSON_NUL.sub(rb"\1\\\\x00", body)


def nul_free(text: str) -> str:
    """``text`` with each NUL written as ``\\x00`` (``nul_as_text`` for one string)."""
    return text.replace("\x00", "\\x00")


def progress_message(event: StepEvent | ToolCallEvent, step: int) -> str:
    """``step 2`` or ``step 2 · read_file src/app.py`` (one line, shown as text from outside
    is: ``text.display``)."""
    if isinstance(event, StepEvent):
        return f"step {event.step}"
    args = event.arguments
    target = args.get("path") or args.get("pattern") or args.get("command") or ""
    return shown(f"step {step} · {event.label or event.tool} {target}".rstrip())


def running_message(call: str, event: ToolProgressEvent) -> str:
    """``step 2 · bash make · 3 s · compiling foo.c``: the call's message (cut to 60
    characters: a status line shows the start), the seconds so far and the last line it
    printed (cut to 200 characters in all, shown as text from outside is). Before any
    call, Tether's own wait: ``waiting for MCP server notes to start (3 s)``."""
    if len(call) > 60:
        call = call[:59] + "…"
    if not call:
        said = f"{event.last_line} ({event.elapsed_ms // 1000} s)"
    else:
        said = f"{call} · {event.elapsed_ms // 1000} s"
        if event.last_line:
            said += f" · {event.last_line}"
    return shown(said if len(said) <= 200 else said[:199] + "…")


class ProgressSink:
    """Turns a run's events into ``$/progress`` begin/report/end on one token (a running
    command's reports too: the client's mode line says it runs).

    The values are plain JSON (``RAW_MESSAGE_METHODS``): lsprotocol's types would have
    pygls' converter build its code for them on a server's first run, several ms of an
    editor's first prompt."""

    def __init__(self, link: ClientLink, token: str | int, prompt: str, max_steps: int) -> None:
        self._link = link
        self._token = token
        self._step = 0
        self._max_steps = max(1, max_steps)
        self._call = ""
        excerpt = prompt if len(prompt) <= 60 else prompt[:57] + "…"
        # A percentage at begin makes clients draw a bar that the reports then move.
        self._send(
            {
                "kind": "begin",
                "title": "Tether",
                "cancellable": True,
                "message": excerpt,
                "percentage": 0,
            }
        )

    def _send(self, value: dict[str, object]) -> None:
        self._link.send_notification(types.PROGRESS, {"token": self._token, "value": value})

    def _report(self, message: str) -> None:
        self._send({"kind": "report", "message": message, "percentage": self._percentage()})

    def _percentage(self) -> int:
        """Steps made of ``maxSteps``, 0-100 (a run may end well before 100)."""
        return min(100, self._step * 100 // self._max_steps)

    def publish(self, event: RunEvent) -> None:
        if isinstance(event, StepEvent):
            self._step = event.step
            self._report(progress_message(event, 0))
        elif isinstance(event, ToolCallEvent):
            self._call = progress_message(event, self._step)
            self._report(self._call)
        elif isinstance(event, ToolProgressEvent):
            self._report(running_message(self._call, event))
        elif isinstance(event, RunFinishedEvent):
            self._send({"kind": "end", "message": event.outcome})
