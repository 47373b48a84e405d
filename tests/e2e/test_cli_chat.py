"""`tether` in the terminal is a conversation (issue 27): the real binary on a
pseudo-terminal whose screen is emulated (pyte), typed at as a person would."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.acp.terminal_ui import PtyScreen

from .cli import TETHER
from .test_cli_terminal import assert_nothing_left, environment, scripted

PROMPT_MARK = "› "
CONTROLLING = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)
"""Makes the pty the program's controlling terminal (its session has none yet: an
inherited descriptor does not make one), as a terminal window does: Ctrl-C is SIGINT."""


def bash(command: str) -> dict[str, Any]:
    return {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}


def write(path: str, content: str) -> dict[str, Any]:
    return {"toolCalls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


@asynccontextmanager
async def chat(
    env: dict[str, str],
    cwd: Path,
    *argv: str,
    columns: int = 100,
    command: Sequence[str] = TETHER,
) -> AsyncIterator[PtyScreen]:
    """``tether ARGV`` on a terminal. pyte answers no cursor-position request, so
    prompt_toolkit is told not to ask (its documented switch)."""
    env = env | {"PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1"}
    program = [sys.executable, "-c", CONTROLLING, *command, *argv]
    async with PtyScreen.spawn(program, env=env, cwd=cwd, columns=columns) as ui:
        yield ui


def prompts(ui: PtyScreen) -> int:
    """How many input prompts the screen shows (one per line that starts with it)."""
    return sum(1 for line in ui.lines() if line.startswith(PROMPT_MARK.strip()))


async def ask(ui: PtyScreen, text: str) -> None:
    """Wait for a fresh prompt, type ``text`` and Enter."""
    shown = prompts(ui)
    await ui.wait_until(lambda: ui.lines()[-1:] != [] and _at_prompt(ui), "the prompt")
    del shown
    ui.type(text)
    ui.press("enter")


def _at_prompt(ui: PtyScreen) -> bool:
    lines = [line for line in ui.lines() if line]
    return bool(lines) and lines[-1].strip() == PROMPT_MARK.strip()


async def leave(ui: PtyScreen) -> None:
    """Ctrl-D once the prompt is back (typed earlier, it ends the chat once the turn ends:
    ``test_cli_typeahead.py``)."""
    await ui.wait_until(lambda: _at_prompt(ui), "the prompt")
    ui.press("ctrl-d")


@pytest.mark.parametrize("command", [("chat",), ()], ids=["tether chat", "tether alone"])
async def test_two_turns_in_one_session_then_ctrl_d(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    from tests.providers.fakes import FakeApi, Sse, openai_stream

    env = environment(tmp_path)
    env.pop("TETHER_PROVIDER", None)
    env.pop("OPENAI_API_KEY", None)
    with FakeApi() as fake:
        fake.queue(Sse(openai_stream("first ", "answer")), Sse(openai_stream("second answer")))
        # The first-run message says "pass --provider": `tether --provider …` takes it too.
        argv = ("--provider", "openai", "--base-url", fake.url + "/v1", "--model", "m")
        async with chat(env, tmp_path, *command, *argv) as ui:
            await ask(ui, "hello")
            await ui.wait_for("first answer")
            await ui.wait_for(r"done · 1 step · 100 in / 20 out tokens · ")
            await ask(ui, "and again")
            await ui.wait_for("second answer")
            await ui.wait_until(lambda: _at_prompt(ui), "the prompt after the second turn")
            ui.press("ctrl-d")
            assert await ui.wait_for_exit() == 0, ui.text()
        first, second = fake.requests
    said = [m.get("content") for m in second.body["messages"]]
    assert said[-3:] == ["hello", "first answer", "and again"], said  # the first turn carried
    listed = subprocess.run(
        [*TETHER, "sessions"], env=env, capture_output=True, text=True, timeout=60
    )
    rows = listed.stdout.splitlines()[1:]
    assert len(rows) == 1 and " 2 " in rows[0], listed.stdout  # one session, two runs
    assert_nothing_left(env)


def test_tether_alone_without_a_terminal_prints_usage_and_exits_2(tmp_path: Path) -> None:
    out = subprocess.run(
        TETHER,
        env=environment(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2
    assert out.stderr.startswith("usage: tether") and "tether run" in out.stderr
    assert out.stdout == ""


async def test_ctrl_c_cancels_the_turn_and_the_chat_goes_on(tmp_path: Path) -> None:
    script = {"turns": [{"text": "late"}], "delaySeconds": 30}
    env = scripted(tmp_path, script)
    async with chat(env, tmp_path) as ui:
        await ask(ui, "slow one")
        await ui.wait_for("── step 1")
        ui.press("ctrl-c")
        await ui.wait_for(r"interrupted · 1 step")
        await ui.wait_until(lambda: _at_prompt(ui), "a next prompt")
        assert "(no answer)" not in ui.text()
        assert "^C" not in ui.text()  # the terminal did not echo the key into the turn
        ui.press("ctrl-c")  # on an empty prompt: a warning, not an exit
        await ui.wait_for("Ctrl-D or /exit leaves")
        await ask(ui, "/exit")
        assert await ui.wait_for_exit() == 0, ui.text()
    assert_nothing_left(env)


async def test_unknown_command_help_and_new_session(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [{"text": "one"}, {"text": "two"}]})
    async with chat(env, tmp_path) as ui:
        await ask(ui, "/frobnicate")
        await ui.wait_for("unknown command /frobnicate: /help lists the commands")
        await ask(ui, "/help")
        await ui.wait_for(r"/undo\s+put back the last run's edits")
        await ui.wait_for(r"/compact\s+summarize the earlier turns of the session")
        await ui.wait_for(r"/exit\s+leave")
        await ask(ui, "first")
        await ui.wait_for("done · 1 step")
        await ask(ui, "/new")
        await ui.wait_for("a new session starts with the next message")
        await ask(ui, "second")
        await ui.wait_until(lambda: ui.text().count("done · 1 step") == 2, "the second turn")
        await leave(ui)
        assert await ui.wait_for_exit() == 0, ui.text()
    listed = subprocess.run(
        [*TETHER, "sessions"], env=env, capture_output=True, text=True, timeout=60
    )
    assert len(listed.stdout.splitlines()[1:]) == 2, listed.stdout  # /new: two sessions
    assert_nothing_left(env)


async def test_an_approval_then_undo_puts_the_file_back(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("old\n")
    env = scripted(tmp_path, {"turns": [write("notes.txt", "new\n"), {"text": "rewrote it"}]})
    async with chat(env, tmp_path) as ui:
        await ask(ui, "rewrite notes")
        await ui.wait_for(r"\[n\] deny  \[\?\] more")
        ui.type("y")
        await ui.wait_for("rewrote it")
        await ui.wait_until(lambda: _at_prompt(ui), "the prompt")
        assert (tmp_path / "notes.txt").read_text() == "new\n"
        await ask(ui, "/diff")
        await ui.wait_for(r"--- a/notes\.txt\n\+\+\+ b/notes\.txt\n@@ -1 \+1 @@\n-old\n\+new")
        await ask(ui, "/undo")
        await ui.wait_for("put back: notes.txt")
        assert (tmp_path / "notes.txt").read_text() == "old\n"
        await ask(ui, "/diff")
        await ui.wait_for(r"this session has changed no file \(or its changes were undone\)")
        await leave(ui)
        assert await ui.wait_for_exit() == 0, ui.text()
    assert_nothing_left(env)


async def test_resume_a_listed_session(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [{"text": "one"}], "repeatLast": True})
    async with chat(env, tmp_path) as ui:
        await ask(ui, "remember this")
        await ui.wait_for("done · 1 step")
        await leave(ui)
        assert await ui.wait_for_exit() == 0, ui.text()
    first = json.loads((tmp_path / "state" / "terminal-folders.json").read_text())
    [session] = first
    async with chat(env, tmp_path) as ui:
        await ask(ui, "/sessions")
        await ui.wait_for(rf"1\s+{session}")
        await ask(ui, "/resume 1")
        await ui.wait_for(f"resumed session {session}")
        await ask(ui, "go on")
        await ui.wait_for("done · 1 step")
        await leave(ui)
        assert await ui.wait_for_exit() == 0, ui.text()
    assert json.loads((tmp_path / "state" / "terminal-folders.json").read_text()) == first
    assert_nothing_left(env)


async def test_tab_completes_commands_and_paths_and_alt_enter_adds_a_line(
    tmp_path: Path,
) -> None:
    from tests.providers.fakes import FakeApi, Sse, openai_stream

    (tmp_path / "shop.py").write_text("x = 1\n")
    env = environment(tmp_path, TETHER_PROVIDER="openai")
    env.pop("OPENAI_API_KEY", None)
    with FakeApi() as fake:
        fake.queue(Sse(openai_stream("seen")))
        argv = ("--base-url", fake.url + "/v1", "--model", "m")
        async with chat(env, tmp_path, "chat", *argv) as ui:
            await ui.wait_until(lambda: _at_prompt(ui), "the prompt")
            ui.type("/un")
            ui.press("tab")
            await ui.wait_for(r"› /undo")
            ui.press("enter")
            await ui.wait_for("nothing to undo: no run yet")
            await ui.wait_until(lambda: _at_prompt(ui), "the prompt")
            ui.type("look at @sh")
            ui.press("tab")
            await ui.wait_for(r"› look at @shop\.py")
            ui.press("escape", "enter")  # Alt-Enter: a new line, not sent
            ui.type("and say so")
            ui.press("enter")
            await ui.wait_for("done · 1 step")
            await leave(ui)
            assert await ui.wait_for_exit() == 0, ui.text()
        [request] = fake.requests
    said = str(request.body["messages"][-1]["content"])
    assert "look at @shop.py\nand say so" in said, said


async def test_continue_resumes_the_latest_session_here(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [{"text": "one"}], "repeatLast": True})
    async with chat(env, tmp_path) as ui:
        await ask(ui, "first")
        await ui.wait_for("done · 1 step")
        await leave(ui)
        assert await ui.wait_for_exit() == 0, ui.text()
    [session] = json.loads((tmp_path / "state" / "terminal-folders.json").read_text())
    async with chat(env, tmp_path, "--continue", columns=200) as ui:
        await ui.wait_for(f"· session {session} ·")
        await ask(ui, "second")
        await ui.wait_for("done · 1 step")
        await leave(ui)
        assert await ui.wait_for_exit() == 0, ui.text()
    listed = subprocess.run(
        [*TETHER, "sessions"], env=env, capture_output=True, text=True, timeout=60
    )
    rows = listed.stdout.splitlines()[1:]
    assert len(rows) == 1 and " 2 " in rows[0], listed.stdout
    assert_nothing_left(env)


class Gated(list[str]):
    """A fake API's frames that stop before frame ``at`` until ``gate`` is set (the test
    sets it once the screen shows what it waits for: no sleep, no timing)."""

    def __init__(self, frames: list[str], at: int, gate: threading.Event) -> None:
        super().__init__(frames)
        self.at = at
        self.gate = gate

    def __iter__(self) -> Iterator[str]:
        for index, frame in enumerate(list.__iter__(self)):
            if index == self.at:
                assert self.gate.wait(60), "the test never opened the gate"
            yield frame


async def test_the_deny_reason_shows_as_typed_and_the_turn_is_quiet_again(
    tmp_path: Path,
) -> None:
    from tests.providers.fakes import FakeApi, Sse, openai_stream

    (tmp_path / "notes.txt").write_text("old\n")
    arguments = json.dumps({"path": "notes.txt", "content": "new\n"})
    gate = threading.Event()
    later = Gated(openai_stream("I left ", "notes.txt alone."), 2, gate)
    env = environment(tmp_path)
    env.pop("TETHER_PROVIDER", None)
    with FakeApi() as fake:
        fake.queue(
            Sse(openai_stream(calls=[("call_1", "write_file", [arguments])])), Sse(frames=later)
        )
        argv = ("--provider", "openai", "--base-url", fake.url + "/v1", "--model", "m")
        try:
            async with chat(env, tmp_path, *argv) as ui:
                await ask(ui, "rewrite notes")
                await ui.wait_for(r"\[n\] deny  \[\?\] more")
                ui.type("d")
                await ui.wait_for(r"why\? \(Enter skips\) >")
                ui.type("keep it as is")
                # The reason shows as it is typed (the turn had the terminal's echo off).
                await ui.wait_for(r"why\? \(Enter skips\) > keep it as is", within=15)
                ui.press("enter")
                await ui.wait_for("I left")
                ui.type("zzz")  # typed while the turn runs: held for the next prompt, unshown
                gate.set()
                await ui.wait_for("notes.txt alone.")
                await ui.wait_for(PROMPT_MARK + "zzz")
                assert ui.text().count("zzz") == 1, ui.text()
                ui.press("backspace", "backspace", "backspace")
                await leave(ui)
                assert await ui.wait_for_exit() == 0, ui.text()
        finally:
            gate.set()
        said = fake.requests[1].body["messages"]
    result = next(m for m in said if m["role"] == "tool")
    assert "keep it as is" in str(result["content"]), said
    assert (tmp_path / "notes.txt").read_text() == "old\n"
    assert_nothing_left(env)
