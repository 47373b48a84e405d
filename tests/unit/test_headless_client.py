"""The headless client's pieces: terminal approvals."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from tether.client.approver import PROMPT, TerminalApprover, colour_diff

DIFF_PARAMS = {
    "runId": "r",
    "callId": "c",
    "tool": "edit_file",
    "title": "Edit a.py",
    "arguments": {"path": "a.py"},
    "preview": {
        "kind": "diff",
        "uri": "file:///w/a.py",
        "diff": "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n",
    },
}
COMMAND_PARAMS = {
    **DIFF_PARAMS,
    "tool": "bash",
    "title": "Run make",
    "preview": {"kind": "command", "command": "make", "cwd": "/w"},
}


def approver(answers: list[str], yes: bool = False) -> tuple[TerminalApprover, io.StringIO]:
    out = io.StringIO()
    replies = iter(answers)
    return TerminalApprover(yes=yes, out=out, ask=lambda prompt: next(replies), color=False), out


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        (["a"], {"decision": "allow"}),
        (["A"], {"decision": "allow-always"}),
        (["d", ""], {"decision": "deny"}),
        (["d", "use pytest"], {"decision": "deny", "feedback": "use pytest"}),
        (["?", "maybe", "a"], {"decision": "allow"}),  # asks again until it understands
    ],
)
async def test_terminal_answers(answers: list[str], expected: dict[str, Any]) -> None:
    ask, out = approver(answers)
    assert await ask(DIFF_PARAMS) == expected
    assert "Edit a.py" in out.getvalue() and "-x\n+y" in out.getvalue()


async def test_yes_allows_and_commands_show_their_folder() -> None:
    ask, out = approver([], yes=True)
    assert await ask(COMMAND_PARAMS) == {"decision": "allow"}
    assert "$ make" in out.getvalue() and "(in /w)" in out.getvalue()


def test_colour_diff() -> None:
    coloured = colour_diff("--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n ctx\n", True)
    assert "\x1b[31m-x\x1b[0m" in coloured and "\x1b[32m+y\x1b[0m" in coloured
    assert colour_diff("-x\n", False) == "-x\n"


def test_a_wide_diff_line_goes_on_under_a_gutter_mark_in_its_colour() -> None:
    coloured = colour_diff("+abcdefghij\tk\n-12345\n 这是中文\n", True, columns=6)
    assert coloured.split("\n") == [
        "\x1b[32m+abcde\x1b[0m",
        "\x1b[32m↪fghij\x1b[0m",
        "\x1b[32m↪     \x1b[0m",  # the tab as drawn: to column 16
        "\x1b[32m↪k\x1b[0m",
        "\x1b[31m-12345\x1b[0m",
        " 这是",  # wide characters take two cells each
        "↪中文",
        "",
    ]
    assert colour_diff("+abcdefghij\n", False) == "+abcdefghij\n"  # a pipe: as it came


class FakeTty:
    """Standard input that says it is a terminal, read from a pipe the test writes to."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd


