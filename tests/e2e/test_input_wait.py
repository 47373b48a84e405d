"""No command waits for input forever: ``bash`` runs a command with an empty standard input
that no one ever types into, and a command that stops to ask (``read -p``, a program's
``[y/N]``, a REPL) ends soon after with a result that names what it asked, so the model can
run it again non-interactively. Nothing of it is left running.

Each call sets a ``timeout_seconds`` far beyond the test's own bound: a run that only ended
at the timeout fails the test's ``wait_for``, no clock is asserted."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tether.sandbox import Backend

from ..sandboxes import BACKENDS, require_backend
from ..waiting import wait_until
from .conftest import Editor, script, serving

LONG = 600  # the command's own timeout: never what ends it here


def call(command: str) -> dict[str, object]:
    return {"name": "bash", "arguments": {"command": command, "timeout_seconds": LONG}}


async def run_one(editor: Editor, workspace: Path, command: str) -> str:
    """Run ``command`` through the model's ``bash`` and return its result's output."""
    return await run_one_with(editor, workspace, command, {})


async def run_one_with(
    editor: Editor, workspace: Path, command: str, options: dict[str, object]
) -> str:
    """``run_one`` in a session opened with ``options``."""
    turns = script({"toolCalls": [call(command)]})
    await editor.open_session(workspace, options=options, script=turns)
    result = await asyncio.wait_for(editor.run(prompt="go", runId="r1"), 60)
    assert result["outcome"] == "done"
    [tool_result] = editor.tool_results()
    assert not tool_result.ok
    return tool_result.output


def pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


@pytest.mark.parametrize(
    ("command", "asked"),
    [
        ('echo $$ > pid; read -p "Continue? " answer; echo "answer=$answer"', "Continue? "),
        (
            "echo $$ > pid; python3 -c \"print(input('Proceed (y/N)? '))\"; echo after",
            "Proceed (y/N)? ",
        ),
        ("echo $$ > pid; python3 -q", ">>> "),
    ],
    ids=["read-p", "python-input", "repl"],
)
async def test_a_command_that_asks_ends_naming_what_it_asked(
    editor: Editor, workspace: Path, command: str, asked: str
) -> None:
    output = await run_one(editor, workspace, command)
    assert f"the command waited for input: `{asked}`" in output, output
    assert "answer=" not in output and "after" not in output.split("\n", 1)[1], output
    pid = int((workspace / "pid").read_text())
    await wait_until(lambda: pid_gone(pid), "the asking shell gone")


async def test_a_command_reading_its_input_silently_ends_saying_it_asked_nothing(
    editor: Editor, workspace: Path
) -> None:
    output = await run_one(editor, workspace, "echo $$ > pid; wc -c; echo after")
    assert "the command waited for input (it printed no question)" in output, output
    assert "after" not in output.split("\n", 1)[1]


@pytest.mark.parametrize(
    "command",
    [
        # The shell waits reading a pipe, its standard input the terminal: not asking.
        'x=$(sleep 2; echo inner); echo "got $x"',
        # cat reads: a pipe, not the terminal.
        "(sleep 2; echo inner) | cat; echo got",
        # Reading its input from a file, not the terminal.
        "sleep 2 & wait; read -r line < /dev/null; echo got $line",
    ],
    ids=["substitution", "pipe", "redirected"],
)
async def test_a_quiet_command_that_reads_no_terminal_runs_to_its_end(
    editor: Editor, workspace: Path, command: str
) -> None:
    """Quiet longer than a question is waited on, each reading something else: each runs to
    its end."""
    await editor.open_session(workspace, script=script({"toolCalls": [call(command)]}))
    result = await asyncio.wait_for(editor.run(prompt="go", runId="r1"), 60)
    assert result["outcome"] == "done"
    [tool_result] = editor.tool_results()
    assert tool_result.ok, tool_result.output
    assert "got" in tool_result.output and "waited for input" not in tool_result.output


@pytest.mark.parametrize("backend", BACKENDS)
async def test_in_the_sandbox_a_command_that_asks_ends_naming_it(
    tmp_path: Path, workspace: Path, backend: Backend
) -> None:
    require_backend(backend)
    command = 'echo $$ > pid; read -p "Overwrite? [y/N] " answer; echo "answer=$answer"'
    async with serving(tmp_path / "state") as editor:
        output = await run_one_with(
            editor, workspace, command, {"sandbox": backend, "autoApprove": ["bash"]}
        )
    assert f"in the {backend} sandbox" in output
    assert "the command waited for input: `Overwrite? [y/N] `" in output, output
    assert "answer=" not in output.split("\n", 1)[1]
