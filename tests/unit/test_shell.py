"""run_command and the bash tool: exit codes, merged output, the cap, and no process left behind.

"Gone" below means no process of the group still runs. Zombies do not count: a killed
orphan waits for init to reap it, and some container inits do that only every second or
two, so ``os.killpg(pgid, 0)`` alone could keep succeeding for a while after the kill.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import ValidationError

from tether.errors import ToolError
from tether.host import NoBuffers
from tether.sandbox import runner
from tether.tools import shell
from tether.tools.base import ToolDeps
from tether.tools.shell import (
    DEFAULT_OUTPUT_LIMIT,
    KILL_GRACE_SECONDS,
    Bash,
    BashArgs,
    CommandOutcome,
    run_command,
)
from tether.workspace.folders import Workspace

from ..waiting import pid_written, wait_until

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="bash and process groups")

HAS_PROC = Path("/proc/self/stat").exists()
GRACE_NO_LOAD_REACHES = 60.0


def live_members(pgid: int) -> list[int]:
    """The pids of the group's processes that are not zombies (Linux, from /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, _ppid, pgrp = stat[stat.rindex(")") + 2 :].split()[:3]
        if int(pgrp) == pgid and state not in ("Z", "X"):
            members.append(int(entry))
    return members


def group_gone(pgid: int) -> bool:
    """True when no process of the group runs any more."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return HAS_PROC and not live_members(pgid)


def pid_gone(pid: int) -> bool:
    """True when the process has exited (it may be a zombie awaiting its reaper)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    if not HAS_PROC:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] in ("Z", "X")


@pytest.fixture
def groups() -> Iterator[list[int]]:
    """Process groups the test started (pass ``groups.append`` as on_start); killed at the end.

    The tests assert that the groups are gone; this is only the safety net that keeps a
    failing test from leaving sleeps behind.
    """
    started: list[int] = []
    yield started
    for pgid in started:
        if not group_gone(pgid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)


@pytest.fixture
def signals(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The signals ``run_command`` sends its command's group, in order (each still sent)."""
    sent: list[int] = []
    send = shell._signal_group

    def recorded(pgid: int, sig: int) -> bool:
        sent.append(sig)
        return send(pgid, sig)

    monkeypatch.setattr(shell, "_signal_group", recorded)
    return sent


async def run(
    command: str,
    cwd: Path,
    groups: list[int],
    *,
    timeout: float = 10.0,  # noqa: ASYNC109 - passed on to run_command
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    env: dict[str, str] | None = None,
) -> CommandOutcome:
    """``run_command`` with the group recorded for the ``groups`` safety net."""
    return await run_command(
        command, cwd, timeout, output_limit=output_limit, env=env, on_start=groups.append
    )


# -- exit codes, output, environment ----------------------------------------------------------


@pytest.mark.parametrize(("command", "code"), [("true", 0), ("false", 1), ("exit 3", 3)])
async def test_exit_code(tmp_path: Path, groups: list[int], command: str, code: int) -> None:
    outcome = await run(command, tmp_path, groups)
    assert outcome.exit_code == code
    assert outcome.output == ""
    assert outcome.timed_out is False
    assert outcome.truncated_chars == 0


async def test_death_by_signal_reads_as_128_plus_signal(tmp_path: Path, groups: list[int]) -> None:
    outcome = await run("echo before; kill -KILL $$", tmp_path, groups)
    assert outcome.exit_code == 128 + signal.SIGKILL
    assert outcome.output == "before\n"
    assert outcome.timed_out is False


async def test_stdout_and_stderr_are_merged_in_order(tmp_path: Path, groups: list[int]) -> None:
    outcome = await run(
        "echo out1; echo err1 >&2; echo out2; echo err2 >&2; exit 4", tmp_path, groups
    )
    assert outcome.output == "out1\nerr1\nout2\nerr2\n"
    assert outcome.exit_code == 4


@pytest.fixture
def open_stdin() -> Iterator[None]:
    """Make this process's fd 0 a pipe nobody writes to, so inheriting it would block."""
    read_end, write_end = os.pipe()
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)


