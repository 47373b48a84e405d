"""The approval preview's changed window, its encoding, and the gate's checks of edited text."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import anyio
import pytest

from tether.events import RunEvents
from tether.policy.gate import ApprovalGate, ApprovalPolicy
from tether.text.edit import minimal_changes
from tether.text.model import Encoding, offset_at
from tether.text.proposed import proposed_window as window_of
from tether.text.proposed import revised_text
from tether_protocol import (
    ApproveParams,
    ApproveResult,
    DiffPreview,
    Position,
    ProposedText,
    Range,
)


def proposed_window(base: str, new: str, encoding: Encoding) -> ProposedText:
    """The window of the edit from ``base`` to ``new``, as the edit tools build it."""
    return window_of(base, new, minimal_changes(base, new), encoding)


def applied(base: str, window_range: Range, text: str, encoding: str) -> str:
    start = offset_at(base, window_range.start.line, window_range.start.character, encoding)
    end = offset_at(base, window_range.end.line, window_range.end.character, encoding)
    return base[:start] + text + base[end:]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.parametrize(
    ("base", "new"),
    [
        ("a\nb\nc\n", "a\nB\nc\n"),
        ("a\rb\rc", "a\rb\rC \U0001f600"),  # lone CR, last line without a line end
        ("x \U0001f600\r\ny\r\n", "x \U0001f600\r\nY\r\n"),
        ("", "new file\n"),
        ("only", ""),
        ("a\n", "a\nb"),
    ],
)
def test_the_window_put_in_place_by_its_range_gives_the_new_text(
    base: str, new: str, encoding: Encoding
) -> None:
    moved = proposed_window(base, new, encoding)
    assert moved.range.start.character == 0  # whole lines
    start = offset_at(base, moved.range.start.line, 0, encoding)
    end = offset_at(base, moved.range.end.line, moved.range.end.character, encoding)
    assert base[start:end] == moved.base_text
    assert applied(base, moved.range, moved.text, encoding) == new


def test_an_astral_last_line_is_counted_in_the_encoding() -> None:
    base, new = "a\r\U0001f600 x", "a\r\U0001f600 y"
    for encoding, width in [("utf-8", 6), ("utf-16", 4), ("utf-32", 3)]:
        window = proposed_window(base, new, encoding)
        assert window.range == Range(
            start=Position(line=1, character=0), end=Position(line=1, character=width)
        )


# -- hunks -------------------------------------------------------------------------------


def hunks(base: str, new: str, encoding: Encoding = "utf-16") -> list[tuple[Range, str]]:
    found = proposed_window(base, new, encoding).hunks
    assert found is not None
    return [(hunk.range, hunk.text) for hunk in found]


def lines(start: int, end: int, end_character: int = 0) -> Range:
    return Range(
        start=Position(line=start, character=0),
        end=Position(line=end, character=end_character),
    )


def test_changes_apart_are_hunks_of_their_own() -> None:
    base = "a\nb\nc\nd\ne\nf\n"
    new = "A\nb\nc\nd\nE\nnew\nf\n"
    window = proposed_window(base, new, "utf-16")
    assert window.range == lines(0, 5)
    assert hunks(base, new) == [(lines(0, 1), "A\n"), (lines(4, 5), "E\nnew\n")]
    # Removed lines: a range with no text; lines one unchanged line apart stay apart.
    assert hunks("a\nb\nc\n", "b\n") == [(lines(0, 1), ""), (lines(2, 3), "")]


def test_a_crlf_files_hunks_keep_its_line_ends() -> None:
    base = "one\r\ntwo\r\nthree\r\nfour\r\n"
    new = "one\r\n2\r\nthree\r\n4\r\n"
    assert hunks(base, new) == [(lines(1, 2), "2\r\n"), (lines(3, 4), "4\r\n")]


def test_lines_added_at_the_end_of_a_file() -> None:
    window = proposed_window("a\nb\n", "a\nb\nc\n", "utf-16")
    assert window.range == lines(1, 2)  # the line before, the insertion after it
    assert hunks("a\nb\n", "a\nb\nc\n") == [(lines(2, 2), "c\n")]


@pytest.mark.parametrize(("encoding", "width"), [("utf-8", 6), ("utf-16", 4), ("utf-32", 3)])
def test_a_last_line_without_a_line_end_is_counted_in_the_encoding(
    encoding: Encoding, width: int
) -> None:
    # The last line gains a line end and a line follows: its end is inside the line.
    base, new = "a\nb \U0001f30d", "a\nb \U0001f30d\nc"
    assert hunks(base, new, encoding) == [(lines(1, 1, width), "b \U0001f30d\nc")]


def test_a_new_file_is_one_hunk_at_the_start() -> None:
    window = proposed_window("", "x\ny\n", "utf-8")
    assert window.range == lines(0, 0) and window.base_text == ""
    assert hunks("", "x\ny\n") == [(lines(0, 0), "x\ny\n")]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.parametrize(
    ("base", "new"),
    [
        ("a\nb\nc\nd\n", "A\nb\nC\nd\nnew\n"),
        ("\U0001f600 a\rb\rc \U0001f600", "\U0001f600 A\rb\rc \U0001f600!"),
        ("x\r\ny\r\nz", "x\r\nY\r\nz\r\n"),
        ("", "new file\n"),
        ("only", ""),
    ],
)
def test_the_hunks_applied_by_their_ranges_give_the_new_text(
    base: str, new: str, encoding: Encoding
) -> None:
    window = proposed_window(base, new, encoding)
    assert window.hunks is not None
    text, shift = base, 0
    for hunk in window.hunks:  # in document order, each inside the window
        assert window.range.start.line <= hunk.range.start.line
        assert hunk.range.end.line <= window.range.end.line
        start = offset_at(base, hunk.range.start.line, hunk.range.start.character, encoding)
        end = offset_at(base, hunk.range.end.line, hunk.range.end.character, encoding)
        text = text[: start + shift] + hunk.text + text[end + shift :]
        shift += len(hunk.text) - (end - start)
    assert text == new


GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "agent-approve.params.json"


def test_the_golden_previews_are_what_the_server_sends() -> None:
    # Client authors read tests/golden/: its windows start at line 0, so the file's base is
    # the window's base text and the server's window must be the same, hunks included.
    for params in json.loads(GOLDEN.read_text()):
        if params["preview"]["kind"] == "diff":
            shown = ProposedText.model_validate(params["preview"]["proposed"])
            assert proposed_window(shown.base_text, shown.text, "utf-16") == shown


def test_a_one_line_change_in_ten_megabytes_sends_a_few_lines() -> None:
    base = "".join(f"line {n:07d} of a big file, padded out a little\n" for n in range(220_000))
    assert len(base) > 10_000_000
    new = base.replace("line 0123456 of", "line 0123456 changed of")
    window = proposed_window(base, new, "utf-16")
    assert len(window.text) + len(window.base_text) < 300
    assert window.range.start.line <= 123456 < window.range.end.line
    assert revised_text(base, new, window.text) == new


def test_revised_text_puts_the_users_window_in_place() -> None:
    base, new = "a\nb\nc\n", "a\nB\nc\n"
    window = proposed_window(base, new, "utf-16")
    mine = window.text.replace("B", "user's B\nand more")
    assert revised_text(base, new, mine) == base.replace("b\n", "user's B\nand more\n")


class Answering:
    def __init__(self, answer: ApproveResult) -> None:
        self.answer = answer

    async def ask_approval(
        self, request: ApproveParams, change: object = None
    ) -> ApproveResult | None:
        return self.answer


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (ApproveResult(decision="allow", edited_text="x" * (3 << 20)), "characters"),
        (ApproveResult(decision="allow", arguments={"a": 1}, edited_text="x"), "both"),
    ],
)
def test_the_gate_denies_unusable_edited_text_with_a_warning(
    answer: ApproveResult, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    preview = DiffPreview(uri="u", diff="", proposed=proposed_window("a\n", "b\n", "utf-16"))
    gate = ApprovalGate(ApprovalPolicy(), Answering(answer), RunEvents("r", []))  # type: ignore[arg-type]

    async def decide() -> str:
        verdict = await gate.decide(
            call_id="c",
            tool="edit_file",
            title="Edit a",
            arguments={},
            preview=preview,
            roots=[Path("/nowhere")],
        )
        return verdict.decision

    with caplog.at_level(logging.WARNING, logger="tether.policy.gate"):
        assert anyio.run(decide) == "denied-by-default"
    assert problem in caplog.text and "denied" in caplog.text
