"""A long document's text joined from blocks of lines: always the lines joined."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from tether.lsp.blocks import JoinedBlocks
from tether.lsp.documents import LineDocument

LINES = st.lists(st.sampled_from(["a\n", "bc\r\n", "é\r", "🌍\n", "x", "\n"]), max_size=6)


@st.composite
def histories(draw: st.DrawFn) -> tuple[int, list[str], list[tuple[str, int, int, list[str]]]]:
    size = draw(st.integers(1, 3))
    lines = draw(st.lists(st.sampled_from(["a\n", "b\n", "c\n"]), min_size=0, max_size=40))
    count = len(lines)
    steps = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["replace", "replace", "replace", "join", "reset"]))
        first = draw(st.integers(0, count))
        last = draw(st.integers(first, count))
        new = draw(LINES)
        steps.append((kind, first, last, new))
        if kind == "replace":
            count += len(new) - (last - first)
    return size, lines, steps


@settings(max_examples=500, deadline=None)
@given(histories())
def test_the_blocks_joined_are_the_lines_joined(
    case: tuple[int, list[str], list[tuple[str, int, int, list[str]]]],
) -> None:
    size, lines, steps = case
    blocks = JoinedBlocks(block_lines=size)
    assert blocks.join(lines) == "".join(lines)
    for kind, first, last, new in steps:
        if kind == "replace":
            lines[first:last] = new
            blocks.replaced(first, last, len(new))
        elif kind == "reset":
            blocks.reset()
        assert blocks.join(lines) == "".join(lines)


def test_a_long_document_edited_line_by_line_reads_as_its_lines() -> None:
    """A document of 20,000 lines (blocks kept), changed as an editor does: within a line,
    across lines, inserting and deleting lines; its text is the naive result each time."""
    rng = random.Random(7)
    text = "".join(f"{n:05d} line é 🌍\n" for n in range(20_000))
    doc = LineDocument("file:///big.txt", text, 1)
    assert doc.source == text
    for step in range(60):
        lines = text.splitlines(keepends=True)
        first = rng.randrange(len(lines))
        last = min(len(lines), first + rng.choice([0, 0, 1, 3, 2500]))
        new = rng.choice(["", "x", "new line\n", "two\nlines\n", "tail"])
        start = sum(map(len, lines[:first])) if first else 0
        end = start + sum(map(len, lines[first:last]))
        doc.apply_change(_change(first, 0, last, 0, new))
        text = text[:start] + new + text[end:]
        if step % 3 == 0 or step > 50:
            assert doc.source == text, step


def _change(
    sl: int, sc: int, el: int, ec: int, text: str
) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec)
        ),
        text=text,
    )
