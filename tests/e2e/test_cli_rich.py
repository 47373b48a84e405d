"""`tether run` on a colour terminal (a pseudo-terminal): the answer as Markdown, the
approval's diff highlighted, tool cards; and exactly today's plain text in a pipe, with
NO_COLOR, or with TERM=dumb."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pyte.screens import Char

from tests.acp.terminal_ui import PtyScreen
from tests.e2e.cli import TETHER
from tests.e2e.cli import tether as run_piped
from tests.e2e.test_cli_chat import CONTROLLING, Gated, _at_prompt, ask
from tests.e2e.test_cli_terminal import (
    Terminal,
    assert_nothing_left,
    environment,
    scripted,
)
from tests.providers.fakes import FakeApi, Sse, Status, anthropic_stream, openai_stream

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


WORDS = (
    "Every word of this paragraph stays whole at the edge of a narrow terminal, "
    "however long the answer is, and **bold** shows bold, not as its stars. "
)
TALL = (
    "Here it is:\n\n"
    + "".join(f"- item {n} of the list\n" for n in range(1, 41))
    + "\n"
    + WORDS * 12  # one paragraph taller than the screen by itself
    + "\n\nThat is `all`.\n"
)


def test_an_answer_taller_than_the_screen_is_rendered_once_wrapped_at_words(
    tmp_path: Path,
) -> None:
    lines = on_screen(tmp_path, {"turns": [{"text": TALL}]}, 60, 20)
    shown = "\n".join(lines)
    assert "**" not in shown and "`" not in shown and "- item" not in shown, shown
    for n in range(1, 41):  # the list as a list, each item once
        assert lines.count(f" • item {n} of the list") == 1, shown
    assert lines.count("Here it is:") == 1 and lines.count("That is all.") == 1, shown
    # The paragraph: once, on rows no wider than the terminal that break between words.
    first = lines.index(next(line for line in lines if line.startswith("Every word")))
    rows = lines[first : lines.index("", first)]
    assert all(len(row) <= 60 for row in rows), rows
    assert " ".join(rows).split() == WORDS.replace("**", "").split() * 12, rows
    assert shown.count("stars.") == 12, shown  # a word the terminal cannot break
    outcome = last_index(lines, "outcome done")
    assert lines[outcome - 2 : outcome] == ["That is all.", ""], shown


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


RETRIED = {
    # The OpenAI SDK against a 500 (no Retry-After: Tether's own backoff, under a second).
    "openai": (Status(500, {"error": {"message": "model crashed"}}), openai_stream),
    # The Anthropic SDK against a 429 asking for no wait.
    "anthropic": (
        Status(
            429,
            {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
            {"retry-after": "0"},
        ),
        anthropic_stream,
    ),
}


@pytest.mark.parametrize(("provider", "model"), [("openai", "gpt-5.4"), ("anthropic", "claude-m")])
@pytest.mark.parametrize("colour", [True, False])
def test_a_retried_request_is_one_dim_line_then_the_answer(
    tmp_path: Path, provider: str, model: str, colour: bool
) -> None:
    failure, stream = RETRIED[provider]
    with FakeApi() as fake:
        fake.queue(failure, Sse(stream("It greets people.")))
        env = environment(
            tmp_path,
            TETHER_PROVIDER=provider,
            TETHER_BASE_URL=fake.url + ("/v1" if provider == "openai" else ""),
            TETHER_MODEL=model,
            OPENAI_API_KEY="test-key",
            ANTHROPIC_API_KEY="test-key",
            TERM="xterm-256color",
        )
        if colour:  # Rich's renderer; else the plain one (NO_COLOR)
            env.pop("NO_COLOR", None)
        else:
            env["NO_COLOR"] = "1"
        term = Terminal(["run", "what does app.py do?"], env, project(tmp_path))
        status = term.wait(timeout=60)
        assert len(fake.requests) == 2
    shown = term.text.replace("\r\n", "\n")
    assert status == 0, shown
    assert "WARNING" not in shown and "tether.providers" not in shown, shown  # no log lines
    reason = "answered 500: model crashed" if provider == "openai" else "429"
    lines = [line for line in shown.split("\n") if "↻" in line]
    assert len(lines) == 1, shown
    (line,) = lines
    assert reason in line and "retry 1 in " in line, shown
    if colour:
        assert re.search(r"\x1b\[2m↻ [^\x1b]*retry 1 in \d+\.\ds\x1b\[0m", line), repr(line)
        # On its own line: the spinner was cleared before it, nothing else shares the line.
        assert SGR.sub("", line).split("\x1b[K")[-1].startswith("↻ "), repr(line)
    else:
        assert "\x1b[" not in shown, shown  # NO_COLOR: no styling, no spinner
    after_retry = shown.split(line, 1)[1]
    assert "It greets people." in after_retry and "(no answer)" not in shown, shown
    assert "outcome done" in after_retry, shown
    assert_nothing_left(env)


# --- a wide diff on a narrow terminal ----------------------------------------------------------

WIDE = "hi there, this greeting is long enough to wrap on a narrow terminal"
WIDE_EDIT = {
    "name": "edit_file",
    "arguments": {"path": "app.py", "old_text": "hello", "new_text": WIDE},
}
MORE = ' + " and a few more words at its end"'


def cells(ui: PtyScreen) -> list[list[Char]]:
    """Every row of the emulated terminal (scrolled off, then visible) as its cells."""
    width = ui.screen.columns
    rows = [[row[x] for x in range(width)] for row in ui.screen.history.top]
    return rows + [[ui.screen.buffer[y][x] for x in range(width)] for y in range(ui.screen.lines)]


def wrapped(ui: PtyScreen, first: str) -> list[list[Char]]:
    """The rows of the last diff line on the screen that starts with ``first``: that row
    and each continuation row under it (the ones the diff's gutter marks ``↪``)."""
    rows = cells(ui)
    text = ["".join(c.data for c in row).rstrip() for row in rows]
    start = max(at for at, line in enumerate(text) if line.startswith(first))
    end = start + 1
    while end < len(rows) and text[end].startswith("↪"):
        end += 1
    return rows[start:end]


def assert_wrapped(ui: PtyScreen, sign: str, line: str, colour: str, background: str) -> None:
    """``line`` of the diff (after its sign) shows whole, on rows that each keep its colour:
    its sign on the first, ``↪`` in the gutter of the others, in the sign's colour."""
    rows = wrapped(ui, sign + line[:20])
    shown = [("".join(c.data for c in row)).rstrip() for row in rows]
    assert len(rows) > 1, "\n".join(shown)  # the line is wider than the terminal
    assert " ".join(row[1:].strip() for row in shown).split() == line.split(), shown
    for number, row in enumerate(rows):
        gutter = row[0]
        assert gutter.data == (sign if number == 0 else "↪"), shown
        assert gutter.fg == colour, (number, gutter)
        body = [c for c in row[1:] if c.data != " "]
        assert body and all(c.bg == background for c in body), (number, shown[number])


async def test_a_wide_diff_line_wraps_keeping_its_sign_and_colour(tmp_path: Path) -> None:
    root = project(tmp_path)
    script = {"turns": [{"toolCalls": [WIDE_EDIT]}, {"text": "Done."}]}
    env = scripted(tmp_path, script)
    env.pop("NO_COLOR", None)
    env["PROMPT_TOOLKIT_NO_CPR"] = "1"  # pyte answers no cursor-position request
    env["EDITOR"] = f"sed -i -e 's/ + name$/ + name{MORE}/'"
    program = [sys.executable, "-c", CONTROLLING, *TETHER, "chat"]
    added = f'    return "{WIDE} " + name'
    async with PtyScreen.spawn(program, env=env, cwd=root, columns=60, rows=30) as ui:
        await ask(ui, "say hi")
        await ui.wait_for(r"\[n\] deny  \[\?\] more")
        # The approval's diff: the added line wraps under a gutter mark, green on green.
        assert_wrapped(ui, "+", added, "green", "005f00")
        ui.type("e")  # the user's own version, shown as a diff before they decide
        await ui.wait_for(r"allow the edited version")
        assert_wrapped(ui, "+", added + MORE, "green", "005f00")
        ui.type("y")
        await ui.wait_for("Done.")
        await ask(ui, "/diff")  # the transcript's diff of the session
        await ui.wait_for(r"\+\+\+ b/app\.py")
        await ui.wait_until(lambda: _at_prompt(ui), "the prompt after /diff")
        assert_wrapped(ui, "+", added + MORE, "green", "005f00")
        await ask(ui, "/exit")  # typed ahead, unlike Ctrl-D, it is read once the prompt is
        assert await ui.wait_for_exit() == 0, ui.text()
    assert (root / "app.py").read_text() == APP.replace("hello", WIDE).replace(
        " + name\n", f" + name{MORE}\n"
    )
    assert_nothing_left(env)


# --- a reasoning model's thinking ----------------------------------------------------------

THOUGHT = ["Let me look at app.py ", "and see what greet returns\x1b[31m first."]
THINKING = re.compile(r"^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking \d+\.\ds · .*greet returns\\x1b\[31m first\.$")


def thinking_model(fake: FakeApi, gate: threading.Event) -> None:
    """Queue a reply that thinks, then stops until ``gate`` is set, then answers."""
    frames = anthropic_stream("It greets people.", thinking=THOUGHT)
    answer = next(at for at, f in enumerate(frames) if '"type": "text"' in f)
    fake.queue(Sse(Gated(frames, answer, gate)))


def thinking_env(tmp_path: Path, fake: FakeApi) -> dict[str, str]:
    return environment(
        tmp_path,
        TETHER_PROVIDER="anthropic",
        TETHER_BASE_URL=fake.url,
        TETHER_MODEL="claude-sonnet-5-5",
        TETHER_REASONING_EFFORT="medium",
        ANTHROPIC_API_KEY="test-key",
    )


@pytest.mark.parametrize("front", ["run", "chat"])
async def test_the_spinner_shows_the_end_of_the_models_thinking_dimmed(
    tmp_path: Path, front: str
) -> None:
    root = project(tmp_path)
    gate = threading.Event()
    with FakeApi() as fake:
        thinking_model(fake, gate)
        env = thinking_env(tmp_path, fake)
        env.pop("NO_COLOR", None)
        env["PROMPT_TOOLKIT_NO_CPR"] = "1"  # pyte answers no cursor-position request
        argv = ["run", "what does app.py do?"] if front == "run" else ["chat"]
        program = [sys.executable, "-c", CONTROLLING, *TETHER, *argv]
        try:
            async with PtyScreen.spawn(program, env=env, cwd=root, columns=100) as ui:
                if front == "chat":
                    await ask(ui, "what does app.py do?")

                def thinking() -> list[str]:
                    return [line for line in ui.lines() if THINKING.match(line)]

                # While the model thinks, the spinner's line says what it thinks of, dimmed
                # (its escape sequence shown, not obeyed).
                await ui.wait_until(lambda: bool(thinking()), "the thinking spinner")
                assert len(thinking()) == 1, ui.text()
                status = ui.raw.decode(errors="replace").rsplit("\r\x1b[K", 1)[1]
                assert status.startswith("\x1b[2m") and "thinking" in status, repr(status)
                assert "It greets" not in ui.text()
                gate.set()
                await ui.wait_for("It greets people.")
                if front == "chat":
                    await ui.wait_until(lambda: _at_prompt(ui), "the prompt")
                    await ask(ui, "/exit")
                assert await ui.wait_for_exit() == 0, ui.text()
                # The answer alone stays: the thinking was never part of it.
                assert "greet returns" not in ui.text() and "Let me look" not in ui.text()
                assert "It greets people." in ui.text()
        finally:
            gate.set()
    assert_nothing_left(env)


def test_a_run_without_a_terminal_prints_nothing_of_the_thinking(tmp_path: Path) -> None:
    gate = threading.Event()
    gate.set()
    with FakeApi() as fake:
        thinking_model(fake, gate)
        env = thinking_env(tmp_path, fake)
        piped = run_piped(["run", "what does app.py do?"], project(tmp_path), env)
    assert piped.returncode == 0, piped.stderr
    assert "It greets people." in piped.stdout
    assert "greet returns" not in piped.stdout and "Let me look" not in piped.stdout
    assert "thinking" not in piped.stdout and "\x1b" not in piped.stdout
    assert_nothing_left(env)
