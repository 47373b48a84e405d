"""The text model against an independent reading of the LSP specification (``tests/lsp_text``).

Texts mix every LSP line end (``\\n``, ``\\r\\n``, a lone ``\\r``, a ``\\r`` last, a ``\\r``
with a ``\\n`` later), the breaks ``str.splitlines`` knows and LSP does not, multi-byte and
astral characters, empty lines and the empty text; every conversion is checked in UTF-8,
UTF-16 and UTF-32.
"""

from __future__ import annotations

import io
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests import lsp_text as ref
from tether.client.approver import colour_diff
from tether.client.render import TerminalRenderer
from tether.host import Buffer, MemoryBuffers, TextChange
from tether.lsp.documents import split_lines as document_lines
from tether.text import model as tm
from tether.text.edit import position_at
from tether.tools.base import ToolDeps
from tether.tools.files import ReadFile, ReadFileArgs
from tether.workspace.folders import Workspace, line_count, line_slice, split_lines
from tether_protocol import ToolResultEvent

PIECES = [
    "a",
    "bc",
    " ",
    "é",
    "中",
    "🌍",
    "\U0001f600",
    "\n",
    "\r\n",
    "\r",
    "\r\r",
    "\n\r",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x85",
    "\u2028",
    "\u2029",
]
TEXTS = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=24).map("".join),
    st.text(alphabet=st.sampled_from("ab\n\r\x0c\u2028é🌍"), max_size=40),
    st.text(max_size=30),
)
ENCODINGS = st.sampled_from(ref.ENCODINGS)


def inside_crlf(text: str, offset: int) -> bool:
    return 0 < offset < len(text) and text[offset - 1 : offset + 1] == "\r\n"


@given(TEXTS)
def test_lines_are_cut_at_lsp_line_ends_only(text: str) -> None:
    assert tm.split_lines(text, keepends=True) == ref.split(text, keepends=True)
    assert tm.split_lines(text) == ref.split(text, keepends=False)
    assert tm.line_count(text) == len(ref.split(text, keepends=False))
    assert [tm.content(line) for line in tm.split_lines(text, True)] == tm.split_lines(text)


@given(TEXTS, st.integers(0, 30), st.integers(0, 30), st.booleans())
def test_line_slices(text: str, start: int, stop: int, with_total: bool) -> None:
    total = tm.line_count(text) if with_total else None
    assert tm.line_slice(text, start, stop, total) == ref.split(text, False)[start:stop]


@given(TEXTS, ENCODINGS)
def test_every_offset_to_a_position_and_back(text: str, encoding: str) -> None:
    lines = ref.lines_of(text)
    for offset in range(len(text) + 1):
        position = tm.position_at(text, offset, encoding)
        assert position == ref.position(text, offset, encoding)
        number = position[0]
        assert tm.line_index(text, offset) == number
        assert tm.line_start_at(text, offset) == lines[number].start
        assert tm.content_end_at(text, offset) == lines[number].content_end
        assert tm.line_end_at(text, offset) == lines[number].end
        back = tm.offset_at(text, *position, encoding)
        assert back == (offset - 1 if inside_crlf(text, offset) else offset)


@given(TEXTS, ENCODINGS, st.data())
def test_every_position_to_an_offset(text: str, encoding: str, data: st.DataObject) -> None:
    lines = ref.lines_of(text)
    for number in range(len(lines) + 2):
        assert tm.line_start(text, number) == (
            lines[number].start if number < len(lines) else len(text)
        )
        width = 0
        if number < len(lines):
            line = lines[number]
            width = tm.units(text[line.start : line.content_end], encoding)
        for character in range(width + 3):
            expected = ref.offset(text, number, character, encoding)
            assert tm.offset_at(text, number, character, encoding) == expected
    line = data.draw(st.integers(0, len(lines) + 1))
    character = data.draw(st.integers(0, 50))
    assert tm.offset_at(text, line, character, encoding) == ref.offset(
        text, line, character, encoding
    )


