"""Sandboxed commands end to end through a real ``tether serve`` (issue 17 item 4), on each
backend: with ``sandbox`` set, a command no rule decides runs unasked inside the walls
(the ``approval`` event names the sandbox); the walls hold (no write outside the
workspace, no ``~/.ssh``, no 127.0.0.1); a command the walls stopped is asked again with
the reason and runs outside only when allowed; a deny rule still refuses; ``off`` asks."""

from __future__ import annotations

import asyncio
import socket
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tether.sandbox import Backend

from ..sandboxes import BACKENDS, require_backend
from ..waiting import wait_until
from .calls import bash, one_call_a_turn
from .cli import configured_project, tether
from .conftest import Editor, serving

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- e2e-not-a-real-key"


@asynccontextmanager
async def served(
    tmp_path: Path, workspace: Path, sandbox: str, *calls: dict[str, Any]
) -> AsyncIterator[Editor]:
    """A server with ``sandbox`` set, ``$HOME`` a fake home holding a private key (outside
    ``/tmp``, which the sandbox hides anyway), whose model makes ``calls``, one per turn;
    every approval denied unless the test says."""
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="tether-e2e-home-") as made:
        home = Path(made)
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id_rsa").write_text(SECRET)
        async with serving(tmp_path / "state", env={"HOME": str(home)}) as editor:
            editor.approve = lambda params: {"decision": "deny"}
            options = {"sandbox": sandbox}
            await editor.open_session(workspace, options=options, script=one_call_a_turn(*calls))
            yield editor


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    require_backend(request.param)
    chosen: Backend = request.param
    return chosen


async def test_a_command_runs_unasked_in_the_sandbox_and_the_event_says_so(
    tmp_path: Path, workspace: Path, backend: Backend
) -> None:
    async with served(
        tmp_path, workspace, backend, bash("echo made > made.txt && cat made.txt"), bash("ls")
    ) as editor:
        result = await editor.run(prompt="go", runId="r1")
        events = editor.approval_events("r1")
    assert result["outcome"] == "done"
    assert editor.approvals == []  # nothing was asked
    assert [(e.decision, e.sandbox) for e in events] == [("auto", backend), ("auto", backend)]
    assert events[1].rules is not None  # `ls`: a built-in rule allowed it, in the sandbox too
    assert (workspace / "made.txt").read_text() == "made\n"
    first = editor.tool_results("r1")[0]
    assert first.ok and f"in the {backend} sandbox" in first.output


@pytest.fixture
def outside() -> Iterator[Path]:
    """A path in a folder the sandbox shows read-only (removed if a broken wall let it be)."""
    path = Path("/var/tmp") / f"tether-e2e-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


async def test_the_walls_hold_and_a_stopped_command_is_asked_again_with_why(
    tmp_path: Path, workspace: Path, backend: Backend, outside: Path
) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        calls = [
            bash("cat ~/.ssh/id_rsa > leaked.txt"),
            bash(f"echo x > {outside}"),
            bash(f"exec 3<>/dev/tcp/127.0.0.1/{port}"),
        ]
        async with served(tmp_path, workspace, backend, *calls) as editor:
            await editor.run(prompt="go", runId="r1")
        with pytest.raises(BlockingIOError):  # no connection reached the listener
            listener.accept()
    assert not outside.exists()
    assert SECRET not in (workspace / "leaked.txt").read_text()
    outputs = [r.output for r in editor.tool_results("r1")]
    assert len(outputs) == 3 and not any(SECRET in o for o in outputs)
    asked = [a["title"] for a in editor.approvals]
    # The write and the connection were stopped by the walls: asked again, saying why
    # (the key's cat too under Landlock, whose refusal reads "Permission denied").
    assert asked[-2].startswith(f"Run echo x > {outside} — outside the sandbox: in it,")
    assert asked[-1].startswith("Run exec 3<>/dev/tcp") and "outside the sandbox" in asked[-1]
    assert "network" in asked[-1]
    assert len(asked) == (3 if backend == "landlock" else 2)
    assert "was not allowed" in outputs[1] and "was not allowed" in outputs[2]
    decisions = [(e.decision, e.sandbox) for e in editor.approval_events("r1")]
    assert decisions.count(("auto", backend)) == 3 and decisions.count(("deny", None)) == len(asked)


async def test_allowed_outside_after_the_walls_stopped_it_it_runs_unsandboxed(
    tmp_path: Path, workspace: Path, backend: Backend
) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo reached"
        async with served(tmp_path, workspace, backend, bash(command)) as editor:
            editor.approve = lambda params: {"decision": "allow"}
            await editor.run(prompt="go", runId="r1")
        listener.settimeout(10)
        accepted, _ = listener.accept()  # the run outside the sandbox connected
        accepted.close()
    [asked] = editor.approvals
    assert "outside the sandbox" in asked["title"]
    [result] = editor.tool_results("r1")
    assert result.ok and "reached" in result.output
    assert f"in the {backend} sandbox:" not in result.output  # it ran outside
    assert result.output.startswith("Note: in the sandbox it needs ")
    decisions = [(e.decision, e.sandbox) for e in editor.approval_events("r1")]
    assert decisions == [("auto", backend), ("allow", None)]


