"""``commandInput: "ask"``: a command that stops to ask for input has its question put to the
user through the front's question (``agent/ask`` here, a headless client that declared
``ask``); the answer and a newline are typed into the command's input and it goes on. A
question dismissed, or no one to ask, ends the command as with the default ``"end"``. A
password prompt (the terminal's echo off) is asked as a secret, and its answer is never
written to the session log or an event.

Each call sets a ``timeout_seconds`` far beyond the test's own bound: a run that only ended
at the timeout fails the test's ``wait_for``, no clock is asserted."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from tether.client.headless import connect
from tether.sandbox import Backend
from tether_protocol import AskParams, RunEvent, ToolResultEvent

from ..sandboxes import BACKENDS, require_backend
from .conftest import script

LONG = 600  # the command's own timeout: never what ends it here
SECRET = "hunter2-s3cr3t-Zq"


def _options(tmp_path: Path, command: str, **more: Any) -> dict[str, Any]:
    call = {"name": "bash", "arguments": {"command": command, "timeout_seconds": LONG}}
    return {
        "provider": "scripted",
        "script": script({"toolCalls": [call]}, {"text": "done"}),
        "stateDir": str(tmp_path / "state"),
        "autoApprove": ["bash"],
        **more,
    }


async def _run_asked(
    workspace: Path, options: dict[str, Any], answers: list[str | None]
) -> tuple[ToolResultEvent, list[AskParams], list[RunEvent]]:
    """Run the scripted ``bash`` call, the client answering each question in turn (None:
    dismissed); its result, the questions as asked, and every event."""
    asked: list[AskParams] = []
    queue = iter(answers)

    async def asker(params: Any) -> dict[str, Any]:
        asked.append(AskParams.model_validate(params, strict=False))
        answer = next(queue)
        return {} if answer is None else {"answer": answer}

    events: list[RunEvent] = []
    async with connect(workspace, options, asker=asker) as client:
        client.on_event = events.append
        with anyio.fail_after(60):
            result = await client.run("go", runId="r1")
    assert result["outcome"] == "done"
    [tool_result] = [e for e in events if isinstance(e, ToolResultEvent)]
    return tool_result, asked, events


async def test_with_ask_the_user_answers_the_question_and_the_command_goes_on(
    workspace: Path, tmp_path: Path
) -> None:
    command = 'read -p "Continue? " x; echo "got=$x"'
    options = _options(tmp_path, command, commandInput="ask")
    result, asked, _ = await _run_asked(workspace, options, ["yes"])
    assert result.ok, result.output
    assert "got=yes" in result.output, result.output
    assert "waited for input" not in result.output
    [question] = asked
    assert question.run_id == "r1" and question.call_id
    assert "Continue? " in question.question
    assert not question.secret


async def test_the_question_is_shown_escaped(workspace: Path, tmp_path: Path) -> None:
    command = r"printf 'Go\033]0;owned\007 on\342\200\256? '; read x; echo \"got=$x\""
    options = _options(tmp_path, command, commandInput="ask")
    result, asked, _ = await _run_asked(workspace, options, ["y"])
    assert "got=y" in result.output, result.output
    [question] = asked
    assert "\x1b" not in question.question and "\x07" not in question.question
    assert "\u202e" not in question.question
    assert "\\x1b]0;owned\\x07" in question.question, question.question


async def test_the_lines_before_the_question_are_shown_with_it(
    workspace: Path, tmp_path: Path
) -> None:
    command = r"printf '1) apple\n\033[31m2) pear\033[0m\n'; read -p 'Choose: ' x; echo \"got=$x\""
    options = _options(tmp_path, command, commandInput="ask")
    result, asked, _ = await _run_asked(workspace, options, ["2"])
    assert "got=2" in result.output, result.output
    [question] = asked
    assert "It printed:\n1) apple\n2) pear\nChoose: \n" in question.question, question.question


async def test_a_dismissed_question_ends_the_command_naming_it(
    workspace: Path, tmp_path: Path
) -> None:
    command = 'read -p "Continue? " x; echo "got=$x"'
    options = _options(tmp_path, command, commandInput="ask")
    result, asked, _ = await _run_asked(workspace, options, [None])
    assert len(asked) == 1
    assert not result.ok
    assert "the command waited for input: `Continue? `" in result.output, result.output
    assert "put to the user, who did not answer it" in result.output
    assert "got=" not in result.output.split("\n", 1)[1]


async def test_an_empty_answer_is_enter_alone_and_takes_the_default(
    workspace: Path, tmp_path: Path
) -> None:
    command = 'read -p "Install? [Y/n] " x; echo "got=[${x:-Y}]"'
    options = _options(tmp_path, command, commandInput="ask")
    result, asked, _ = await _run_asked(workspace, options, [""])
    assert result.ok, result.output
    assert "got=[Y]" in result.output, result.output
    [question] = asked
    assert question.enter_alone is True
    assert "an empty answer: Enter alone" in question.question


async def test_each_question_of_a_command_is_asked_in_turn(workspace: Path, tmp_path: Path) -> None:
    command = 'read -p "Name? " a; read -p "Age? " b; echo "got=$a/$b"'
    options = _options(tmp_path, command, commandInput="ask")
    result, asked, _ = await _run_asked(workspace, options, ["ann", "7"])
    assert "got=ann/7" in result.output, result.output
    # Each answer shows where it was typed, so the second question is the line it asks on
    # (the terminal's echo, read later, had ended that line: "It printed no question").
    assert "Name? ann\nAge? 7\ngot=ann/7\n" in result.output, result.output
    assert "It printed:\nName? \n" in asked[0].question, asked[0].question
    assert "It printed:\nName? ann\nAge? \n" in asked[1].question, asked[1].question


async def test_a_programs_second_question_is_asked_with_the_first_answer_above_it(
    workspace: Path, tmp_path: Path
) -> None:
    # Python's input() writes its question to its output (a pipe here), not its terminal.
    program = "print('got=' + input('Continue? ')); print('i=' + input('Install? '))"
    options = _options(tmp_path, f'python3 -c "{program}"', commandInput="ask")
    result, asked, _ = await _run_asked(workspace, options, ["yes", "no"])
    assert "Continue? yes\ngot=yes\nInstall? no\ni=no\n" in result.output, result.output
    second = asked[1].question
    assert "It printed:\nContinue? yes\ngot=yes\nInstall? \n" in second, second


async def test_by_default_no_one_is_asked(workspace: Path, tmp_path: Path) -> None:
    command = 'read -p "Continue? " x; echo "got=$x"'
    result, asked, _ = await _run_asked(workspace, _options(tmp_path, command), ["yes"])
    assert asked == []
    assert "the command waited for input: `Continue? `" in result.output, result.output


async def test_with_no_one_to_ask_the_command_ends_as_by_default(
    workspace: Path, tmp_path: Path
) -> None:
    command = 'read -p "Continue? " x; echo "got=$x"'
    events: list[RunEvent] = []
    options = _options(tmp_path, command, commandInput="ask")
    async with connect(workspace, options) as client:  # declares no ask
        client.on_event = events.append
        with anyio.fail_after(60):
            await client.run("go", runId="r1")
    [result] = [e for e in events if isinstance(e, ToolResultEvent)]
    assert "the command waited for input: `Continue? `" in result.output, result.output


async def test_an_untrusted_project_cannot_turn_asking_on(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "config.toml").write_text('commandInput = "ask"\n')
    command = 'read -p "Continue? " x; echo "got=$x"'
    result, asked, _ = await _run_asked(workspace, _options(tmp_path, command), ["yes"])
    assert asked == []
    assert "the command waited for input: `Continue? `" in result.output, result.output


async def test_a_password_is_asked_as_a_secret_and_never_recorded(
    workspace: Path, tmp_path: Path
) -> None:
    digest = hashlib.sha256(SECRET.encode()).hexdigest()  # the command holds no secret
    program = (
        "import getpass, hashlib; "
        "typed = hashlib.sha256(getpass.getpass('Password: ').encode()).hexdigest(); "
        f"print('matched' if typed == {digest!r} else 'wrong')"
    )
    command = f'python3 -c "{program}"'
    options = _options(tmp_path, command, commandInput="ask")
    result, asked, events = await _run_asked(workspace, options, [SECRET])
    assert "matched" in result.output, result.output
    [question] = asked
    assert question.secret
    assert "Password: " in question.question
    assert SECRET not in json.dumps([e.model_dump(mode="json") for e in events])
    state = tmp_path / "state"
    logs = [p for p in state.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in logs)  # the session log is there
    for path in logs:
        assert SECRET.encode() not in path.read_bytes(), path


NODE_READLINE = """\
const rl = require("readline").createInterface({input: process.stdin, output: process.stdout});
rl.question("Your name? ", (a) => { console.log("got=" + a); rl.close(); });
"""
ASYNCIO_PIPE = """\
import asyncio, sys
async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print("Your name? ", end="", flush=True)
    print("got=" + (await reader.readline()).decode())
