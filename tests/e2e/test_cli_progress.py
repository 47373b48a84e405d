"""The terminal shows that an allowed command runs: a status line under its call — a
spinner, the seconds so far and the last line it printed — updated in place, gone when its
result comes. The real CLI on a pseudo-terminal (its screen emulated); the command waits on
a FIFO the test opens only once the screen shows the status line."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tests.acp.terminal_ui import PtyScreen
from tests.fifo import gate, release

from .cli import TETHER
from .test_cli_chat import CONTROLLING, ask, bash, leave
from .test_cli_terminal import assert_nothing_left, scripted

COMMAND = "echo compiling part one; read word < gate; echo finished $word"
STATUS = re.compile(r"^  [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] (\d+) s · compiling part one$")


def status_lines(ui: PtyScreen) -> list[int]:
    """The seconds each status line on the screen says."""
    return [int(m.group(1)) for line in ui.lines() if (m := STATUS.match(line))]


def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    gate(root)
    return root


async def watch_then_release(ui: PtyScreen, fifo: Path) -> None:
    """Until the status line shows the printed line and a second gone by; then release."""
    try:
        await ui.wait_until(lambda: any(s >= 1 for s in status_lines(ui)), "the status line")
        assert len(status_lines(ui)) == 1, ui.text()  # one line, updated in place
        assert "✓ bash" not in ui.text()  # before the result
    finally:
        await release(fifo)


async def test_tether_run_shows_a_running_command_then_its_result(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = scripted(tmp_path, {"turns": [bash(COMMAND), {"text": "Built."}]})
    env.pop("NO_COLOR", None)
    program = [sys.executable, "-c", CONTROLLING, *TETHER, "run", "--yes", "build it"]
    async with PtyScreen.spawn(program, env=env, cwd=root, columns=100) as ui:
        await watch_then_release(ui, root / "gate")
        await ui.wait_for("finished go")
        assert await ui.wait_for_exit() == 0, ui.text()
        assert status_lines(ui) == [], ui.text()  # the result took its place
        assert "✓ bash" in ui.text()
    assert_nothing_left(env)


async def test_the_chat_shows_a_running_command_then_its_result(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = scripted(tmp_path, {"turns": [bash(COMMAND), {"text": "Built."}]})
    env.pop("NO_COLOR", None)  # colours on: NO_COLOR's terminal gets a pipe's plain text
    env["PROMPT_TOOLKIT_NO_CPR"] = "1"  # pyte answers no cursor-position request
    program = [sys.executable, "-c", CONTROLLING, *TETHER, "chat", "--yes"]
    async with PtyScreen.spawn(program, env=env, cwd=root, columns=100) as ui:
        await ask(ui, "build it")
        await watch_then_release(ui, root / "gate")
        await ui.wait_for("Built.")
        await leave(ui)
        assert await ui.wait_for_exit() == 0, ui.text()
        assert status_lines(ui) == [], ui.text()
    assert_nothing_left(env)