async def test_the_input_terminal_is_the_users_alone(tmp_path: Path, groups: list[int]) -> None:
    """No one else may write to it (devpts makes a terminal group-writable for ``write``):
    what the command's terminal carries is the command's own."""
    outcome = await run(
        "stat -L -c %a /proc/self/fd/0; test -t 0 && echo terminal", tmp_path, groups
    )
    assert outcome.output == "600\nterminal\n", outcome.output


@pytest.mark.usefixtures("open_stdin")
async def test_input_no_one_types_ends_a_reader_saying_it_asked(
    tmp_path: Path, groups: list[int]
) -> None:
    """Its input is a terminal no one types into (``tools/input_wait.py``): a command that
    reads it is ended, not timed out (a wall-clock bound would add nothing but flakes)."""
    outcome = await run('read -r line < /dev/null; echo "read status $?"; cat', tmp_path, groups)
    assert outcome.timed_out is False
    assert outcome.output == "read status 1\n"
    assert outcome.asked == ""  # it printed no question: its last line is a full one
    assert outcome.exit_code is None


@pytest.fixture
def real_tmp(tmp_path: Path) -> Path:
    """tmp_path with symlinks resolved, as ``pwd -P`` prints it."""
    return tmp_path.resolve()


async def test_runs_in_cwd(real_tmp: Path, groups: list[int]) -> None:
    outcome = await run("pwd -P", real_tmp, groups)
    assert outcome.output == f"{real_tmp}\n"


@pytest.mark.skipif(not HAS_PROC, reason="reads /proc")
async def test_runs_in_a_session_and_group_of_its_own(tmp_path: Path, groups: list[int]) -> None:
    # Fields 5 and 6 of /proc/PID/stat are the process group and the session (comm is
    # "bash" or, if bash execs the last command, "cut": no spaces to shift them). The
    # group's leader is the trampoline that started bash (or bash itself, off Linux).
    outcome = await run("cut -d' ' -f5,6 /proc/$$/stat", tmp_path, groups)
    [pgid] = groups
    assert outcome.output == f"{pgid} {pgid}\n"
    assert pgid != os.getpgid(0)


async def test_unicode_output(tmp_path: Path, groups: list[int]) -> None:
    outcome = await run("printf 'héllo ✓ 日本 🙂\\n'", tmp_path, groups)
    assert outcome.output == "héllo ✓ 日本 🙂\n"


async def test_invalid_utf8_is_replaced(tmp_path: Path, groups: list[int]) -> None:
    outcome = await run("printf 'a\\377b\\n'", tmp_path, groups)
    assert outcome.output == "a\ufffdb\n"


async def test_multibyte_characters_split_across_reads(tmp_path: Path, groups: list[int]) -> None:
    # 150 000 bytes of 3-byte characters: pipe reads (powers of two) split some of them.
    outcome = await run("printf '✓%.0s' {1..50000}", tmp_path, groups, output_limit=200_000)
    assert outcome.output == "✓" * 50_000
    assert outcome.truncated_chars == 0


async def test_missing_command_exits_127(tmp_path: Path, groups: list[int]) -> None:
    outcome = await run("no-such-command-xyz --flag", tmp_path, groups)
    assert outcome.exit_code == 127
    assert outcome.output.startswith("bash: ")
    assert outcome.output.endswith("no-such-command-xyz: command not found\n")
    assert outcome.output.count("\n") == 1


async def test_environment_is_non_interactive(tmp_path: Path, groups: list[int]) -> None:
    outcome = await run(
        'echo "$PAGER|$GIT_PAGER|$TERM|$NO_COLOR|$GIT_TERMINAL_PROMPT"', tmp_path, groups
    )
    assert outcome.output == "cat|cat|dumb|1|0\n"


