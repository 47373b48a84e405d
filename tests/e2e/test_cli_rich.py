"""`tether run` on a colour terminal (a pseudo-terminal): the answer as Markdown, the
approval's diff highlighted, tool cards; and exactly today's plain text in a pipe, with
NO_COLOR, or with TERM=dumb."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.e2e.test_cli_terminal import TETHER, Terminal, assert_nothing_left, scripted

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
    piped = subprocess.run(
        [*TETHER, "run", "--yes", "say hi"],
        cwd=project(tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
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
        "from tether.client.render import make_renderer\n"
        "from tether.client.terminal_run import run_in_terminal\n"
        "renderer = make_renderer(io.StringIO())\n"
        "print(type(renderer).__name__, 'rich' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == ["TerminalRenderer", "False"]