@pytest.fixture
def typed(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The write end of a pipe that stands in for the keyboard."""
    import os
    import sys

    read_end, write_end = os.pipe()
    monkeypatch.setattr(sys, "stdin", FakeTty(read_end))
    yield write_end
    for fd in (read_end, write_end):
        with contextlib.suppress(OSError):
            os.close(fd)


async def test_end_of_input_at_the_prompt_denies(typed: int) -> None:
    import os

    out = io.StringIO()
    ask = TerminalApprover(yes=False, out=out, color=False)
    os.close(typed)  # Ctrl-D on an empty line: the read returns nothing
    assert (await ask(DIFF_PARAMS))["decision"] == "deny"
    assert "denied (ended the input)" in out.getvalue()


async def test_an_interrupt_ends_the_open_question(typed: int) -> None:
    import anyio

    out = io.StringIO()
    ask = TerminalApprover(yes=False, out=out, color=False)
    answers: list[dict[str, Any]] = []

    async def answer() -> None:
        answers.append(await ask(DIFF_PARAMS))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(answer)
            while PROMPT not in out.getvalue():  # the question is on screen, nobody typed
                await anyio.wait_all_tasks_blocked()
            ask.interrupt()
    assert answers[0]["decision"] == "deny" and "denied (cancelled)" in out.getvalue()
    assert (await ask(DIFF_PARAMS))["decision"] == "deny"  # later questions are not asked


def test_a_spinner_turns_while_the_model_thinks_and_goes_when_it_answers() -> None:
    from tether.client.render import TerminalRenderer
    from tether_protocol import StepEvent, TextDeltaEvent

    out = io.StringIO()
    renderer = TerminalRenderer(out, color=True)
    renderer.tick()
    assert "thinking" not in out.getvalue()  # nobody asked the model yet
    renderer.render(StepEvent(run_id="r", seq=1, step=1))
    renderer.tick()
    assert "thinking" in out.getvalue()
    renderer.render(TextDeltaEvent(run_id="r", seq=2, text="Hello"))
    assert out.getvalue().endswith("\r\x1b[KHello")  # the spinner line is cleared first
    renderer.tick()
    assert out.getvalue().endswith("Hello")  # and stays away while the answer streams
    plain = io.StringIO()
    quiet = TerminalRenderer(plain, color=False)
    quiet.render(StepEvent(run_id="r", seq=1, step=1))
    quiet.tick()
    assert "thinking" not in plain.getvalue()  # no spinner in a pipe or a log


def command(line: str, *suggested: str) -> dict[str, Any]:
    """agent/approve params of a command, with the rules the server offers for it."""
    preview = {"kind": "command", "command": line, "cwd": "/w"}
    return {**COMMAND_PARAMS, "preview": preview, "suggestedPatterns": list(suggested) or None}


async def answered(params: dict[str, Any], *replies: str) -> tuple[list[str], dict[str, Any]]:
    """The prompts shown and the answer sent when the user types ``replies``."""
    asked: list[str] = []
    typed = iter(replies)

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(typed)

    answer = await TerminalApprover(yes=False, out=io.StringIO(), ask=ask, color=False)(params)
    return asked, answer


async def test_a_command_offers_the_servers_rules_and_sends_the_one_picked() -> None:
    params = command("ls -la src", "ls -la src", "ls *")
    asked, wide = await answered(params, "p")
    assert asked == [
        "[y] allow  [A] always this exact command  [p] always `ls *` in this project  "
        "[e] edit  [n] deny  [?] more > "
    ]
    assert wide == {
        "decision": "allow-always",
        "rule": {"pattern": "ls *", "scope": "project"},
    }
    _, exact = await answered(params, "A")  # the exact command, as a rule of this session
    assert exact == {
        "decision": "allow-always",
        "rule": {"pattern": "ls -la src", "scope": "session"},
    }


async def test_a_lone_wider_rule_is_offered_by_p_and_A_stays_this_exact_command() -> None:
    asked, answer = await answered(command("echo 'a b'", "echo *"), "A")
    assert "[p] always `echo *` in this project" in asked[0]
    assert answer == {"decision": "allow-always"}  # the server keeps this exact command


async def test_no_rule_is_offered_when_the_server_offers_none() -> None:
    # only the server proposes rules (and offers none wider for `pytest`)
    asked, answer = await answered(command("pytest -q"), "p", "A")
    assert "[p]" not in asked[0] and len(asked) == 2  # `p` offers nothing here: asked again
    assert answer == {"decision": "allow-always"}  # this exact command, as before
    asked, answer = await answered(command("rm -rf x", "rm -rf x"), "p", "A")
    assert "[p]" not in asked[0] and len(asked) == 2  # only the exact rule offered
    assert answer == {
        "decision": "allow-always",
        "rule": {"pattern": "rm -rf x", "scope": "session"},
    }


async def test_an_edit_offers_the_file_and_its_folders_rule_from_the_server() -> None:
    params = {**DIFF_PARAMS, "suggestedPatterns": ["src/a.py", "src/*.py"]}
    asked, folder = await answered(params, "p")
    assert asked == [
        "[y] allow  [A] always `src/a.py`  [p] always `src/*.py` in this project  "
        "[e] edit  [n] deny  [?] more > "
    ]
    assert folder == {
        "decision": "allow-always",
        "rule": {"pattern": "src/*.py", "scope": "project"},
    }
    _, file = await answered(params, "A")
    assert file == {"decision": "allow-always", "rule": {"pattern": "src/a.py", "scope": "session"}}
    asked, bare = await answered(DIFF_PARAMS, "A")  # none offered (a sensitive path)
    assert asked == [PROMPT] and bare == {"decision": "allow-always"}


async def test_a_held_server_stderr_is_relayed_before_its_exit_is_reported(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """`tether run` holds the stderr of the server it starts before checking the settings;
    once the server is used, everything it says reaches the user, its last line too."""
    import sys

    import anyio

    from tether.client.connection import ServerError
    from tether.client.headless import connect
    from tether.client.spawn import spawn_server

    # More than a pipe holds: a server whose stderr nobody read would block, then be killed.
    code = (
        "import os, sys\n"
        "os.close(1)\n"
        "for _ in range(500): sys.stderr.write('x' * 999 + '\\n')\n"
        "sys.stderr.write('tether: boom\\n')\n"
        "sys.exit(3)\n"
    )
    dying = [sys.executable, "-c", code]
    with anyio.fail_after(20):
        server = await spawn_server(tmp_path, dying, hold_stderr=True)
        with pytest.raises(BaseException) as raised:
            async with connect(tmp_path, {}, process=server):
                pass
    errors = raised.value.exceptions if isinstance(raised.value, BaseExceptionGroup) else []
    assert isinstance(raised.value, ServerError) or any(isinstance(e, ServerError) for e in errors)
    relayed = capfd.readouterr().err
    assert relayed.endswith("tether: boom\n") and relayed.count("x" * 999) == 500