async def test_explicit_env_is_used_as_given(tmp_path: Path, groups: list[int]) -> None:
    env = {"PATH": os.environ["PATH"], "FOO": "bar"}
    outcome = await run('echo "$FOO|${PAGER-unset}"', tmp_path, groups, env=env)
    assert outcome.output == "bar|unset\n"


async def test_bash_not_on_path_is_a_tool_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="bash was not found"):
        await run_command("true", tmp_path, 5.0, env={"PATH": str(tmp_path)})


async def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="timeout"):
        await run_command("true", tmp_path, 0)
    with pytest.raises(ValueError, match="output_limit"):
        await run_command("true", tmp_path, 5.0, output_limit=-1)


# -- the output cap ---------------------------------------------------------------------------

CAP_RE = re.compile(r"\A(.*)… \[(\d+) characters(?: \((\d+) lines\))? cut\] …\n(.*)\Z", re.S)


async def test_output_cap_keeps_head_and_tail(tmp_path: Path, groups: list[int]) -> None:
    # 999: the halves (499 and 500) end mid-line, so the cut moves to line ends.
    outcome = await run("seq 1 100000", tmp_path, groups, output_limit=999)
    assert outcome.exit_code == 0
    match = CAP_RE.match(outcome.output)
    assert match is not None, outcome.output[:2000]
    head, cut_chars, cut_lines, tail = match.groups()
    assert 490 < len(head) <= 499
    assert 490 < len(tail) <= 500
    # Whole lines on both sides: 1..k, then m..100000, nothing else.
    head_numbers = [int(n) for n in head.splitlines()]
    tail_numbers = [int(n) for n in tail.splitlines()]
    assert head.endswith("\n")
    assert tail.endswith("\n")
    k, m = head_numbers[-1], tail_numbers[0]
    assert head_numbers == list(range(1, k + 1))
    assert tail_numbers == list(range(m, 100_001))
    cut = "".join(f"{n}\n" for n in range(k + 1, m))
    assert int(cut_chars) == len(cut) == outcome.truncated_chars
    assert int(cut_lines) == m - k - 1
    total = sum(len(f"{n}\n") for n in range(1, 100_001))
    assert len(head) + outcome.truncated_chars + len(tail) == total


async def test_output_cap_without_newlines_cuts_mid_line(tmp_path: Path, groups: list[int]) -> None:
    outcome = await run("printf '✓%.0s' {1..50000}", tmp_path, groups, output_limit=100)
    assert outcome.output == "✓" * 50 + "\n… [49900 characters cut] …\n" + "✓" * 50
    assert outcome.truncated_chars == 49_900


async def test_output_at_the_limit_is_not_cut(tmp_path: Path, groups: list[int]) -> None:
    whole = await run("printf 'a%.0s' {1..100}", tmp_path, groups, output_limit=100)
    assert whole.output == "a" * 100
    assert whole.truncated_chars == 0
    cut = await run("printf 'a%.0s' {1..101}", tmp_path, groups, output_limit=100)
    assert cut.output == "a" * 50 + "\n… [1 character cut] …\n" + "a" * 50
    assert cut.truncated_chars == 1


# -- timeout, cancellation and leftovers ------------------------------------------------------


async def test_timeout_kills_the_group_and_keeps_the_output(
    tmp_path: Path, groups: list[int]
) -> None:
    outcome = await run("echo started; sleep 300 & sleep 300", tmp_path, groups, timeout=0.5)
    assert outcome.timed_out is True
    assert outcome.exit_code is None
    assert outcome.output == "started\n"
    # Killed at the timeout, not before; waiting for the 300 s sleep instead would hit the
    # test's own timeout (a bound on how long it took would fail on a loaded machine).
    assert outcome.duration >= 0.5
    [pgid] = groups
    assert group_gone(pgid)


