"""Minimal edits, line endings, diffs and positions; applying LSP edits on disk.

Edits are checked by applying them as LSP says (``tests/lsp_text``), not with helpers that
share the code's idea of a line: lone ``\\r`` line ends are where that used to go wrong.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests import lsp_text as ref
from tether.text.edit import (
    apply_changes,
    line_ending,
    line_numbers_of,
    minimal_changes,
    position_at,
    range_at,
    similar_lines,
    to_file_endings,
    unified_diff,
    uses_crlf,
)
from tether.text.model import offset_at

LINES = st.lists(
    st.sampled_from(
        ["a\n", "b\n", "é🌍\n", "\n", "c", "x\r\n", "\r", "y\r", "\x0c\n", "z\u2028w\n"]
    ),
    max_size=8,
)


def lsp_edits(text: str, new: str, encoding: str = "utf-16") -> list[dict[str, Any]]:
    """The ``TextEdit``s the editor seam sends for ``minimal_changes`` (via ``range_at``)."""
    edits = []
    for change in minimal_changes(text, new):
        (sl, sc), (el, ec) = range_at(text, change.start, change.end, encoding)
        edits.append(
            {
                "range": {
                    "start": {"line": sl, "character": sc},
                    "end": {"line": el, "character": ec},
                },
                "newText": change.new_text,
            }
        )
    return edits


@given(LINES, LINES)
def test_minimal_changes_turn_old_into_new(old: list[str], new: list[str]) -> None:
    before, after = "".join(old), "".join(new)
    changes = minimal_changes(before, after)
    assert apply_changes(before, changes) == after
    assert all(c.start <= c.end for c in changes)


@given(LINES, LINES, st.sampled_from(ref.ENCODINGS))
def test_changes_survive_the_trip_through_lsp_positions(
    old: list[str], new: list[str], encoding: str
) -> None:
    before, after = "".join(old), "".join(new)
    edits = lsp_edits(before, after, encoding)
    assert ref.apply_edits(before, edits, encoding) == after  # as an editor applies them


def test_an_edit_after_a_lone_cr_lands_on_its_own_line() -> None:
    # Issue 11 item 2: the range used to count "\n" only, so "c" was written over line "b".
    text = "a = 1\rb = 2\nc = 3\n"
    new = text.replace("c = 3", "c = 4")
    edits = lsp_edits(text, new)
    assert [e["range"]["start"]["line"] for e in edits] == [2]
    assert ref.apply_edits(text, edits) == "a = 1\rb = 2\nc = 4\n"
    assert line_numbers_of(text, "c = 3") == [3]


def test_breaks_lsp_does_not_know_are_inside_a_line() -> None:
    old, new = "x\u2028y\nkeep\n", "x\u2028z\nkeep\n"
    [change] = minimal_changes(old, new)
    assert (change.start, change.end, change.new_text) == (0, 4, "x\u2028z\n")
    diff = unified_diff("a\x0cb\nc\n", "a\x0cb\nd\n", "f")
    assert diff.endswith("@@ -1,2 +1,2 @@\n a\x0cb\n-c\n+d\n")
    assert similar_lines("one\x0ctwo\n", "one\x0ctwx") == [(1, "one\x0ctwo")]


def test_a_lone_cr_file_diffs_with_its_line_ends() -> None:
    diff = unified_diff("a\rb\rc\r", "a\rB\rc\r", "f")
    assert diff.endswith("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    assert "No newline" not in diff and "\r" not in diff


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
    assert offset_at(text, 0, 3) == 2  # after the globe (two UTF-16 units)


def test_line_endings() -> None:
    assert uses_crlf("a\r\nb\r\n") and not uses_crlf("a\nb\r\n") and not uses_crlf("no newline")
    assert not uses_crlf("a\rb\r\n")  # the first line end is a lone "\r"
    assert to_file_endings("a\nb\n", True) == "a\r\nb\r\n"
    assert to_file_endings("a\r\nb\n", True) == "a\r\nb\r\n"
    assert to_file_endings("a\nb\n", False) == "a\nb\n"
    assert [line_ending(t) for t in ("a\rb\n", "a\r\n", "a\nb\r", "a")] == [
        "\r",
        "\r\n",
        "\n",
        "\n",
    ]
    assert to_file_endings("a\nb\n", line_ending("x\ry\r")) == "a\rb\r"


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
