"""``edit_file`` of one line of a large open buffer works on the lines around the change.

Its uniqueness check scans the text once; its changes, diff, preview and log record are
computed from a window of whole lines (``text.window.local_pair``) and never build the
whole new text; the check of the editor's report compares only the lines that changed.
Each fast path is compared with the computation on whole texts, on random texts with 1- to
4-byte characters, lone surrogates, repeated lines and every line ending mixed.
"""

from __future__ import annotations

import hashlib
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from tests.hashed import every_text_hashed_in_pieces
from tether.host import Buffer, FileEdit, MemoryBuffers, TextChange, apply_changes
from tether.lsp.documents import LineDocument
from tether.session import records
from tether.session.records import EditWindow
from tether.text import span as textspan
from tether.text.edit import (
    minimal_changes,
    minimal_changes_of,
    position_at,
    unified_diff,
    unified_diff_of,
)
from tether.text.proposed import proposed_window, proposed_window_of
from tether.tools.base import ToolDeps
from tether.tools.edits import EditFile, EditFileArgs, replacement
from tether.workspace.folders import Workspace

PIECES = st.sampled_from(
    ["a", "é", "🌍", "\n", "\r\n", "\r", "ab\n", "ab\n", "ab\n", "x\r\n", "\u2028", "\ud800"]
)
TEXT = st.lists(PIECES, max_size=120).map("".join)
SHORT = st.lists(PIECES, max_size=8).map("".join)


@st.composite
def replaced(draw: st.DrawFn) -> tuple[str, tuple[TextChange, ...]]:
    """A text and one to three replacements in it, in order, not overlapping."""
    base = draw(TEXT)
    cuts = sorted(draw(st.lists(st.integers(0, len(base)), min_size=2, max_size=6)))
    changes = []
    for start, end in zip(cuts[::2], cuts[1::2], strict=False):
        if changes and start < changes[-1].end:
            continue
        changes.append(TextChange(start, end, draw(SHORT)))
    return base, tuple(changes)


def _whole_and_window(base: str, raw: tuple[TextChange, ...]) -> tuple[str, tuple[TextChange, ...]]:
    new = apply_changes(base, raw)
    textspan._last = None
    whole = minimal_changes(base, new)
    textspan._last = None
    assert minimal_changes_of(base, raw) == whole
    return new, whole


@settings(max_examples=600)
@given(replaced())
def test_the_window_gives_the_changes_diff_and_preview_of_the_whole_texts(
    case: tuple[str, tuple[TextChange, ...]],
) -> None:
    base, raw = case
    new, changes = _whole_and_window(base, raw)
    if not changes:
        return
    textspan._last = None
    assert unified_diff_of(base, changes, "f") == unified_diff(base, new, "f")
    for encoding in ("utf-8", "utf-16", "utf-32"):
        textspan._last = None
        expected = proposed_window(base, new, changes, encoding)
        textspan._last = None
        assert proposed_window_of(base, changes, encoding) == expected


@settings(max_examples=400)
@given(replaced())
def test_the_log_record_from_the_window_is_the_one_from_the_whole_texts(
    case: tuple[str, tuple[TextChange, ...]],
) -> None:
    base, raw = case
    new, changes = _whole_and_window(base, raw)
    if not changes:
        return
    with every_text_hashed_in_pieces():
        edit = _edit(base, changes)
        window = EditWindow.of_edit(edit)
        if "\r" not in base.replace("\r\n", ""):
            # Not made for the record (with lone "\r"s the record's context, cut at "\n"
            # only, may reach beyond the window: then it is made, as before).
            assert edit.after is None
        records._hashed.clear()
        assert window == EditWindow.between(base, new)
        # The hash of the text after, once made, is the one remembered (from the pieces).
        made = edit.new_text
        records._hashed[:] = [e for e in records._hashed if e.text is None]
        assert records.text_hash(made) == window.after_sha256


@settings(max_examples=300)
@given(replaced())
def test_the_text_after_is_named_and_sized_from_the_pieces_of_the_text_before(
    case: tuple[str, tuple[TextChange, ...]],
) -> None:
    """What a checkpoint names an edit's text after by (its sha256 and its size in UTF-8)
    comes from what the log remembered of the text before, hashed on from the change."""
    base, raw = case
    _, changes = _whole_and_window(base, raw)
    if not changes or "\r" in base.replace("\r\n", ""):
        return
    with every_text_hashed_in_pieces():
        edit = _edit(base, changes)
        EditWindow.of_edit(edit)
        assert edit.after is None  # hashed on from the text before, not made
        made = edit.new_text
        assert any(e.edit is edit for e in records._hashed)  # what answers below
        data = made.encode("utf-8", "surrogatepass")
        assert records.text_digest(made) == (hashlib.sha256(data).hexdigest(), len(data))


def _edit(base: str, changes: tuple[TextChange, ...], version: int | None = 1) -> FileEdit:
    path = Path("/w/f.txt")
    return FileEdit(path, Path("/w"), path.as_uri(), base, version, False, changes)