async def _cancel_when_ready(
    command: str, tmp_path: Path, groups: list[int]
) -> tuple[float, list[int]]:
    """Run ``command`` (it touches ./ready), cancel it then; the seconds the cancel took."""
    ready = tmp_path / "ready"
    returned: list[CommandOutcome] = []
    before: list[int] = []
    cancelled_at = 0.0
    with anyio.CancelScope() as scope:

        async def cancel_when_ready() -> None:
            nonlocal cancelled_at
            # The command can touch ./ready before run_command gets back from spawning it and
            # reports its group: wait for both, or groups[0] races (it failed under load).
            await wait_until(lambda: ready.exists() and groups, "the command to be ready")
            if HAS_PROC:
                before.extend(live_members(groups[0]))
            cancelled_at = time.monotonic()
            scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_when_ready)
            returned.append(await run(command, tmp_path, groups, timeout=60.0))
    took = time.monotonic() - cancelled_at
    assert scope.cancelled_caught  # the cancellation went on after the cleanup
    assert returned == []
    [pgid] = groups
    assert group_gone(pgid)
    return took, before


async def test_cancel_kills_background_grandchildren(
    tmp_path: Path, groups: list[int], signals: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A grace (ours and the trampoline's) that no load makes a SIGTERM outlast: a cancel that
    # waited for it instead of seeing the group die of SIGTERM takes a minute.
    monkeypatch.setattr(shell, "KILL_GRACE_SECONDS", GRACE_NO_LOAD_REACHES)
    monkeypatch.setattr(runner, "KILL_GRACE_SECONDS", GRACE_NO_LOAD_REACHES)
    took, before = await _cancel_when_ready("sleep 300 & touch ready; sleep 300", tmp_path, groups)
    # Everything died of SIGTERM: the grace was not waited, nothing was SIGKILLed (real
    # numbers: the "exit" bench).
    assert took < GRACE_NO_LOAD_REACHES
    assert signals[0] == signal.SIGTERM and signal.SIGKILL not in signals
    if HAS_PROC:
        assert len(before) >= 2  # bash (or its exec'd sleep) and the background sleep


async def test_a_cancel_while_the_process_is_being_spawned_still_kills_its_group(
    tmp_path: Path, groups: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a loaded machine the command runs (and starts children) before ``open_process``
    returns; a cancel landing then must not lose the group (it made an e2e test flaky)."""
    real_open = anyio.open_process
    released = anyio.Event()

    async def open_late(*args: Any, **kwargs: Any) -> Any:
        process = await real_open(*args, **kwargs)
        groups.append(process.pid)  # for the safety net only: run_command never saw it
        await released.wait()  # the event loop gets back to the caller only now
        return process

    monkeypatch.setattr(shell.anyio, "open_process", open_late)
    pid_file = tmp_path / "child.pid"
    with anyio.CancelScope() as scope:

        async def cancel_once_running() -> None:
            await wait_until(lambda: pid_written(pid_file), "the command to write child.pid")
            scope.cancel()
            released.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_once_running)
            await run("sleep 300 & echo $! > child.pid; sleep 300", tmp_path, [], timeout=60.0)
    assert scope.cancelled_caught
    await wait_until(lambda: group_gone(groups[0]), "the spawned command's group to be killed")


async def test_cancel_sigkills_what_ignores_sigterm(tmp_path: Path, groups: list[int]) -> None:
    took, before = await _cancel_when_ready(
        "(trap '' TERM; touch ready; exec sleep 300) & sleep 300", tmp_path, groups
    )
    # The TERM-immune sleep forces the whole grace period, then SIGKILL ends it (the group is
    # gone: _cancel_when_ready checked). How much longer than the grace it took is the load's.
    assert took >= KILL_GRACE_SECONDS - 0.05
    if HAS_PROC:
        assert len(before) >= 2


async def test_background_leftovers_are_killed_when_the_command_finishes(
    tmp_path: Path, groups: list[int]
) -> None:
    outcome = await run("sleep 300 & echo $!; echo done", tmp_path, groups)
    background_pid, done = outcome.output.splitlines()
    assert done == "done"
    assert outcome.exit_code == 0
    # It did not wait for the pipe the 300 s sleep holds open: that would hit the test's own
    # timeout (a bound on the duration would fail on a loaded machine).
    assert pid_gone(int(background_pid))
    [pgid] = groups
    assert group_gone(pgid)


async def test_output_written_just_before_exit_is_kept(tmp_path: Path, groups: list[int]) -> None:
    outcome = await run("seq 1 20000 | tail -n 1; seq 1 3 >&2", tmp_path, groups)
    assert outcome.output == "20000\n1\n2\n3\n"


# -- the bash tool ----------------------------------------------------------------------------


@pytest.fixture
def ctx(tmp_path: Path) -> ToolDeps:
    (tmp_path / "ws").mkdir()
    return ToolDeps(workspace=Workspace([tmp_path / "ws"], NoBuffers()), run_id="r1")


def test_bash_args_validation() -> None:
    assert BashArgs(command="ls").timeout_seconds is None
    assert BashArgs(command="ls", timeout_seconds=600).timeout_seconds == 600
    for bad in (
        {"command": ""},
        {"command": "  \n"},
        {"command": "ls", "timeout_seconds": 0},
        {"command": "ls", "timeout_seconds": -1},
        {"command": "ls", "timeout_seconds": 600.5},
        {"command": "ls", "cwd": "/"},
        {},
    ):
        with pytest.raises(ValidationError):
            BashArgs.model_validate(bad)


def test_bash_tool_declaration() -> None:
    tool = Bash()
    assert tool.name == "bash"
    assert tool.needs_approval is True
    schema = tool.parameters_schema()
    assert schema["required"] == ["command"]
    assert set(schema["properties"]) == {"command", "timeout_seconds", "background"}
    assert all(p.get("description") for p in schema["properties"].values())


async def test_bash_proposal_title_is_the_first_line_shortened(ctx: ToolDeps) -> None:
    async def title(command: str) -> str:
        return (await Bash().propose(BashArgs(command=command), ctx)).title

    assert await title("  pytest -q\n") == "Run pytest -q"
    assert await title("cd src\nmake") == "Run cd src …"
    long = "echo " + "x" * 100
    assert await title(long) == "Run " + long[:79] + "…"


async def test_bash_proposal_shows_command_and_cwd(ctx: ToolDeps) -> None:
    proposal = await Bash().propose(BashArgs(command="make test"), ctx)
    assert proposal.title == "Run make test"
    assert proposal.preview.kind == "command"
    assert proposal.preview.model_dump() == {
        "kind": "command",
        "command": "make test",
        "cwd": str(ctx.workspace.root),
    }


async def test_bash_runs_in_the_workspace_root(ctx: ToolDeps) -> None:
    result = await Bash().run(BashArgs(command="echo hi > made.txt; cat made.txt"), ctx)
    assert result.ok is True
    assert result.output == "exit code: 0\nhi"
    assert result.error is None
    assert (ctx.workspace.root / "made.txt").read_text() == "hi\n"


async def test_bash_failure_reports_exit_code(ctx: ToolDeps) -> None:
    result = await Bash().run(BashArgs(command="echo oops >&2; exit 2"), ctx)
    assert result.ok is False
    assert result.output == "exit code: 2\noops"
    assert result.error == "exit code 2"


async def test_bash_without_output(ctx: ToolDeps) -> None:
    result = await Bash().run(BashArgs(command="true"), ctx)
    assert result == type(result)(ok=True, output="exit code: 0\n(no output)")


async def test_bash_timeout(ctx: ToolDeps) -> None:
    result = await Bash().run(BashArgs(command="echo $$; sleep 300", timeout_seconds=0.3), ctx)
    status, pid = result.output.split("\n")
    try:
        assert result.ok is False
        assert status == (
            "killed after timeout of 0.3 s (set timeout_seconds, at most 600 s, if it needs longer)"
        )
        assert result.error == "the command timed out after 0.3 s"
        assert group_gone(int(pid))
    finally:
        if not group_gone(int(pid)):
            os.killpg(int(pid), signal.SIGKILL)