asyncio.run(main())
"""


@pytest.mark.parametrize(
    ("program", "run"),
    [(NODE_READLINE, "node"), (ASYNCIO_PIPE, "python3")],
    ids=["node", "asyncio"],
)
async def test_a_program_asking_in_its_event_loop_gets_the_answer(
    workspace: Path, tmp_path: Path, program: str, run: str
) -> None:
    if shutil.which(run) is None:
        pytest.skip(f"{run} is not installed")
    (workspace / "asks").write_text(program)
    options = _options(tmp_path, f"{run} asks", commandInput="ask")
    result, asked, _ = await _run_asked(workspace, options, ["ann"])
    assert "got=ann" in result.output, result.output
    assert "Your name? " in asked[0].question


async def test_a_question_asking_a_password_hides_the_answer_even_with_echo_on(
    workspace: Path, tmp_path: Path
) -> None:
    command = 'read -p "Enter passphrase: " pw; echo "length=${#pw}"'
    options = _options(tmp_path, command, commandInput="ask")
    result, asked, events = await _run_asked(workspace, options, [SECRET])
    assert f"length={len(SECRET)}" in result.output, result.output
    assert asked[0].secret
    assert SECRET not in json.dumps([e.model_dump(mode="json") for e in events])
    for path in (p for p in (tmp_path / "state").rglob("*") if p.is_file()):
        assert SECRET.encode() not in path.read_bytes(), path


async def test_control_characters_of_an_answer_are_not_typed(
    workspace: Path, tmp_path: Path
) -> None:
    """A line-editing key (``^U`` kills the line, ``^D`` ends the input) in an answer is not
    typed into the command: only the text."""
    command = 'read -p "Name? " a; echo "got=[$a]"'
    options = _options(tmp_path, command, commandInput="ask")
    result, _, _ = await _run_asked(workspace, options, ["ab\x15cd\x04\x7f"])
    assert "got=[abcd]" in result.output, result.output


async def test_a_question_left_unanswered_ends_the_command_at_the_approval_timeout(
    workspace: Path, tmp_path: Path
) -> None:
    asked = anyio.Event()
    never = anyio.Event()

    async def asker(params: Any) -> dict[str, Any]:
        asked.set()
        await never.wait()  # a person who walked away
        return {"answer": "too late"}

    command = 'read -p "Continue? " x; echo "got=$x"'
    options = {**_options(tmp_path, command, commandInput="ask"), "approvalTimeoutSeconds": 0.5}
    events: list[RunEvent] = []
    async with connect(workspace, options, asker=asker) as client:
        client.on_event = events.append
        with anyio.fail_after(60):
            await client.run("go", runId="r1")
        assert asked.is_set()
    [result] = [e for e in events if isinstance(e, ToolResultEvent)]
    assert "the command waited for input: `Continue? `" in result.output, result.output


@pytest.mark.parametrize("backend", BACKENDS)
async def test_in_the_sandbox_the_answer_reaches_the_command(
    workspace: Path, tmp_path: Path, backend: Backend
) -> None:
    require_backend(backend)
    command = 'read -p "Overwrite? [y/N] " x; echo "got=$x"'
    options = _options(tmp_path, command, commandInput="ask", sandbox=backend)
    result, asked, _ = await _run_asked(workspace, options, ["y"])
    assert f"in the {backend} sandbox" in result.output
    assert "got=y" in result.output, result.output
    assert "Overwrite? [y/N] " in asked[0].question
