"""What the terminal says of a turn: a footer's tokens only when known, and one line
said as "1 line" (issue 27's walkthrough: "0 in / 0 out tokens" after text had streamed
in an interrupted turn; "(1 lines)")."""

from __future__ import annotations

import io
from pathlib import Path

from tests.unit.test_diskedit import run_calls
from tether.client.render import TerminalRenderer, footer_line, shown_output
from tether_protocol import RunEvent, RunStartedEvent, TextDeltaEvent, UsageEvent


def interrupted(**usage: int) -> dict[str, object]:
    return {"outcome": "cancelled", "steps": 1, "usage": usage}


STARTED = RunStartedEvent(run_id="r", seq=1, prompt="go", session_id="s")
TEXT = TextDeltaEvent(run_id="r", seq=3, text="half an ans")


def turn_footer(result: dict[str, object], *events: RunEvent) -> str:
    out = io.StringIO()
    renderer = TerminalRenderer(out, color=False)
    renderer.echo_prompt = False
    for event in events:
        renderer.render(event)
    renderer.finish_turn(result, 2.0)
    return out.getvalue().splitlines()[-1]


def test_an_interrupted_turn_with_no_usage_known_says_no_tokens() -> None:
    footer = turn_footer(interrupted(inputTokens=0, outputTokens=0), STARTED, TEXT)
    assert footer == "interrupted · 1 step · 2.0s"


def test_an_interrupted_turn_shows_the_tokens_reported_so_far() -> None:
    earlier = UsageEvent(run_id="r", seq=2, input_tokens=1200, output_tokens=30)
    footer = turn_footer(interrupted(inputTokens=0, outputTokens=0), STARTED, earlier, TEXT)
    assert footer == "interrupted · 1 step · 1,200 in / 30 out tokens · 2.0s"


def test_the_tokens_of_an_earlier_turn_are_not_this_ones() -> None:
    earlier = UsageEvent(run_id="q", seq=2, input_tokens=1200, output_tokens=30)
    footer = turn_footer(interrupted(inputTokens=0, outputTokens=0), earlier, STARTED, TEXT)
    assert footer == "interrupted · 1 step · 2.0s"


def test_a_finished_turn_keeps_its_tokens() -> None:
    done = {"outcome": "done", "steps": 1, "usage": {"inputTokens": 0, "outputTokens": 0}}
    assert footer_line(done, 1.0) == "done · 1 step · 0 in / 0 out tokens · 1.0s"
    stopped = interrupted(inputTokens=10, outputTokens=2)
    assert footer_line(stopped, 1.0) == "interrupted · 1 step · 10 in / 2 out tokens · 1.0s"


def test_one_line_cut_from_an_output_is_one_line() -> None:
    output = "\n".join(f"line {i}" for i in range(12))  # first + 4 + 1 cut + 6
    assert "… 1 more line …" in shown_output(output)
    assert "… 2 more lines …" in shown_output(output + "\nline 12")


async def test_a_file_of_one_line_written_is_one_line(tmp_path: Path) -> None:
    calls = [
        {"name": "write_file", "arguments": {"path": "one.txt", "content": "hello\n"}},
        {"name": "write_file", "arguments": {"path": "two.txt", "content": "a\nb\n"}},
    ]
    one, two = await run_calls(tmp_path, calls)
    assert one.output == "Created one.txt (1 line).", one.output
    assert two.output == "Created two.txt (2 lines).", two.output