@given(TEXTS, ENCODINGS, st.data())
def test_ranges(text: str, encoding: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    assert tm.range_at(text, start, end, encoding) == (
        ref.position(text, start, encoding),
        ref.position(text, end, encoding),
    )


@given(TEXTS, st.randoms(use_true_random=False))
def test_remembered_counts_answer_in_any_order(text: str, rng: random.Random) -> None:
    offsets = list(range(len(text) + 1)) * 2
    rng.shuffle(offsets)
    for offset in offsets:
        assert tm.line_index(text, offset) == ref.position(text, offset, "utf-32")[0]
    numbers = list(range(len(ref.lines_of(text)) + 1))
    rng.shuffle(numbers)
    for number in numbers:
        assert tm.line_start(text, number) == tm.offset_at(text, number, 0, "utf-32")
        assert tm.offset_at(text, number, 0, "utf-32") == ref.offset(text, number, 0, "utf-32")


@given(TEXTS, ENCODINGS, st.integers(-1, 60))
def test_columns_in_code_units(text: str, encoding: str, column: int) -> None:
    for line in ref.split(text, keepends=False):
        assert tm.units(line, encoding) == sum(ref.char_units(c, encoding) for c in line)
        assert tm.column_index(line, column, encoding) == ref.offset(line, 0, column, encoding)


@given(TEXTS)
def test_line_ending_style(text: str) -> None:
    lines = ref.lines_of(text)
    first = text[lines[0].content_end : lines[0].end] or "\n"
    assert tm.line_ending(text) == first
    for ending in tm.LINE_ENDS:
        converted = tm.to_line_ending(text, ending)
        if ending == "\n":
            assert converted == text  # model text for an LF file is left as written
        else:
            ends = {converted[ln.content_end : ln.end] for ln in ref.lines_of(converted)[:-1]}
            assert ends <= {ending}
            assert ref.split(converted, False) == ref.split(text, False)


def test_the_lone_cr_text_of_the_issue() -> None:
    text = "a = 1\rb = 2\nc = 3\n"
    assert tm.split_lines(text) == ["a = 1", "b = 2", "c = 3"]
    assert tm.position_at(text, text.index("c")) == (2, 0)
    assert tm.offset_at(text, 2, 0) == text.index("c")
    assert tm.line_slice(text, 1, 2) == ["b = 2"]


def test_breaks_lsp_does_not_know_stay_inside_a_line() -> None:
    text = "a\x0bb\x0cc\x1cd\x1de\x1ef\x85g\u2028h\u2029i\n"
    assert tm.split_lines(text) == [text[:-1]] and tm.line_count(text) == 1
    assert tm.position_at(text, len(text) - 1) == (0, len(text) - 1)


@pytest.mark.parametrize(
    "ends", [("\r\n", "\r", "\n", "\x0c\n"), ("\r\n",), ("\n", "\u2028\n"), ("\r",)]
)
def test_large_texts_across_block_boundaries(ends: tuple[str, ...]) -> None:
    # Line ends straddling the counting blocks (64 KiB), in texts long enough to have their
    # lone-"\r" check remembered: mixed, CRLF only, LF only, CR only.
    text = "".join(f"{i} é🌍" + ends[i % len(ends)] for i in range(12_000))
    for boundary in (1 << 16, 1 << 17, 3 << 16):
        end = "\r\n" if "\r\n" in ends else ends[0]
        text = text[: boundary - 1] + end + text[boundary - 1 + len(end) :]
    lines = ref.lines_of(text)
    rng = random.Random(3)
    for number in sorted(rng.sample(range(len(lines)), 200)) + [len(lines) - 1, len(lines)]:
        start = lines[number].start if number < len(lines) else len(text)
        assert tm.line_start(text, number) == start
        assert tm.line_index(text, start) == min(number, len(lines) - 1)
    for offset in (0, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, len(text) // 2, len(text)):
        for encoding in ref.ENCODINGS:
            position = tm.position_at(text, offset, encoding)
            assert position == ref.position(text, offset, encoding)
    assert tm.line_count(text) == len(ref.split(text, False)) == len(lines) - 1
    assert tm.line_slice(text, 5000, 5003) == ref.split(text, False)[5000:5003]


def test_the_text_model_imports_no_transport() -> None:
    code = (
        "import json, sys, tether.text.model\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(out.stdout))
    assert "tether" in loaded and not loaded & {"pygls", "lsprotocol"}


@settings(max_examples=50)
@given(TEXTS, ENCODINGS)
def test_every_user_goes_through_the_model(text: str, encoding: str) -> None:
    assert document_lines(text) == ref.split(text, keepends=True)
    assert split_lines(text) == ref.split(text, keepends=False)
    assert line_count(text) == tm.line_count(text)
    assert line_slice(text, 0, 3) == ref.split(text, False)[:3]
    for offset in range(len(text) + 1):
        line, character = position_at(text, offset, encoding)
        assert (line, character) == ref.position(text, offset, encoding)


def test_the_terminal_shows_lines_as_the_editor_cuts_them() -> None:
    # a form feed and a line separator stay inside their line, shown escaped (text.display)
    assert colour_diff("-a\x0cb\n+a\u2028b\n", True) == (
        "\x1b[31m-a\\x0cb\x1b[0m\n\x1b[32m+a\\u2028b\x1b[0m\n"
    )
    out = io.StringIO()
    output = "     1\ta\x0cb\n     2\tc"
    TerminalRenderer(out, color=False).render(
        ToolResultEvent(run_id="r", seq=1, call_id="c", tool="read_file", ok=True, output=output)
    )
    assert out.getvalue() == "✓ read_file:      1\ta\\x0cb\n       2\tc\n"


async def test_read_file_numbers_lines_as_the_editor_does(tmp_path: Path) -> None:
    path = tmp_path / "mixed.py"
    text = "a = 1\rb = 2\x0cstill b\r\nc = 3\u2028still c\n"
    buffers = MemoryBuffers([Buffer(path=path, uri=path.as_uri(), text=text, version=1)])
    ctx = ToolDeps(workspace=Workspace([tmp_path], buffers), run_id="r")
    result = await ReadFile().run(ReadFileArgs(path="mixed.py", offset=2), ctx)
    assert result.output.split("\n") == [
        "     2\tb = 2\x0cstill b",
        "     3\tc = 3\u2028still c",
        "[showing lines 2-3 of 3]",
    ]


PIECES_CR = ["a", "é", "🌍", "\n", "\r\n", "\r", "bc"]


@pytest.mark.slow  # a 66,000-line text per example: 30 s of CPU, 100 s under load
@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES_CR), max_size=12),
    st.lists(st.sampled_from(PIECES_CR), max_size=6),
    st.one_of(st.integers(0, 40), st.integers(0, 70_000)),
    st.integers(0, 40),
    st.one_of(st.integers(0, 40), st.integers(0, 70_000)),
    st.integers(0, 70_000),
)
@example(["\r\n"], [], 1, 1, 3, 5)  # the "\n" of a "\r\n" deleted: a lone "\r" is left
@example(["a"], ["\r"], 1, 0, 3, 5)  # a "\r" typed
def test_what_is_known_of_a_text_holds_for_the_text_an_edit_made_of_it(
    head: list[str], new: list[str], at: int, removed: int, probe: int, second: int
) -> None:
    """``derived`` carries the line counts and the "\\r" answer of a long text over to the
    text an edit made of it: every count of the new text is then the count from 0."""
    before = "".join(head) + "x\n" * 33_000 + "".join(head)  # long: remembered
    start = min(at, len(before))
    end = min(len(before), start + removed)
    replacement = TextChange(start, end, "".join(new))
    after = before[:start] + replacement.new_text + before[end:]
    tm.line_index(before, min(probe, len(before)))  # something known of before
    tm.derived(before, [replacement], after)
    for offset in (second, probe, start, start + len(replacement.new_text)):
        offset = min(offset, len(after))
        assert tm.line_index(after, offset) == _ends_before(after, offset)
    assert tm.line_count(after) == len(ref.split(after, keepends=True))


def _ends_before(text: str, offset: int) -> int:
    """The line ends completed before ``offset`` (a "\\r\\n" it cuts is not)."""
    count = len(re.findall(r"\r\n|\r|\n", text[:offset]))
    return (
        count - 1
        if text[offset - 1 : offset] == "\r" and text[offset : offset + 1] == "\n"
        else count
    )


def tm_change(start: int, end: int, text: str):  # type: ignore[no-untyped-def]
    from tether.host import TextChange

    return TextChange(start, end, text)
