"""The approval preview's changed window, its encoding, and the gate's checks of edited text."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

from tether.events import RunEvents
from tether.policy.gate import ApprovalGate, ApprovalPolicy
from tether.text.model import offset_at
from tether.text.proposed import proposed_window, revised_text
from tether_protocol import (
    ApproveParams,
    ApproveResult,
    DiffPreview,
    Position,
    Range,
)


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
    base: str, new: str, encoding: str
) -> None:
    moved = proposed_window(base, new, encoding)  # type: ignore[arg-type]
    assert moved.range.start.character == 0  # whole lines
    start = offset_at(base, moved.range.start.line, 0, encoding)
    end = offset_at(base, moved.range.end.line, moved.range.end.character, encoding)
    assert base[start:end] == moved.base_text
    assert applied(base, moved.range, moved.text, encoding) == new


def test_an_astral_last_line_is_counted_in_the_encoding() -> None:
    base, new = "a\r\U0001f600 x", "a\r\U0001f600 y"
    for encoding, width in [("utf-8", 6), ("utf-16", 4), ("utf-32", 3)]:
        window = proposed_window(base, new, encoding)  # type: ignore[arg-type]
        assert window.range == Range(
            start=Position(line=1, character=0), end=Position(line=1, character=width)
        )


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

    async def ask_approval(self, request: ApproveParams) -> ApproveResult | None:
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
