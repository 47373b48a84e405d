"""The Host seam: what the outside world offers the loop and the tools.

The LSP layer implements these protocols over JSON-RPC; unit tests use in-memory ones.
Nothing here (nor in the loop, tools or providers) imports pygls or lsprotocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from tether_protocol import ApproveParams, ApproveResult, FileDiagnostics, RunEvent


@dataclass(frozen=True, slots=True)
class Buffer:
    """An open editor buffer as the user sees it (possibly unsaved)."""

    path: Path
    uri: str
    text: str
    version: int | None


class Buffers(Protocol):
    """The editor's open buffers, looked up by absolute, resolved path."""

    def get(self, path: Path) -> Buffer | None:
        """The open buffer for ``path``, or None when the file is not open."""
        ...

    def all(self) -> Sequence[Buffer]:
        """Every open buffer backed by a file."""
        ...

    def mark_stale(self, path: Path) -> None:
        """A command changed ``path`` on disk under a clean buffer: read the disk until the
        editor reloads it."""
        ...


class EventSink(Protocol):
    """Where a run's events go (editor notifications, the session log, a terminal)."""

    def publish(self, event: RunEvent) -> None:
        """Deliver one event; must not block."""
        ...


class NoBuffers:
    """A host with no editor: every read goes to disk."""

    def get(self, path: Path) -> Buffer | None:
        return None

    def all(self) -> Sequence[Buffer]:
        return ()

    def mark_stale(self, path: Path) -> None:
        return None


class MemoryBuffers:
    """Open buffers held in a dict (tests and headless use)."""

    def __init__(self, buffers: Sequence[Buffer] = ()) -> None:
        self._by_path: dict[Path, Buffer] = {b.path: b for b in buffers}

    def put(self, buffer: Buffer) -> None:
        """Open (or replace) a buffer."""
        self._by_path[buffer.path] = buffer

    def get(self, path: Path) -> Buffer | None:
        return self._by_path.get(path)

    def all(self) -> Sequence[Buffer]:
        return tuple(self._by_path.values())

    def mark_stale(self, path: Path) -> None:
        self._by_path.pop(path, None)


@dataclass(frozen=True, slots=True)
class TextChange:
    """Replace ``base[start:end]`` (code-point offsets into the base text) with ``new_text``."""

    start: int
    end: int
    new_text: str


@dataclass(frozen=True, slots=True)
class FileEdit:
    """An approved change to one file, computed against what the user saw."""

    path: Path
    root: Path
    """The workspace root the path lies in: the disk writer never leaves it."""
    uri: str
    base_text: str
    version: int | None
    """The open buffer's version the change was computed on; None when not open."""
    create: bool
    """The file does not exist yet."""
    changes: tuple[TextChange, ...]
    """Minimal changes (whole changed lines), in document order."""
    bom: bool = False
    """The file on disk starts with a UTF-8 byte-order mark (kept when writing)."""
    run_id: str | None = None
    """The run that makes the edit (told if the buffer later differs from ``new_text``)."""
    after: str | None = field(default=None, compare=False, repr=False)
    """The whole text after the edit when it is already made (``write_file``); otherwise
    made from ``base_text`` and ``changes`` the first time ``new_text`` is asked for."""

    @property
    def new_text(self) -> str:
        """The whole text after the edit. An edit of one line of an open 10 MB buffer never
        asks for it on its way (its diff, preview, log record and the check of the
        editor's report use the changed lines): only a writer that needs the whole text
        (the disk, ACP's ``fs/write_text_file``) or the next read of the buffer makes it."""
        after = self.after
        if after is None:
            after = apply_changes(self.base_text, self.changes)
            object.__setattr__(self, "after", after)
        return after

    def made(self, text: str) -> None:
        """``text`` is this edit's text after, made elsewhere (the caller compared it, e.g.
        an open buffer's lines joined): kept as ``new_text`` instead of making another."""
        if self.after is None:
            object.__setattr__(self, "after", text)


def apply_changes(text: str, changes: Sequence[TextChange]) -> str:
    """``text`` with ``changes`` (in document order, not overlapping) applied."""
    out: list[str] = []
    cursor = 0
    for change in changes:
        out.append(text[cursor : change.start])
        out.append(change.new_text)
        cursor = change.end
    out.append(text[cursor:])
    return "".join(out)


@dataclass(frozen=True, slots=True)
class EditOutcome:
    """What became of an edit: applied, or why not."""

    applied: bool
    failure: str | None = None
    stale: bool = False
    """The buffer changed since the edit was computed (worth recomputing once)."""
    note: str | None = None
    """How it was applied, when the model should know (e.g. written to disk by Tether)."""


