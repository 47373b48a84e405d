"""Finding the changed lines of two texts without splitting them, and diffs built on it.

Lines are LSP's (``tests/lsp_text``): a form feed or ``\\u2028`` is inside a line.
"""

from __future__ import annotations

import difflib
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from tests import lsp_text as ref
from tether.text.edit import apply_changes, minimal_changes, unified_diff
from tether.text.span import (
    changed_span,
    common_prefix,
    common_suffix,
    count_lines,
    lines_before,
)

LINES = st.lists(
    st.sampled_from(
        ["a\n", "b\n", "é🌍\n", "\n", "c", "x\r\n", "\r", "y\f", "z\u2028", "\r\n", "w\r"]
    ),
    max_size=12,
)


def old_unified_diff(old: str, new: str, path: str) -> str:
    """The diff as it was made before: difflib over every line of both texts."""
    out = []
    for line in difflib.unified_diff(
        ref.split(old, keepends=True), ref.split(new, keepends=True), f"a/{path}", f"b/{path}"
    ):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line.replace("\r\n", "\n"))
    return "".join(out)


@settings(max_examples=400)
@given(LINES, LINES)
def test_the_span_is_whole_lines_with_equal_text_around(old: list[str], new: list[str]) -> None:
    before, after = "".join(old), "".join(new)
    span = changed_span(before, after)
    assert before[: span.start] == after[: span.start]
    assert before[span.old_end :] == after[span.new_end :]
    for text, end in ((before, span.old_end), (after, span.new_end)):
        parts = (text[: span.start], text[span.start : end], text[end:])
        assert sum((ref.split(p, True) for p in parts), []) == ref.split(text, True)
    assert lines_before(before, span.start) == len(ref.split(before[: span.start], False))


@given(LINES)
def test_lines_are_counted_as_lsp_cuts_them(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert count_lines(text) == len(ref.split(text, False))


@given(LINES, LINES)
def test_changes_rebuild_the_new_text(old: list[str], new: list[str]) -> None:
    before, after = "".join(old), "".join(new)
    assert apply_changes(before, minimal_changes(before, after)) == after


@given(st.text(max_size=300), st.text(max_size=300), st.text(max_size=50))
def test_prefix_and_suffix_lengths(a: str, b: str, shared: str) -> None:
    left, right = shared + a, shared + b
    assert common_prefix(left, right) == len(os.path.commonprefix([left, right]))
    left, right = a + shared, b + shared
    expected = 0
    while expected < min(len(left), len(right)) and left[-1 - expected] == right[-1 - expected]:
        expected += 1
    assert common_suffix(left, right, min(len(left), len(right))) == expected


def test_large_texts_across_block_boundaries() -> None:
    base = "".join(f"line {i} é\n" for i in range(100_000))
    for at in (0, 4095, 4096, 65_537, len(base) - 1):
        changed = base[:at] + "#" + base[at + 1 :]
        assert common_prefix(base, changed) == at
        assert common_suffix(base, changed, len(base)) == len(base) - at - 1


def test_a_one_line_edit_in_a_large_file_gives_the_same_diff_as_before() -> None:
    old = "".join(f"line {i}\n" for i in range(5000))
    for target in ("line 0\n", "line 2500\n", "line 4999\n"):
        new = old.replace(target, "CHANGED\n")
        assert unified_diff(old, new, "f.py") == old_unified_diff(old, new, "f.py")
        [change] = minimal_changes(old, new)
        assert old[change.start : change.end] == target and change.new_text == "CHANGED\n"


@settings(max_examples=200)
@given(st.lists(st.integers(0, 40), min_size=20, max_size=60, unique=True), st.data())
def test_a_block_of_distinct_lines_diffs_as_difflib_does(
    numbers: list[int], data: st.DataObject
) -> None:
    old_lines = [f"{n}\n" for n in numbers]
    start = data.draw(st.integers(0, len(old_lines)))
    end = data.draw(st.integers(start, min(len(old_lines), start + 5)))
    inserted = [f"new {i}\n" for i in range(data.draw(st.integers(0, 4)))]
    old = "".join(old_lines)
    new = "".join(old_lines[:start] + inserted + old_lines[end:])
    assert unified_diff(old, new, "f") == old_unified_diff(old, new, "f")
