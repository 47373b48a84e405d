"""Background jobs in the terminal chat: the user lists the session's jobs with ``/jobs``
and stops one with ``/jobs stop ID``; a job still running when the chat ends is gone with
it. The real binary on a pseudo-terminal, typed at as a person would."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..waiting import wait_until
from .test_cli_chat import _at_prompt, ask, chat, leave
from .test_cli_terminal import assert_nothing_left, scripted

SERVE = "echo $$ > pid; echo 'ready on :8000'; exec sleep 300"


def background(command: str) -> dict[str, Any]:
    call = {"name": "bash", "arguments": {"command": command, "background": True}}
    return {"toolCalls": [call]}


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


async def test_jobs_lists_the_sessions_jobs_and_stops_one(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [background(SERVE), {"text": "it runs"}]})
    async with chat(env, tmp_path) as ui:
        await ask(ui, "start the server")
        await ui.wait_for(r"Run in the background \(it keeps running\): echo")
        await ui.wait_for(r"\[n\] deny  \[\?\] more")
        ui.type("y")
        await ui.wait_for("it runs")
        await ui.wait_until(lambda: _at_prompt(ui), "the prompt")
        pid = int((tmp_path / "pid").read_text())
        await ask(ui, "/jobs")
        await ui.wait_for(r"job-1 · running · \d+ s · echo \$\$ > pid; echo 'ready on :8000'")
        await ui.wait_for(r"· ready on :8000")
        assert not gone(pid)
        await ask(ui, "/jobs stop job-1")
        await ui.wait_for(r"stopped job-1 · stopped")
        await wait_until(lambda: gone(pid), "the stopped job's process gone")
        await ask(ui, "/jobs stop job-1")
        await ui.wait_for(r"not running: job-1 · stopped")
        await leave(ui)
        assert await ui.wait_for_exit() == 0, ui.text()
    assert_nothing_left(env)


async def test_a_job_still_running_ends_with_the_chat(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [background(SERVE), {"text": "it runs"}]})
    async with chat(env, tmp_path) as ui:
        await ask(ui, "start the server")
        await ui.wait_for(r"\[n\] deny  \[\?\] more")
        ui.type("y")
        await ui.wait_for("it runs")
        pid = int((tmp_path / "pid").read_text())
        assert not gone(pid)
        await leave(ui)
        assert await ui.wait_for_exit() == 0, ui.text()
    await wait_until(lambda: gone(pid), "the job's process gone with the chat")
    assert_nothing_left(env)