@dataclass(frozen=True, slots=True)
class BufferDrift:
    """An applied edit whose buffer, once the editor reported it, differs from the approved
    text (the editor applied it over newer typing, twice, or not at all)."""

    path: Path
    first_line: int
    """1-based number (in the buffer now) of the first line shown."""
    lines: tuple[str, ...]
    """The buffer's current text of the region that differs, line by line (capped)."""
    more_lines: int = 0
    """Lines of that region left out by the cap."""

    def describe(self, shown: str) -> str:
        """The note the model reads, ``shown`` being how the path is shown to it."""
        numbered = "\n".join(
            f"{self.first_line + i:>6}\t{line}" for i, line in enumerate(self.lines)
        )
        if not numbered:
            numbered = "       (nothing: the buffer is empty)"
        more = f"\n       … {self.more_lines} more lines" if self.more_lines else ""
        return (
            f"Note: the editor reported {shown} and its buffer differs from the edit that "
            "was approved and applied (the editor applied it over newer changes, or not "
            f"exactly once). The buffer now reads:\n{numbered}{more}\n"
            f"Read {shown} again before changing it further."
        )


class Editor(Protocol):
    """What writes need from the outside world: approval, applying edits, saving."""

    async def ask_approval(
        self, request: ApproveParams, change: FileEdit | None = None
    ) -> ApproveResult | None:
        """Ask the user (the ``agent/approve`` message, whatever the editor shows); None when
        no usable answer came (that means deny). ``change`` is the proposed file change as a
        whole (an edit tool's), for an editor that shows whole files: no front reads the
        file again to show it."""
        ...

    async def apply_edit(self, edit: FileEdit, label: str) -> EditOutcome:
        """Apply an approved edit (through the editor, or to the disk)."""
        ...

    async def save_documents(self, paths: Sequence[Path]) -> Sequence[Path]:
        """Ask the editor to save these open documents; the ones saved."""
        ...

    async def delete_file(
        self, path: Path, uri: str, version: int | None, root: Path
    ) -> EditOutcome:
        """Delete a file the agent created (undo); ``root`` is its workspace folder, from
        which the disk is walked without following links."""
        ...

    def unsaved_edits(self) -> Sequence[Path]:
        """Files the agent changed that the editor has not saved yet."""
        ...


@runtime_checkable
class ReportsDrift(Protocol):
    """An editor that reports its buffers after answering an edit (LSP: ``didChange``, maybe
    late) and so can say, later, that an applied edit did not land as approved."""

    def take_drift(self, run_id: str) -> Sequence[BufferDrift]:
        """Differences found since the last call for edits of ``run_id``; each given once."""
        ...


@runtime_checkable
class ReportsDiagnostics(Protocol):
    """An editor that can tell the problems its language servers report (LSP: the client
    declared ``experimental.tether.diagnostics`` and answers ``agent/diagnostics``)."""

    async def diagnostics(self, uris: Sequence[str] | None) -> Sequence[FileDiagnostics] | None:
        """The problems of ``uris`` (None: every document the editor has problems for); a
        malformed answer is no problems. None when the editor cannot answer (it never
        declared it, or it answered with an error before): callers stop asking at once.
        Cancelling the wait withdraws the request."""
        ...


@runtime_checkable
class ReadsBuffers(Protocol):
    """Buffers that can be asked for a file's text (ACP: ``fs/read_text_file``, which
    answers with the editor's buffer, unsaved edits included, and the disk otherwise)."""

    async def read_buffer(self, path: Path) -> Buffer | None:
        """The text the editor has for ``path``; None when it has none (the disk is read)."""
        ...


@dataclass(frozen=True, slots=True)
class TerminalOutcome:
    """How a command run in the editor's terminal ended."""

    output: str
    """What it printed (stdout and stderr as the terminal shows them), maybe cut."""
    exit_code: int | None
    """None when it was killed by a signal or its status is unknown."""
    timed_out: bool = False


@runtime_checkable
class RunsCommands(Protocol):
    """An editor with terminals of its own (ACP: ``terminal/*``) that runs an allowed
    command there, so the user watches it live; used only outside the sandbox."""

    def has_terminal(self) -> bool:
        """The editor declared terminals."""
        ...

    async def run_in_terminal(
        self, command: str, cwd: Path, seconds: float, output_limit: int
    ) -> TerminalOutcome:
        """Run ``bash -c command`` in ``cwd`` and wait for it (killed after ``seconds``);
        ``OSError`` when the editor could not start it."""
        ...
