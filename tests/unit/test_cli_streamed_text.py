"""Taking back an assistant message's streamed text on a terminal: the rows it filled as
the terminal wrapped them, and when it must stay (off the screen, or Ctrl-C wrote among it)."""

from __future__ import annotations

import io

import pytest

from tether.client.rich_render import RichRenderer
from tether.client.streamed_text import StreamedText, rows_above_cursor
from tether_protocol import (
    AssistantEvent,
    RunEvent,
    RunFinishedEvent,
    StepEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)


@pytest.mark.parametrize(
    ("text", "columns", "rows"),
    [
        ("abc", 10, 0),
        ("abc\n", 10, 1),
        ("a" * 10, 10, 0),  # the cursor waits at the last column: no row yet
        ("a" * 10 + "\n", 10, 1),  # a full row, then the line feed: one row
        ("a" * 11, 10, 1),
        ("a" * 25 + "\nb\n\nc", 10, 5),
        ("你你你", 3, 2),  # a wide character wraps whole: 3 rows, not the 2 its cells fill
        ("你" * 5 + "\n", 10, 1),
        ("\tx\tab", 10, 1),  # tabs stop at 8 and at the margin; b wraps
        ("", 10, 0),
    ],
)
def test_the_rows_a_text_fills(text: str, columns: int, rows: int) -> None:
    assert rows_above_cursor(text, columns) == rows


@pytest.mark.parametrize("text", ["a\x1b[2Jb", "50%\r100%", "x\by"])
def test_text_that_moves_the_cursor_itself_is_not_counted(text: str) -> None:
    assert rows_above_cursor(text, 80) is None


def test_the_eraser_reaches_only_rows_still_on_the_screen() -> None:
    streamed = StreamedText(from_row_start=True)
    streamed.add("one\ntwo\nthree")
    assert streamed.eraser((80, 3)) == "\r\x1b[2A\x1b[J"
    assert streamed.eraser((80, 2)) is None  # "one" has scrolled off a 2-row screen
    assert streamed.eraser(None) is None  # a terminal that does not say its size
    assert StreamedText(from_row_start=False).eraser((80, 24)) is None
    resized = StreamedText(from_row_start=True, size=(100, 40))
    resized.add("one")
    assert resized.eraser((100, 40)) == "\r\x1b[J"
    assert resized.eraser((60, 40)) is None  # the terminal rewrapped its rows


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def shown(*events: RunEvent, interrupt_after: int | None = None) -> str:
    out = Tty()
    renderer = RichRenderer(out, size=lambda: (80, 24))
    for at, event in enumerate(events):
        renderer.render(event)
        if at == interrupt_after:
            renderer.others_wrote()
    return out.getvalue()


STREAM: list[RunEvent] = [
    StepEvent(run_id="r", seq=1, step=1),
    TextDeltaEvent(run_id="r", seq=2, text="Let me **look**.\n"),
    TextDeltaEvent(run_id="r", seq=3, text="Then edit."),
    AssistantEvent(run_id="r", seq=4, text="Let me **look**.\nThen edit."),
]


def test_a_message_followed_by_a_tool_call_is_rendered_in_place_without_a_heading() -> None:
    call = ToolCallEvent(run_id="r", seq=5, call_id="c", tool="read_file", arguments={})
    text = shown(*STREAM, call)
    raw, rendered = text.split("\r\x1b[1A\x1b[J")
    assert "**look**" in raw and "**look**" not in rendered and "Answer:" not in rendered
    assert "read_file" in rendered


def test_the_last_message_is_rendered_as_the_answer() -> None:
    text = shown(*STREAM, RunFinishedEvent(run_id="r", seq=5, outcome="done", steps=1))
    assert "Answer:" in text.split("\x1b[J")[1]


def test_after_ctrl_c_wrote_among_it_the_streamed_text_stays() -> None:
    # The notice went to the same terminal between two pieces: the rows no longer add up.
    finished = RunFinishedEvent(run_id="r", seq=5, outcome="cancelled", steps=1)
    text = shown(*STREAM, finished, interrupt_after=1)
    assert "\x1b[J" not in text and "\x1b[1A" not in text
    assert text.count("look") == 1


