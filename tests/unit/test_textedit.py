"""Minimal edits, line endings, diffs and positions; applying LSP edits on disk."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tether.client.workspace_edit import apply_text_edits, offset_of
from tether.textedit import (
    apply_changes,
    minimal_changes,
    position_at,
    similar_lines,
    to_file_endings,
    unified_diff,
    uses_crlf,
)

LINES = st.lists(st.sampled_from(["a\n", "b\n", "é🌍\n", "\n", "c", "x\r\n"]), max_size=8)


@given(LINES, LINES)
def test_minimal_changes_turn_old_into_new(old: list[str], new: list[str]) -> None:
    before, after = "".join(old), "".join(new)
    changes = minimal_changes(before, after)
    assert apply_changes(before, changes) == after
    assert all(c.start <= c.end for c in changes)


@given(LINES, LINES)
def test_changes_survive_the_trip_through_lsp_positions(old: list[str], new: list[str]) -> None:
    before, after = "".join(old), "".join(new)
    edits = []
    for change in minimal_changes(before, after):
        (sl, sc), (el, ec) = position_at(before, change.start), position_at(before, change.end)
        edits.append(
            {
                "range": {
                    "start": {"line": sl, "character": sc},
                    "end": {"line": el, "character": ec},
                },
                "newText": change.new_text,
            }
        )
    assert apply_text_edits(before, edits) == after


def test_only_changed_lines_are_sent() -> None:
    old = "".join(f"line {i}\n" for i in range(1000))
    new = old.replace("line 500\n", "LINE 500\n")
    [change] = minimal_changes(old, new)
    assert old[change.start : change.end] == "line 500\n" and change.new_text == "LINE 500\n"


def test_positions_in_each_encoding() -> None:
    text = "a🌍é\nxyz"
    offset = text.index("\n")
    assert position_at(text, offset, "utf-16") == (0, 4)
    assert position_at(text, offset, "utf-8") == (0, 7)
    assert position_at(text, offset, "utf-32") == (0, 3)
    assert position_at(text, len(text)) == (1, 3)
    assert offset_of(text, 0, 3) == 2  # after the globe (two UTF-16 units)


def test_line_endings() -> None:
    assert uses_crlf("a\r\nb\r\n") and not uses_crlf("a\nb\r\n") and not uses_crlf("no newline")
    assert to_file_endings("a\nb\n", True) == "a\r\nb\r\n"
    assert to_file_endings("a\r\nb\n", True) == "a\r\nb\r\n"
    assert to_file_endings("a\nb\n", False) == "a\nb\n"


def test_unified_diff_headers() -> None:
    diff = unified_diff("a\nb\n", "a\nc\n", "src/x.py")
    assert diff.splitlines()[:2] == ["--- a/src/x.py", "+++ b/src/x.py"]
    assert "-b\n+c\n" in diff
    created = unified_diff("", "new\n", "n.py", create=True)
    assert created.startswith("--- /dev/null\n+++ b/n.py\n")
    assert unified_diff("a", "b", "f").endswith("+b\n\\ No newline at end of file\n")


def test_similar_lines_help_the_model() -> None:
    text = "def total_value(self):\n    total = 0\n    return total\n"
    assert similar_lines(text, "def total_values(self):")[0] == (1, "def total_value(self):")
