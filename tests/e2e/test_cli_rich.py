"""`tether run` on a colour terminal (a pseudo-terminal): the answer as Markdown, the
approval's diff highlighted, tool cards; and exactly today's plain text in a pipe, with
NO_COLOR, or with TERM=dumb."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.e2e.cli import tether as run_piped
from tests.e2e.test_cli_terminal import (
    Terminal,
    assert_nothing_left,
    environment,
    scripted,
)
from tests.providers.fakes import FakeApi, Sse, openai_stream

APP = 'def greet(name):\n    return "hello " + name\n'
EDIT = {"name": "edit_file", "arguments": {"path": "app.py", "old_text": "hello", "new_text": "hi"}}
ANSWER = "# Done\n\nIt says **hi** now, see `app.py`:\n\n- one\n- two\n"
SCRIPT = {"turns": [{"toolCalls": [EDIT]}, {"text": ANSWER}]}
SGR = re.compile(r"\x1b\[[0-9;]*m")


def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir(exist_ok=True)
    (root / "app.py").write_text(APP)
    return root


def on_terminal(tmp_path: Path, argv: list[str], **settings: str) -> str:
    """What a terminal shows of a run (line ends as written, not as the pty makes them)."""
    env = scripted(tmp_path, SCRIPT)
    for name in ("NO_COLOR", "FORCE_COLOR", "COLORTERM", "COLUMNS"):  # the tester's own
        env.pop(name, None)
    env |= {"TERM": "xterm-256color", **settings}  # 256 colours: the codes checked below
    term = Terminal(argv, env, project(tmp_path))
    status = term.wait(timeout=60)
    assert status == 0, term.text
    assert_nothing_left(env)
    return term.text.replace("\r\n", "\n")


def after(text: str, marker: str) -> str:
    assert marker in text, text
    return text.split(marker, 1)[1]


def test_a_colour_terminal_shows_markdown_a_highlighted_diff_and_tool_cards(
    tmp_path: Path,
) -> None:
    shown = on_terminal(tmp_path, ["run", "--yes", "say hi"])
    answer = after(shown, "Answer:")
    assert "**hi**" not in answer and "# Done" not in answer  # rendered, not the source
    assert re.search(r"\x1b\[1mhi\x1b\[0m", answer), answer  # **hi** is bold
    assert re.search(r"\x1b\[[0-9;]*m • \x1b\[0mone", answer), answer  # a bullet list
    added = next(line for line in shown.splitlines() if SGR.sub("", line).startswith("+    "))
    # The added line's code is highlighted in its language (the keyword on its own colour)
    # over the added-line background.
    assert re.search(r"\x1b\[[0-9;]*48;5;22m(return)\x1b\[0m", added), repr(added)
    assert "╭─" in shown and "✓ edit_file" in SGR.sub("", shown)  # the tool's card


def plain(text: str) -> str:
    """The text with this run's ids replaced (they differ from run to run)."""
    return re.sub(r"\b([sr])-[0-9a-f]{16}\b", r"\1-ID", text)


def test_a_pipe_no_color_and_a_dumb_terminal_all_get_the_same_plain_text(
    tmp_path: Path,
) -> None:
    env = scripted(tmp_path, SCRIPT)
    env.pop("NO_COLOR", None)
    piped = run_piped(["run", "--yes", "say hi"], project(tmp_path), env)
    assert piped.returncode == 0, piped.stderr
    assert "\x1b" not in piped.stdout
    assert "Answer:\n" + ANSWER in piped.stdout  # the Markdown source, as it came
    assert '+    return "hi " + name\n' in piped.stdout  # the diff as text
    for settings in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        shown = on_terminal(tmp_path, ["run", "--yes", "say hi"], **settings)
        assert plain(shown) == plain(piped.stdout), settings