def _change(text: str, start: int, end: int, new: str) -> types.TextDocumentContentChangePartial:
    (sl, sc), (el, ec) = position_at(text, start, "utf-16"), position_at(text, end, "utf-16")
    return types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec)
        ),
        text=new,
    )


@settings(max_examples=600)
@given(replaced(), st.sampled_from(["as sent", "not at all", "twice", "and typing"]), st.data())
def test_the_report_checked_by_its_changed_lines_agrees_with_the_whole_text(
    case: tuple[str, tuple[TextChange, ...]], how: str, data: st.DataObject
) -> None:
    base, raw = case
    new, changes = _whole_and_window(base, raw)
    if not changes:
        return
    document = LineDocument("file:///w/f.txt", base, version=1)
    read = document.source  # the edit's text before, read at version 1
    edit = _edit(read, changes)
    if how != "not at all":
        for change in reversed(changes):  # as an editor applies a TextEdit list
            document.apply_change(_change(read, change.start, change.end, change.new_text))
    if how == "twice":
        for change in reversed(changes):
            document.apply_change(_change(read, change.start, change.end, change.new_text))
    if how == "and typing":
        now = "".join(document.lines)
        at = data.draw(st.integers(0, len(now)))
        document.apply_change(_change(now, at, at, data.draw(SHORT)))
    document.version = 2
    held = document.holds_edit(edit)
    assert held is None or held == ("".join(document.lines) == new)
    if held:
        document.keep_edit(edit)
        assert document.source == new


def test_a_document_read_at_another_version_or_text_is_compared_as_a_whole() -> None:
    document = LineDocument("file:///w/f.txt", "a\nb\nc\n", version=1)
    read = document.source
    change = TextChange(2, 4, "B\n")
    assert document.holds_edit(_edit(read, (change,), version=0)) is None
    assert document.holds_edit(_edit("a\nb\nc\n"[:5] + "\n", (change,))) is None
    assert document.holds_edit(_edit(read, (change,))) is False  # not applied yet


class Scanned(str):
    """A text that counts the characters its searches look at."""

    scanned = 0

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:
        at = str.find(self, sub, start, end)
        first = 0 if start is None else start
        stop = len(self) if end is None else end
        Scanned.scanned += (stop if at < 0 else at + len(sub)) - first
        return at

    def count(self, sub: Any, start: Any = None, end: Any = None) -> int:
        Scanned.scanned += (len(self) if end is None else end) - (start or 0)
        return str.count(self, sub, start, end)

    def replace(self, old: Any, new: Any, count: Any = -1) -> str:
        Scanned.scanned += len(self)
        return str.replace(self, old, new, count)


def _big(lines: int, astral: bool = False) -> str:
    mark = "🌍" if astral else "é"
    return "".join(f"{i:07d} the quick {mark} brown fox jumps over\n" for i in range(lines))


def test_a_unique_old_text_is_found_in_one_scan_of_the_text() -> None:
    text = _big(50_000)
    line = f"{40_000:07d} the quick é brown fox jumps over\n"
    Scanned.scanned = 0
    change, count = replacement(
        Scanned(text), EditFileArgs(path="f", old_text=line, new_text="changed\n"), "f"
    )
    assert count == 1 and change == TextChange(40_000 * len(line), 40_001 * len(line), "changed\n")
    assert Scanned.scanned <= len(text) + 3 * len(line)  # the hit and the first line end


async def _propose(tmp_path: Path, text: str, line: str) -> FileEdit:
    path = (tmp_path / "big.txt").resolve()
    buffers = MemoryBuffers([Buffer(path, path.as_uri(), text, 7)])
    deps = ToolDeps(Workspace([tmp_path], buffers), "r")
    args = EditFileArgs(path="big.txt", old_text=line, new_text=line.rstrip("\n") + " # edited\n")
    proposal = await EditFile().propose(args, deps)
    edit: FileEdit = proposal.payload[0]
    return edit


async def test_an_edit_of_one_line_of_a_large_buffer_never_makes_its_whole_new_text(
    tmp_path: Path,
) -> None:
    for astral in (False, True):
        text = _big(40_000, astral)  # 1.7 MB of characters, 6.8 MB at 4 bytes each
        line = text.splitlines(keepends=True)[30_000]
        tracemalloc.start()
        try:
            edit = await _propose(tmp_path, text, line)  # the diff and the preview
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < sys.getsizeof(text) // 4  # no whole copy (a window of lines only)
        [change] = edit.changes
        assert text[change.start : change.end] == line
        # The log record, the editor's report and its check: still no whole text.
        document = LineDocument(edit.uri, text, version=7)
        read = document.source
        edit = FileEdit(edit.path, edit.root, edit.uri, read, 7, False, edit.changes, run_id="r")
        tracemalloc.start()
        try:
            window = EditWindow.of_edit(edit)
            document.apply_change(_change(read, change.start, change.end, change.new_text))
            document.version = 8
            held = document.holds_edit(edit)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert held is True and edit.after is None
        assert peak < sys.getsizeof(text) // 4  # hashed a piece at a time
        document.keep_edit(edit)
        expected = text.replace(line, line.rstrip("\n") + " # edited\n", 1)
        assert document.source == expected
        assert window == EditWindow.between(text, expected)
