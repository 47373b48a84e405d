"""``edit_file`` and ``write_file``: changes computed against what the user sees.

Both need approval: ``propose`` computes the change (and its diff) against the open buffer
or the disk, ``perform`` applies it through the editor, once. An edit the editor did not
apply because the buffer changed since (its version moved) is recomputed once against the
new text (a rebase) when ``old_text`` still matches; otherwise the model is told to read
the file again. An edit the editor said it applied is never sent again. Nothing the user
typed is lost.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import anyio.to_thread
from pydantic import Field

from tether_protocol import DiffPreview

from ..diagnostics.watch import EditProblems
from ..errors import ToolError
from ..host import EditOutcome, FileEdit, TextChange
from ..text.counts import plural
from ..text.edit import (
    line_ending,
    minimal_changes,
    minimal_changes_of,
    occurrences_of,
    similar_lines,
    to_file_endings,
    unified_diff,
    unified_diff_of,
)
from ..text.proposed import proposed_window, proposed_window_of, revised_text, window_text
from ..text.span import count_lines
from ..workspace.folders import TextSnapshot, Workspace
from ..writes.disk import has_bom
from ..writes.locks import path_lock
from .base import Proposal, Tool, ToolArgs, ToolDeps, ToolResult, path_of


class EditFileArgs(ToolArgs):
    """Arguments of ``edit_file``."""

    path: str = Field(description="The file to change, relative to the workspace root.")
    old_text: str = Field(
        min_length=1,
        description="The exact text to replace, as read_file shows it (without line numbers); "
        "it must occur exactly once unless replace_all is true. Include surrounding lines "
        "to make it unique.",
    )
    new_text: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class WriteFileArgs(ToolArgs):
    """Arguments of ``write_file``."""

    path: str = Field(description="The file to create or overwrite, relative to the root.")
    content: str = Field(description="The whole new content of the file.")


async def _current(ws: Workspace, path: Path) -> tuple[TextSnapshot, bool]:
    snapshot = await ws.read_text(path)
    bom = False if snapshot.from_buffer else await anyio.to_thread.run_sync(has_bom, path)
    return snapshot, bom


def _file_edit(
    ws: Workspace,
    path: Path,
    snapshot: TextSnapshot | None,
    after: str | TextChange,
    bom: bool,
) -> FileEdit:
    """The edit turning the snapshot into ``after``: a whole new text, or one replacement
    (whose changes and whole new text are made from the lines around it, see
    ``window.local_pair``: the new text only if a writer asks)."""
    base = snapshot.text if snapshot is not None else ""
    if isinstance(after, TextChange):
        changes, new_text = minimal_changes_of(base, (after,)), None
    else:
        changes, new_text = minimal_changes(base, after), after
    return FileEdit(
        path=path,
        root=ws.root_of(path) or ws.root,
        uri=ws.uri_for(path),
        base_text=base,
        version=snapshot.version if snapshot is not None and snapshot.from_buffer else None,
        create=snapshot is None,
        changes=changes,
        bom=bom,
        after=new_text,
    )


def _preview(ws: Workspace, edit: FileEdit, diff: str) -> DiffPreview:
    """The preview the user is shown, its positions in the editor's negotiated encoding."""
    if edit.after is None:  # from the changed lines; the whole new text is not made
        window = proposed_window_of(edit.base_text, edit.changes, ws.position_encoding)
    else:
        window = proposed_window(edit.base_text, edit.after, edit.changes, ws.position_encoding)
    return DiffPreview(uri=edit.uri, diff=diff, proposed=window)


def _diff(edit: FileEdit, shown: str) -> str:
    if edit.after is None:  # from the changed lines; the whole new text is not made
        return unified_diff_of(edit.base_text, edit.changes, shown)
    return unified_diff(edit.base_text, edit.after, shown, create=edit.create)