def test_a_plain_run_never_imports_rich(tmp_path: Path) -> None:
    code = (
        "import io, sys\n"
        "from tether.client.terminal_run import make_renderer, run_in_terminal\n"
        "renderer = make_renderer(io.StringIO())\n"
        "print(type(renderer).__name__, 'rich' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == ["TerminalRenderer", "False"]


# --- the answer once: streamed, then replaced by its rendering ------------------------------

ESCAPE = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def screen(text: str, columns: int, rows: int) -> list[str]:
    """The lines a ``columns``×``rows`` terminal holds after ``text``, scrollback first:
    as much of a VT100 as the CLI uses (wrapping before the character that does not fit,
    carriage return, line feed, cursor up within the screen, erase below, erase line).
    Colours and links change nothing here."""
    lines: list[list[str]] = [[]]
    row = column = 0
    at = 0
    while at < len(text):
        escape = ESCAPE.match(text, at)
        if escape is not None:
            at = escape.end()
            argument, command = escape.group(1), escape.group(2)
            if command == "A":
                top = max(0, len(lines) - rows)  # scrolled-off rows are out of reach
                row = max(top, row - int(argument or 1))
            elif command == "J":
                del lines[row + 1 :]
                del lines[row][column:]
            elif command == "K":
                del lines[row][column:]
            continue
        char = text[at]
        at += 1
        if char == "\r":
            column = 0
        elif char == "\n":
            row += 1
        else:
            if column >= columns:
                row, column = row + 1, 0
            while len(lines) <= row:
                lines.append([])
            line = lines[row]
            line.extend(" " * (column + 1 - len(line)))
            line[column] = char
            column += 1
        while len(lines) <= row:
            lines.append([])
    return ["".join(line).rstrip() for line in lines]


def test_the_screen_model_wraps_and_erases_as_a_terminal_does() -> None:
    assert screen("abcde\r\nf", 4, 10) == ["abcd", "e", "f"]
    assert screen("abcd\r\nx", 4, 10) == ["abcd", "x"]  # a full row: no empty row after it
    assert screen("1\r\n2\r\n3\r\n4\r\x1b[2A\x1b[Jx", 10, 10) == ["1", "x"]
    assert screen("1\r\n2\r\n3\r\n4\r\x1b[9A\x1b[Jx", 10, 2) == ["1", "2", "x"]


INTRO = "Let me change the greeting in `app.py` first.\n"
LONG = "This paragraph is long enough to wrap on a terminal of a hundred columns, " * 3
STORY = f"# Done\n\n{LONG.strip()}\n\nIt says **hi** now:\n\n- one\n- two\n"
STORY_SCRIPT = {"turns": [{"text": INTRO, "toolCalls": [EDIT]}, {"text": STORY}]}


def on_screen(tmp_path: Path, script: dict[str, object], columns: int, rows: int) -> list[str]:
    """The lines of a ``columns``×``rows`` colour terminal (and its scrollback) after a run."""
    env = scripted(tmp_path, script)
    for name in ("NO_COLOR", "FORCE_COLOR", "COLORTERM", "COLUMNS", "LINES"):
        env.pop(name, None)
    env["TERM"] = "xterm-256color"
    term = Terminal(["run", "--yes", "say hi"], env, project(tmp_path), size=(columns, rows))
    status = term.wait(timeout=60)
    assert status == 0, term.text
    assert_nothing_left(env)
    return screen(term.text, columns, rows)


def last_index(lines: list[str], start: str) -> int:
    """Where the last line beginning with ``start`` is."""
    return max(at for at, line in enumerate(lines) if line.startswith(start))


def test_a_terminal_shows_each_message_once_rendered_in_place_of_its_stream(
    tmp_path: Path,
) -> None:
    lines = on_screen(tmp_path, STORY_SCRIPT, 100, 40)
    shown = "\n".join(lines)
    assert "**hi**" not in shown and "`app.py`" not in shown, shown  # no raw Markdown left
    assert [line.strip() for line in lines].count("It says hi now:") == 1, shown
    assert sum("greeting in app.py first." in line for line in lines) == 1, shown
    assert shown.count("This paragraph is long") == 3, shown  # the paragraph, once
    assert shown.count("Answer:") == 1 and shown.count("Done") == 1, shown
    # What came before each message is still there: the erasing took back its rows only.
    step_2 = lines.index(next(line for line in lines if line.startswith("── step 2")))
    assert lines[step_2 - 1].startswith("╰"), shown  # the tool's card
    assert lines[step_2 + 1] == "Answer:", shown
    outcome = last_index(lines, "outcome done")
    assert lines[outcome - 2 : outcome] == [" • two", ""], shown


def test_an_answer_taller_than_the_screen_stays_as_streamed_and_is_not_repeated(
    tmp_path: Path,
) -> None:
    items = [f"- item {n} of the list" for n in range(1, 41)]
    script = {"turns": [{"text": "Here it is:\n\n" + "\n".join(items) + "\n"}]}
    lines = on_screen(tmp_path, script, 100, 24)
    for item in items:
        assert lines.count(item) == 1, "\n".join(lines)  # as streamed, once
    assert not [line for line in lines if line.startswith(" • item")], "\n".join(lines)
    outcome = last_index(lines, "outcome done")
    assert lines[outcome - 2 : outcome] == [items[-1], ""], "\n".join(lines)
    assert "Answer:" not in lines, "\n".join(lines)


PIPED = """▶ say hi
── step 1 ────────────────────────────────────────
Let me change the greeting in `app.py` first.
→ edit_file {"path": "app.py", "old_text": "hello", "new_text": "hi"}

Edit app.py
--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return "hello " + name
+    return "hi " + name
  → allowed (--yes)
  approval: allow
✓ edit_file: Edited app.py: 1 occurrence replaced (+1 -1 lines).
── step 2 ────────────────────────────────────────
{story}
Answer:
{story}
outcome done · 2 steps · N in / N out tokens · session s-ID · run r-ID
""".replace("{story}", STORY)


def test_a_pipe_still_gets_the_streamed_text_and_the_answer_as_before(tmp_path: Path) -> None:
    env = scripted(tmp_path, STORY_SCRIPT)
    piped = run_piped(["run", "--yes", "say hi"], project(tmp_path), env)
    assert piped.returncode == 0, piped.stderr
    assert re.sub(r"\d+ (in|out) ", r"N \1 ", plain(piped.stdout)) == PIPED


def test_ctrl_c_while_the_answer_streams_leaves_what_came_once_and_readable(
    tmp_path: Path,
) -> None:
    pieces = [f"line {n} of a slow answer\n" for n in range(1, 31)]
    with FakeApi() as fake:
        fake.queue(Sse(openai_stream(*pieces), delay=0.2))  # a slow model: ~6 s in all
        env = environment(
            tmp_path,
            TETHER_PROVIDER="openai",
            TETHER_BASE_URL=fake.url + "/v1",
            TETHER_MODEL="gpt-5.4",
            OPENAI_API_KEY="test-key",
            TERM="xterm-256color",
        )
        env.pop("NO_COLOR", None)
        term = Terminal(["run", "go"], env, project(tmp_path))
        term.expect("line 3 of")
        term.send("\x03")
        status = term.wait(timeout=30)
    lines = screen(term.text, 100, 40)
    shown = "\n".join(lines)
    assert status == 130, shown
    streamed = [line for line in lines if line.startswith("line ")]
    assert streamed == pieces_shown(len(streamed)) and len(streamed) < len(pieces), shown
    assert "tether: cancelling the run (Ctrl-C again to quit)" in lines, shown
    assert "outcome cancelled" in shown and "Traceback" not in shown, shown
    assert "(no answer)" not in shown and "Answer:" not in shown, shown  # what came is it
    assert_nothing_left(env)


def pieces_shown(count: int) -> list[str]:
    return [f"line {n} of a slow answer" for n in range(1, count + 1)]


PLAN = {
    "name": "plan",
    "arguments": {
        "steps": [
            {"content": "read app.py", "status": "completed"},
            {"content": "say hi", "status": "in_progress"},
            {"content": "run the tests"},
        ]
    },
}


def test_the_plan_is_shown_as_a_checklist_not_as_a_tool_call(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [{"toolCalls": [PLAN]}, {"text": "ok"}]})
    piped = run_piped(["run", "say hi"], project(tmp_path), env)
    assert piped.returncode == 0, piped.stderr
    assert "plan (1/3 done)\n  ✓ read app.py\n  ▸ say hi\n  ○ run the tests\n" in piped.stdout, (
        piped.stdout
    )
    assert "→ plan" not in piped.stdout and "✓ plan" not in piped.stdout  # no call card