async def test_deny_and_ask_rules_still_apply_and_an_unreadable_command_is_asked(
    tmp_path: Path, workspace: Path, backend: Backend
) -> None:
    calls = [
        bash("rm -f README.md"),
        bash("touch asked.txt"),
        bash("for f in *; do rm -f $f; done"),
    ]
    async with served(tmp_path, workspace, backend, *calls) as editor:
        for pattern, decision in [("rm *", "deny"), ("touch *", "ask")]:
            rule = {"tool": "bash", "pattern": pattern, "decision": decision, "scope": "user"}
            await editor.client.protocol.send_request_async("agent/rules/add", {"rule": rule})
        await editor.run(prompt="go", runId="r1")
    decisions = [(e.decision, e.sandbox) for e in editor.approval_events("r1")]
    assert decisions == [("denied-by-default", None), ("deny", None), ("deny", None)]
    commands = [c["arguments"]["command"] for c in calls[1:]]
    assert [a["preview"]["command"] for a in editor.approvals] == commands
    assert (workspace / "README.md").exists() and not (workspace / "asked.txt").exists()


async def test_with_the_sandbox_off_commands_are_asked_as_before(
    tmp_path: Path, workspace: Path
) -> None:
    async with served(tmp_path, workspace, "off", bash("echo made > made.txt")) as editor:
        await editor.run(prompt="go", runId="r1")
    assert len(editor.approvals) == 1
    assert [(e.decision, e.sandbox) for e in editor.approval_events("r1")] == [("deny", None)]
    assert not (workspace / "made.txt").exists()


def tether_config(tmp_path: Path, user: str, project: str = "") -> str:
    """``tether config`` in a project with this user config file and project file."""
    root, env = configured_project(tmp_path, user, project)
    done = tether(["config"], root, env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_tether_config_shows_the_sandbox_it_would_use(tmp_path: Path, backend: Backend) -> None:
    shown = tether_config(tmp_path, f'sandbox = "{backend}"\n').splitlines()
    assert f"sandbox: {backend} → {backend} (" in shown[-1]
    off = tether_config(tmp_path, "").splitlines()[-1]
    assert off.startswith("sandbox: off — commands are asked") and backend in off


def test_a_cloned_project_cannot_turn_the_sandbox_on(tmp_path: Path) -> None:
    shown = tether_config(tmp_path, "", project='sandbox = "auto"\n')
    assert shown.splitlines()[-1].startswith("sandbox: off")
    assert "ignored: sandbox (the project is not trusted)" in shown


async def test_without_a_usable_sandbox_the_user_is_told_and_commands_are_asked(
    tmp_path: Path, workspace: Path
) -> None:
    # bash is on PATH, bwrap is not: the "bwrap" the setting asks for cannot be had.
    only_bash = tmp_path / "bin"
    only_bash.mkdir()
    (only_bash / "bash").symlink_to("/bin/bash")
    (only_bash / "touch").symlink_to("/usr/bin/touch")
    async with serving(tmp_path / "state", env={"PATH": str(only_bash)}) as editor:
        editor.approve = lambda params: {"decision": "deny"}
        await editor.open_session(
            workspace, options={"sandbox": "bwrap"}, script=one_call_a_turn(bash("touch x"))
        )
        await editor.run(prompt="go", runId="r1")
        await wait_until(lambda: editor.client.messages, "the warning")
    assert len(editor.approvals) == 1 and not (workspace / "x").exists()
    assert [(e.decision, e.sandbox) for e in editor.approval_events("r1")] == [("deny", None)]
    assert [m.message for m in editor.client.messages] == [
        "Tether: sandbox 'bwrap': none usable — bwrap: not installed (Debian/Ubuntu "
        "package bubblewrap); commands are asked as without one"
    ]


def sleepers(mark: str) -> list[Path]:
    """The processes whose command line holds ``mark``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if mark.encode() in cmdline.read_bytes():
                found.append(cmdline)
        except OSError:
            continue
    return found


async def test_cancelling_a_run_kills_everything_its_sandboxed_command_started(
    tmp_path: Path, workspace: Path, backend: Backend
) -> None:
    mark = f"300.{uuid.uuid4().int % 10**9:09d}"  # durations no other test's sleeps use
    command = f"sleep {mark}1 & sleep {mark}2 & touch ready; sleep {mark}3"
    async with served(tmp_path, workspace, backend, bash(command)) as editor:
        running = asyncio.create_task(editor.run(prompt="go", runId="r1"))
        await wait_until(lambda: (workspace / "ready").exists(), "the command to start")
        assert len(sleepers(mark)) >= 3
        await editor.client.protocol.send_request_async("agent/cancel", {"runId": "r1"})
        result = await asyncio.wait_for(running, 30)
    assert result["outcome"] == "cancelled"
    await wait_until(lambda: not sleepers(mark), "every sleep of the command to be gone")
