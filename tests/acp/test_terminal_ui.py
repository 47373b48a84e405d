"""The pseudo-terminal driver, against small programs that behave like a client UI."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .process import alive, descendants
from .terminal_ui import PtyScreen
from .ui_clients import acpx_command, acpx_turn

ASKS_TWICE = """
for title, kind in (("Edit src/app.py", "edit"), ("Run make test", "execute")):
    print(f"[tool] {title} (running)")
    answer = input(f"[permission] Allow {title} [{kind}]? (y/N) ")
    print("allowed" if answer == "y" else "denied")
print("Done: it says hi now.")
print("[done] end_turn")
"""


async def test_a_typed_answer_reaches_the_program_and_the_screen_is_text(tmp_path: Path) -> None:
    program = [
        sys.executable,
        "-c",
        "import os; a = input('colour? '); print('got', a, os.isatty(0))",
    ]
    async with PtyScreen.spawn(program, cwd=tmp_path, columns=60, rows=10) as ui:
        await ui.wait_for(r"colour\?")
        ui.type("blue")
        ui.press("enter")
        await ui.wait_for("got blue True")
        assert await ui.wait_for_exit() == 0
        assert ui.text().splitlines() == ["colour? blue", "got blue True"]


async def test_waiting_for_text_that_never_comes_fails_with_the_screen(tmp_path: Path) -> None:
    program = [sys.executable, "-c", "print('hello'); input()"]
    async with PtyScreen.spawn(program, cwd=tmp_path) as ui:
        with pytest.raises(AssertionError, match=r"(?s)waiting for 'goodbye'.*hello"):
            await ui.wait_for("goodbye", within=0.5)


async def test_the_program_and_its_children_are_killed_at_the_end(tmp_path: Path) -> None:
    child = (
        "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'input()']);"
        " print('up'); input()"
    )
    async with PtyScreen.spawn([sys.executable, "-c", child], cwd=tmp_path) as ui:
        await ui.wait_for("up")
        pids = descendants(ui.process.pid) | {ui.process.pid}
        assert len(pids) == 2
    assert not any(alive(pid) for pid in pids)


async def test_the_acpx_driver_answers_each_question_with_the_key(tmp_path: Path) -> None:
    command = [sys.executable, "-c", ASKS_TWICE]
    turn = await acpx_turn(command, env={}, cwd=tmp_path, answer="y", until="it says hi now")
    assert turn.asked == ["Edit src/app.py", "Run make test"]
    assert turn.screen.count("allowed") == 2 and turn.exit_status == 0
    denied = await acpx_turn(command, env={}, cwd=tmp_path, answer="n", until="it says hi now")
    assert denied.screen.count("denied") == 2


def test_the_acpx_command_line() -> None:
    command = acpx_command("acpx", ["tether", "acp"], Path("/w"), "make it say hi")
    assert command == [
        "acpx",
        "--agent",
        "tether acp",
        "--cwd",
        "/w",
        "--approve-reads",
        "exec",
        "make it say hi",
    ]
