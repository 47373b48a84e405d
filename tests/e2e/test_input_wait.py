"""No command waits for input forever: ``bash`` runs a command with an empty standard input
that no one ever types into, and a command that stops to ask (``read -p``, a program's
``[y/N]``, a REPL) ends soon after with a result that names what it asked, so the model can
run it again non-interactively. Nothing of it is left running.

Each call sets a ``timeout_seconds`` far beyond the test's own bound: a run that only ended
at the timeout fails the test's ``wait_for``, no clock is asserted."""

from __future__ import annotations

import asyncio
import os
import shutil
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


ASYNCIO_PIPE = """\
import asyncio, sys
async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print("Name? ", end="", flush=True)
    print("answer=" + (await reader.readline()).decode())
asyncio.run(main())
"""
ASYNCIO_READER = """\
import asyncio, sys
async def main():
    loop = asyncio.get_running_loop()
    line = loop.create_future()
    loop.add_reader(0, lambda: line.done() or line.set_result(sys.stdin.readline()))
    print("Deploy to production [y/N]? ", end="", flush=True)
    print("answer=" + await line)
asyncio.run(main())
"""
SELECT = """\
import select, sys
print("Pick a number: ", end="", flush=True)
select.select([sys.stdin], [], [])
print("answer=" + sys.stdin.readline())
"""
POLL = """\
import select, sys
print("Really? ", end="", flush=True)
poller = select.poll()
poller.register(sys.stdin, select.POLLIN)
poller.poll()
print("answer=" + sys.stdin.readline())
"""
NODE_READLINE = """\
const rl = require("readline").createInterface({input: process.stdin, output: process.stdout});
rl.question("Your name? ", (a) => { console.log("answer=" + a); rl.close(); });
"""


@pytest.mark.parametrize(
    ("program", "run", "asked"),
    [
        (ASYNCIO_PIPE, "python3", "Name? "),
        (ASYNCIO_READER, "python3", "Deploy to production [y/N]? "),
        (SELECT, "python3", "Pick a number: "),
        (POLL, "python3", "Really? "),
        (NODE_READLINE, "node", "Your name? "),
    ],
    ids=["asyncio-pipe", "asyncio-add-reader", "select", "poll", "node-readline"],
)
async def test_a_program_waiting_for_input_in_its_event_loop_ends_naming_what_it_asked(
    editor: Editor, workspace: Path, program: str, run: str, asked: str
) -> None:
    """Waiting in ``epoll_wait``, ``select`` or ``poll`` with the terminal among what it
    waits on, not in a ``read``: seen all the same."""
    if shutil.which(run) is None:
        pytest.skip(f"{run} is not installed")
    (workspace / "asks").write_text(program)
    output = await run_one(editor, workspace, f"echo $$ > pid; {run} asks; echo after")
    assert f"the command waited for input: `{asked}`" in output, output
    assert "answer=" not in output and "after" not in output.split("\n", 1)[1], output
    pid = int((workspace / "pid").read_text())
    await wait_until(lambda: pid_gone(pid), "the asking shell gone")


ASYNCIO_SERVER = """\
import asyncio
async def main():
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    print("serving", flush=True)
    async with server:
        await server.serve_forever()
asyncio.run(main())
"""
SERVER_TAKING_KEYS = """\
import asyncio, sys
async def main():
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    asyncio.get_running_loop().add_reader(0, sys.stdin.readline)
    print("serving; press h + enter for help", flush=True)
    async with server:
        await server.serve_forever()
asyncio.run(main())
"""
WATCHER_TAKING_KEYS = """\
import asyncio, subprocess, sys
async def main():
    server = await asyncio.create_subprocess_exec(sys.executable, "serve", stdin=subprocess.DEVNULL)
    asyncio.get_running_loop().add_reader(0, sys.stdin.readline)
    print("watching; type rs and enter to restart", flush=True)
    await server.wait()
asyncio.run(main())
"""


@pytest.mark.parametrize(
    "command",
    [
        # Waits in epoll_wait on its listening socket, never on its input.
        "timeout 3 python3 serve; echo got $?",
        # http.server waits in poll() on its socket.
        "timeout 3 python3 -m http.server 0 --bind 127.0.0.1; echo got $?",
        # Waits on its input too, for keys (as Vite's dev server does): a server all the same.
        "timeout 3 python3 keys; echo got $?",
        # Waits on its input for keys while its child serves (as nodemon does).
        "timeout 3 python3 watcher; echo got $?",
    ],
    ids=["asyncio-server", "http-server", "server-taking-keys", "watcher-taking-keys"],
)
async def test_a_server_waiting_on_its_socket_is_not_taken_for_one_that_asks(
    editor: Editor, workspace: Path, command: str
) -> None:
    """Quiet for seconds in its event loop, its input the terminal but not waited on: it
    runs until ``timeout`` ends it."""
    (workspace / "serve").write_text(ASYNCIO_SERVER)
    (workspace / "keys").write_text(SERVER_TAKING_KEYS)
    (workspace / "watcher").write_text(WATCHER_TAKING_KEYS)
    await editor.open_session(workspace, script=script({"toolCalls": [call(command)]}))
    result = await asyncio.wait_for(editor.run(prompt="go", runId="r1"), 60)
    assert result["outcome"] == "done"
    [tool_result] = editor.tool_results()
    assert "got 124" in tool_result.output, tool_result.output  # ended by its timeout
    assert "waited for input" not in tool_result.output


async def test_a_program_that_asks_on_dev_tty_ends_at_once_saying_there_is_no_terminal(
    editor: Editor, workspace: Path
) -> None:
    """The way ``sudo`` or ``ssh`` ask for a password: on ``/dev/tty``, not their input. A
    command has no controlling terminal, so it cannot open one and says so."""
    program = "import sys; tty = open('/dev/tty'); print('answer=' + tty.readline())"
    output = await run_one(editor, workspace, f'python3 -c "{program}"')
    assert output.startswith("exit code: 1\n"), output
    assert "No such device or address: '/dev/tty'" in output and "answer=" not in output