def _model_text(text: str) -> str:
    """``text`` with "\n" line ends, as the model writes and reads it."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _revised(edit: FileEdit, edited_window: str) -> tuple[FileEdit, str] | None:
    """``edit`` with the user's text for its window instead of the proposed one, and that
    text in the file's line ends; None when the user left the window as proposed.
    ``ToolError`` when it leaves the file unchanged."""
    # Like the model's text, the user's keeps the file's line ends (an editor may send "\n").
    edited = to_file_endings(edited_window, line_ending(edit.base_text))
    if edited == window_text(edit.base_text, edit.new_text)[1]:
        return None
    new_text = revised_text(edit.base_text, edit.new_text, edited)
    if new_text == edit.base_text:
        raise ToolError("the user's edited text leaves the file as it is; nothing was changed")
    changes = minimal_changes(edit.base_text, new_text)
    return replace(edit, after=new_text, changes=changes), edited


def _stats(edit: FileEdit) -> str:
    # Only the changed windows are counted: a whole 10 MB file would cost ~20 ms a count.
    removed = sum(count_lines(edit.base_text[c.start : c.end]) for c in edit.changes)
    added = sum(count_lines(c.new_text) for c in edit.changes)
    return f"+{added} -{removed} lines"


async def _apply(deps: ToolDeps, edit: FileEdit, label: str, problems: EditProblems) -> EditOutcome:
    """The one place edits are sent: logged first (a crash right after the editor applied
    it must not lose it for undo), then applied once — an edit the editor says it applied is
    never sent again (a late or differing buffer report reaches the run as a note, see
    ``ReportsDrift``) — then its outcome logged. The file's problems are asked for just
    before, to tell the model afterwards what the edit added or fixed."""
    if deps.editor is None:
        raise ToolError("no editor to apply the change through")
    edit = replace(edit, run_id=deps.run_id)
    await problems.take_before(edit.uri)
    entry = None if deps.journal is None else await deps.journal.intended(edit)
    outcome = await deps.editor.apply_edit(edit, label)
    if deps.journal is not None and entry is not None:
        deps.journal.outcome(entry, outcome.applied)
    return outcome


def _failure(outcome: EditOutcome) -> str:
    return outcome.failure or "the editor did not apply it"


def _noted(outcome: EditOutcome) -> str:
    return f" ({outcome.note})" if outcome.note else ""


async def _with_problems(result: ToolResult, problems: EditProblems) -> ToolResult:
    """``result`` plus what the applied edit added to or fixed in the editor's problems
    (waited for outside the file's lock: other edits of it need not wait)."""
    if not result.ok or not result.edits:
        return result
    note = await problems.note()
    return replace(result, output=f"{result.output}\n{note}") if note else result


def replacement(text: str, args: EditFileArgs, shown: str) -> tuple[TextChange | str, int]:
    """The edit's one replacement in ``text`` (a ``TextChange``), or for ``replace_all``
    the whole text after it, and how many occurrences changed; ``ToolError`` when it
    cannot be made. One scan of the text for one occurrence: the first found, then the
    rest searched for a second; no line counted unless an error names lines."""
    ending = line_ending(text)  # the model writes "\n"; CRLF and CR files keep theirs
    old, new = to_file_endings(args.old_text, ending), to_file_endings(args.new_text, ending)
    if old == new:
        raise ToolError("old_text and new_text are the same; there is nothing to change")
    first = text.find(old)
    if first < 0:
        message = f"old_text was not found in {shown}."
        near = similar_lines(text, args.old_text)
        if near:
            message += " The most similar lines are:\n" + "\n".join(
                f"{number:>6}\t{line}" for number, line in near
            )
        raise ToolError(message + "\nRead the file again and copy the text exactly.")
    if text.find(old, first + 1) < 0:
        return TextChange(first, first + len(old), new), 1
    lines = [number for number, _ in occurrences_of(text, old)]
    if not args.replace_all:
        where = ", ".join(str(n) for n in lines[:20])
        raise ToolError(
            f"old_text occurs {len(lines)} times in {shown} (at lines {where}); include more "
            "surrounding lines to make it unique, or set replace_all to true"
        )
    return text.replace(old, new), len(lines)


class EditFile(Tool[EditFileArgs]):
    """Replaces text in a file, as the user sees it."""

    name: ClassVar[str] = "edit_file"
    kind: ClassVar[str] = "edit"

    def title(self, arguments: dict[str, Any]) -> str:
        return f"Edit {path_of(arguments)}"

    description: ClassVar[str] = (
        "Change a file by replacing old_text with new_text. old_text must match the "
        "current file exactly (read it first) and occur once unless replace_all is set. "
        "The user sees a diff and may deny or change the edit."
    )
    args_model: ClassVar[type[ToolArgs]] = EditFileArgs
    needs_approval: ClassVar[bool] = True

    async def _edit(self, args: EditFileArgs, ws: Workspace) -> tuple[FileEdit, int]:
        path = ws.resolve(args.path)
        shown = ws.display(path)
        try:
            snapshot, bom = await _current(ws, path)
        except ToolError as exc:
            if not path.exists():
                raise ToolError(f"{shown} does not exist; use write_file to create it") from exc
            raise
        after, count = replacement(snapshot.text, args, shown)
        return _file_edit(ws, path, snapshot, after, bom), count

    async def propose(self, args: EditFileArgs, deps: ToolDeps) -> Proposal:
        ws = deps.workspace
        edit, count = await self._edit(args, ws)
        shown = ws.display(edit.path)
        preview = _preview(ws, edit, _diff(edit, shown))
        return Proposal(f"Edit {shown}", preview, (edit, count), change=edit)

    def revise(
        self, args: EditFileArgs, proposal: Proposal, edited_text: str
    ) -> tuple[EditFileArgs, Proposal] | None:
        """The call as the user changed it: the proposed window's old text replaced by the
        user's ``edited_text`` (also what a rebase re-finds); None when unchanged."""
        edit: FileEdit = proposal.payload[0]
        revised = _revised(edit, edited_text)
        if revised is None:
            return None
        old_window = window_text(edit.base_text, edit.new_text)[0]
        changed = EditFileArgs(
            path=args.path, old_text=_model_text(old_window), new_text=_model_text(revised[1])
        )
        return changed, replace(proposal, payload=(revised[0], 1))

    async def perform(self, args: EditFileArgs, proposal: Proposal, deps: ToolDeps) -> ToolResult:
        edit: FileEdit = proposal.payload[0]
        problems = EditProblems(deps.problems)
        async with path_lock(edit.path):  # edits of one file, one at a time
            result = await self._perform(args, proposal, deps, problems)
        return await _with_problems(result, problems)

    async def _perform(
        self, args: EditFileArgs, proposal: Proposal, deps: ToolDeps, problems: EditProblems
    ) -> ToolResult:
        edit, count = proposal.payload
        shown = deps.workspace.display(edit.path)
        outcome = await _apply(deps, edit, f"Tether: edit {shown}", problems)
        if not outcome.applied and outcome.stale:
            try:  # the user typed meanwhile: the same change, once, on the text as it is now
                edit, count = await self._edit(args, deps.workspace)
            except ToolError as exc:
                return ToolResult.failure(
                    f"The edit was not applied: {shown} changed since you read it and the "
                    f"change no longer fits ({exc}). Read the file again."
                )
            outcome = await _apply(deps, edit, f"Tether: edit {shown}", problems)
        if not outcome.applied:
            return ToolResult.failure(
                f"The edit was not applied: {_failure(outcome)}. Nothing was changed; read "
                f"{shown} again before retrying."
            )
        times = "1 occurrence" if count == 1 else f"{count} occurrences"
        return ToolResult(
            ok=True,
            output=f"Edited {shown}{_noted(outcome)}: {times} replaced ({_stats(edit)}).",
            edits=(edit,),
        )


class WriteFile(Tool[WriteFileArgs]):
    """Creates a file or replaces its whole content."""

    name: ClassVar[str] = "write_file"
    kind: ClassVar[str] = "edit"

    def title(self, arguments: dict[str, Any]) -> str:
        return f"Write {path_of(arguments)}"

    description: ClassVar[str] = (
        "Create a file, or overwrite one with new content. Prefer edit_file for changes to "
        "an existing file. The user sees a diff and may deny or change it."
    )
    args_model: ClassVar[type[ToolArgs]] = WriteFileArgs
    needs_approval: ClassVar[bool] = True

    async def _edit(self, args: WriteFileArgs, ws: Workspace) -> FileEdit:
        path = ws.resolve(args.path)
        shown = ws.display(path)
        if path.is_dir():
            raise ToolError(f"{shown} is a folder")
        snapshot: TextSnapshot | None = None
        bom = False
        if ws.buffers.get(path) is not None or path.exists():
            snapshot, bom = await _current(ws, path)  # a binary file is refused here
        content = args.content
        if snapshot is not None:
            ending = line_ending(snapshot.text)
            content = to_file_endings(content, ending)
            if snapshot.text.endswith(("\n", "\r")) and content and not content.endswith(ending):
                content += ending
        return _file_edit(ws, path, snapshot, content, bom)

    async def propose(self, args: WriteFileArgs, deps: ToolDeps) -> Proposal:
        edit = await self._edit(args, deps.workspace)
        shown = deps.workspace.display(edit.path)
        diff = _diff(edit, shown)
        verb = "Create" if edit.create else "Overwrite"
        return Proposal(f"{verb} {shown}", _preview(deps.workspace, edit, diff), edit, change=edit)

    def revise(
        self, args: WriteFileArgs, proposal: Proposal, edited_text: str
    ) -> tuple[WriteFileArgs, Proposal] | None:
        """The call as the user changed it: the whole content with the user's
        ``edited_text`` in the proposed window; None when unchanged."""
        edit: FileEdit = proposal.payload
        revised = _revised(edit, edited_text)
        if revised is None:
            return None
        changed = WriteFileArgs(path=args.path, content=_model_text(revised[0].new_text))
        return changed, replace(proposal, payload=revised[0])

    async def perform(self, args: WriteFileArgs, proposal: Proposal, deps: ToolDeps) -> ToolResult:
        edit: FileEdit = proposal.payload
        problems = EditProblems(deps.problems)
        async with path_lock(edit.path):  # edits of one file, one at a time
            result = await self._perform(args, proposal, deps, problems)
        return await _with_problems(result, problems)

    async def _perform(
        self, args: WriteFileArgs, proposal: Proposal, deps: ToolDeps, problems: EditProblems
    ) -> ToolResult:
        edit: FileEdit = proposal.payload
        shown = deps.workspace.display(edit.path)
        outcome = await _apply(deps, edit, f"Tether: write {shown}", problems)
        if not outcome.applied:  # no rebase: overwriting would throw away what the user typed
            hint = " It changed since you read it; read it again." if outcome.stale else ""
            return ToolResult.failure(f"{shown} was not written: {_failure(outcome)}.{hint}")
        verb = "Created" if edit.create else "Wrote"
        lines = count_lines(edit.new_text)
        return ToolResult(
            ok=True,
            output=f"{verb} {shown}{_noted(outcome)} ({plural(lines, 'line')}).",
            edits=(edit,),
        )