async def test_a_server_message_warns_the_renderer_before_it_is_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from types import SimpleNamespace

    import anyio

    from tether.client.connection import TetherClient

    seen: list[str] = []
    async with anyio.create_task_group() as group:
        process = SimpleNamespace(stdout=Tty(), stdin=Tty())
        client = TetherClient(process, group)  # type: ignore[arg-type]  # only messages here
        client.on_notice = lambda: seen.append(capsys.readouterr().err)
        message = {"type": 2, "message": "Tether: the sandbox is not usable"}
        await client._dispatch({"method": "window/showMessage", "params": message})
    assert seen == [""]  # told before the line went to the terminal
    assert "the sandbox is not usable" in capsys.readouterr().err


def test_a_tool_card_measures_tabs_as_drawn_and_does_not_wrap_code() -> None:
    import re

    output = 'main.go (3 lines)\nfunc main() {\n\tfmt.Println("hello there, a line")\n}\n'
    result = ToolResultEvent(
        run_id="r", seq=1, call_id="c", tool="read_file", ok=True, output=output
    )
    out = Tty()
    renderer = RichRenderer(out, size=lambda: (60, 24))
    renderer.console.width = 60
    renderer.render(result)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    assert '        fmt.Println("hello there, a line")' in text, text  # one line, tab as 8
    widths = {len(line) for line in text.splitlines() if line}
    assert len(widths) == 1, text  # every row of the card as wide as the others


def on_screen(events: list[RunEvent], columns: int, rows: int) -> list[str]:
    """The lines a ``columns``×``rows`` terminal holds after the events (scrollback first)."""
    from tests.e2e.test_cli_rich import screen

    out = Tty()
    renderer = RichRenderer(out, size=lambda: (columns, rows))
    renderer.console.width = columns
    for event in events:
        renderer.render(event)
    return screen(out.getvalue().replace("\n", "\r\n"), columns, rows)  # as a pty writes it


def streamed(text: str, piece: int) -> list[RunEvent]:
    pieces = [text[at : at + piece] for at in range(0, len(text), piece)]
    return [
        StepEvent(run_id="r", seq=1, step=1),
        *(TextDeltaEvent(run_id="r", seq=2 + n, text=p) for n, p in enumerate(pieces)),
    ]


CODE = "Look:\n\n```python\n" + "".join(f"x{n} = f({n})  # line {n}\n" for n in range(40))


def test_a_block_taller_than_the_screen_shows_its_end_then_all_of_it_rendered() -> None:
    text = CODE + "```\n\nThat is **all**.\n"
    events = streamed(text, 5)
    cropped = on_screen(events[:-10], 60, 12)  # inside the code block: its last rows
    assert cropped[1:4] == ["Look:", "", "…"], cropped  # the part before it, rendered
    assert cropped[4:-1] == [f"x{n} = f({n})  # line {n}" for n in range(31, 38)], cropped
    assert cropped[-1].startswith("x38 = f(38)"), cropped  # as it streams
    assert len(cropped) == 12, cropped  # nothing scrolled off, the rest not on the screen
    finished = RunFinishedEvent(run_id="r", seq=99, outcome="done", steps=1)
    done = on_screen([*events, AssistantEvent(run_id="r", seq=98, text=text), finished], 60, 12)
    assert "…" not in done and "```python" not in done and "That is all." in done, done
    for n in range(40):
        assert sum(line.strip() == f"x{n} = f({n})  # line {n}" for line in done) == 1, done


def test_a_message_cut_off_while_only_its_end_shows_stays_whole_as_it_came() -> None:
    cancelled = RunFinishedEvent(run_id="r", seq=99, outcome="cancelled", steps=1)
    lines = on_screen([*streamed(CODE, 7), cancelled], 60, 12)
    assert "…" not in lines and lines.count("```python") == 1, lines
    for n in range(40):
        assert lines.count(f"x{n} = f({n})  # line {n}") == 1, lines
