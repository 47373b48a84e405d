"""The sandbox's walls, on each backend, around the real ``run_command`` (issue 17 item 4):
the workspace writable and nothing else, ``$HOME`` secrets unreadable, no TCP to
127.0.0.1, the system readable, ``/tmp`` private, secrets out of the environment, and a
cancel still killing everything the command started."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from tether.sandbox import Availability, Sandbox, blocked_reason, status_for, trampoline
from tether.sandbox import landlock as ll
from tether.sandbox.runner import unsandboxed
from tether.sandbox.walls import walls_for
from tether.tools.shell import CommandOutcome, command_environment, run_command

from ..sandboxes import BACKENDS, sandbox_in
from ..waiting import alive, wait_until

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key"
VISIBLE = "/var/tmp"
"""A folder the sandbox leaves readable (``/tmp`` is replaced by a private one)."""


@pytest.fixture
def home() -> Iterator[Path]:
    """A fake ``$HOME`` with a private key, cloud credentials and Tether's config; outside
    ``/tmp``, which the sandbox hides anyway, so that only the ``$HOME`` wall stops reads."""
    with fake_home() as home:
        yield home


@contextlib.contextmanager
def fake_home() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(dir=VISIBLE, prefix="tether-test-home-") as made:
        home = Path(made)
        write_secrets(home)
        yield home


def write_secrets(home: Path) -> None:
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = hush\n")
    (home / ".config" / "tether").mkdir(parents=True)
    (home / ".config" / "tether" / "rules.toml").write_text("# the user's rules\n")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture(params=BACKENDS)
def sandbox(request: pytest.FixtureRequest, tmp_path: Path, ws: Path, home: Path) -> Sandbox:
    return sandbox_in(request.param, [ws], home, tmp_path / "state")


@pytest.fixture
def groups() -> Iterator[list[int]]:
    """Process groups started (``on_start``); the safety net kills what a failure left."""
    started: list[int] = []
    yield started
    for pgid in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, 9)


async def sandboxed(
    sandbox: Sandbox, command: str, cwd: Path, groups: list[int], env: dict[str, str] | None = None
) -> CommandOutcome:
    return await run_command(command, cwd, 60.0, env=env, on_start=groups.append, sandbox=sandbox)


@pytest.fixture
def visible() -> Iterator[Path]:
    """A path in a folder the sandbox shows read-only (removed if a broken wall let it be)."""
    path = Path(VISIBLE) / f"tether-sandbox-test-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


async def test_writes_inside_the_workspace_only(
    sandbox: Sandbox, ws: Path, tmp_path: Path, groups: list[int], visible: Path
) -> None:
    beside = tmp_path / "beside"
    beside.mkdir()
    out = await sandboxed(
        sandbox,
        f"echo made > made.txt; mkdir -p sub && echo deep > sub/f; echo x > {beside}/f; "
        f"echo x > {visible}; echo x > /usr/tether-test; cat made.txt",
        ws,
        groups,
    )
    assert (ws / "made.txt").read_text() == "made\n" and (ws / "sub" / "f").exists()
    assert not (beside / "f").exists()
    assert not visible.exists()
    assert not Path("/usr/tether-test").exists()
    assert out.exit_code == 0 and out.output.endswith("made\n")  # the last command's status


async def test_home_secrets_are_not_readable(
    sandbox: Sandbox, ws: Path, home: Path, groups: list[int]
) -> None:
    out = await sandboxed(
        sandbox,
        f"cat {home}/.ssh/id_rsa; cat {home}/.aws/credentials; ls {home}/.ssh; "
        f"cat {home}/.config/tether/rules.toml",
        ws,
        groups,
    )
    assert "PRIVATE KEY" not in out.output and "hush" not in out.output
    assert "the user's rules" not in out.output and "id_rsa\n" not in out.output
    assert out.exit_code != 0


async def test_no_tcp_to_localhost(sandbox: Sandbox, ws: Path, groups: list[int]) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        out = await sandboxed(
            sandbox,
            f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected",
            ws,
            groups,
        )
        with pytest.raises(BlockingIOError):  # nothing connected: the backlog is empty
            listener.accept()
    assert "connected" not in out.output.replace("connect:", "")
    assert out.exit_code != 0
    assert blocked_reason(sandbox.backend, out.exit_code, out.output) is not None


async def test_the_system_is_readable_and_commands_run(
    sandbox: Sandbox, ws: Path, groups: list[int]
) -> None:
    (ws / "data.txt").write_text("3\n1\n2\n")
    out = await sandboxed(
        sandbox, "head -1 /etc/passwd | cut -d: -f1; sort data.txt | tr -d '\\n'; pwd", ws, groups
    )
    assert out.exit_code == 0, out.output
    assert out.output == f"root\n123{ws}\n"


async def test_tmp_is_private_and_temp_files_work(
    sandbox: Sandbox, ws: Path, tmp_path: Path, groups: list[int]
) -> None:
    (tmp_path / "host-only").write_text("only-on-the-host")
    out = await sandboxed(
        sandbox,
        f'cat {tmp_path}/host-only; t=$(mktemp) && echo temp > "$t" && cat "$t" && echo "$t"',
        ws,
        groups,
    )
    assert "only-on-the-host" not in out.output
    assert "temp\n" in out.output
    made = Path(out.output.strip().splitlines()[-1])
    assert not made.exists()  # the private temp folder is gone with the command


async def test_only_allow_listed_and_configured_variables_are_passed(
    sandbox: Sandbox, ws: Path, groups: list[int]
) -> None:
    env = command_environment({**os.environ, "OPENAI_API_KEY": "sk-live", "GH_TOKEN": "ghp"})
    env.update(PLAIN_SETTING="dropped", WANTED="kept", LC_TIME="C")
    box = dataclasses.replace(sandbox, env_names=("WANTED",))
    out = await sandboxed(
        box,
        'echo "[$OPENAI_API_KEY][$GH_TOKEN][$PLAIN_SETTING][$WANTED][$LC_TIME]"',
        ws,
        groups,
        env,
    )
    assert out.output == "[][][][kept][C]\n"


async def test_a_workspace_under_home_is_writable_and_the_rest_of_home_hidden(
    tmp_path: Path, home: Path, groups: list[int], request: pytest.FixtureRequest
) -> None:
    for backend in BACKENDS:
        project = home / "code" / "project"
        project.mkdir(parents=True, exist_ok=True)
        box = sandbox_in(backend, [project], home, tmp_path / "state")
        out = await sandboxed(box, f"echo ok > made; cat {home}/.ssh/id_rsa", project, groups)
        assert (project / "made").read_text() == "ok\n", backend
        assert "PRIVATE KEY" not in out.output, backend


async def test_home_as_the_workspace_still_hides_the_keys(
    tmp_path: Path, home: Path, groups: list[int]
) -> None:
    # Nothing is made at the top of a home folder that is the workspace (a dot name there
    # is the floor's): its folders are written.
    (home / "proj").mkdir()
    for backend in BACKENDS:
        box = sandbox_in(backend, [home], home, tmp_path / "state")
        out = await sandboxed(
            box, "echo ok > proj/made; cat .ssh/id_rsa; cat .aws/credentials", home, groups
        )
        assert (home / "proj" / "made").read_text() == "ok\n", backend
        (home / "proj" / "made").unlink()
        assert "PRIVATE KEY" not in out.output and "hush" not in out.output, backend


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return False
    return True


async def test_cancel_kills_everything_the_sandboxed_command_started(
    sandbox: Sandbox, ws: Path, groups: list[int]
) -> None:
    ready = ws / "ready"
    mark = f"300.{uuid.uuid4().int % 10**9:09d}"  # sleep takes fractions
    returned: list[CommandOutcome] = []
    with anyio.CancelScope() as scope:

        async def cancel_when_ready() -> None:
            await wait_until(lambda: ready.exists() and groups, "the command to be ready")
            scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_when_ready)
            returned.append(
                await sandboxed(
                    sandbox,
                    f"sleep {mark}1 & sleep {mark}2 & touch ready; sleep {mark}3",
                    ws,
                    groups,
                )
            )
    assert scope.cancelled_caught and returned == []
    [pgid] = groups
    assert group_gone(pgid)
    # Durations no other test uses: the machine runs other suites' sleeps meanwhile.
    sleepers = [p for p in Path("/proc").glob("[0-9]*/cmdline") if mark.encode() in _read(p)]
    assert sleepers == []


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


# -- detection, failure reading, the trampoline --------------------------------------------


def test_status_names_the_backend_or_why_there_is_none() -> None:
    both = Availability("/usr/bin/bwrap", "/usr/bin/bwrap", 7, "ABI 7")
    old = Availability(None, "not installed (Debian/Ubuntu package bubblewrap)", 3, "ABI 3: …")
    assert status_for("auto", both).backend == "bwrap"
    assert status_for("landlock", both).backend == "landlock"
    assert status_for("off", both).backend is None
    none = status_for("auto", old)
    assert none.backend is None
    assert "not installed" in none.reason and "ABI 3" in none.reason
    assert status_for("bwrap", old).reason.startswith("none usable — bwrap: not installed")


@pytest.mark.parametrize(
    ("backend", "code", "output", "expected"),
    [
        ("bwrap", 1, "touch: cannot touch '/usr/x': Read-only file system\n", "writing outside"),
        ("bwrap", 7, "curl: (6) Could not resolve host: pypi.org\n", "the network"),
        ("bwrap", 1, "bash: connect: Connection refused\n", "the network"),
        ("landlock", 1, "bash: /etc/x: Permission denied\n", "access outside"),
        ("landlock", 126, "tether-sandbox: could not start the Landlock sandbox: …\n", "sandbox"),
        ("bwrap", 1, "bwrap: Creating new namespace failed\n", "the sandbox"),
    ],
)
def test_blocked_reasons(backend: str, code: int, output: str, expected: str) -> None:
    reason = blocked_reason(backend, code, output)  # type: ignore[arg-type]
    assert reason is not None and expected in reason
    assert output.strip()[:30] in reason  # the line that shows why


@pytest.mark.parametrize(
    ("backend", "code", "output"),
    [
        ("bwrap", 0, "Read-only file system\n"),  # it succeeded anyway
        ("bwrap", 1, "bash: x: Permission denied\n"),  # no wall of bwrap says that
        ("landlock", 1, "FAILED tests/test_x.py::test_y - assert 1 == 2\n"),
        ("landlock", None, "Read-only file system\n"),  # timed out: not the walls' doing
    ],
)
def test_failures_of_the_command_itself_are_not_blamed_on_the_sandbox(
    backend: str, code: int | None, output: str
) -> None:
    assert blocked_reason(backend, code, output) is None  # type: ignore[arg-type]


def test_the_trampoline_fails_closed(tmp_path: Path) -> None:
    flag = tmp_path / "ran"
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            trampoline.__file__,
            "{not json",
            "/bin/sh",
            "-c",
            f"touch {flag}",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == ll.EXIT_SANDBOX_FAILED
    assert done.stderr.startswith(ll.FAILED_PREFIX)
    assert not flag.exists()


def test_walls_hide_home_config_and_state_but_not_the_workspace(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "p"
    walls = walls_for([project], {"HOME": str(home)}, home / ".config/tether", tmp_path / "s")
    assert walls.writable == (project.resolve(),)
    assert home.resolve() in walls.hidden and (tmp_path / "s").resolve() in walls.hidden
    whole = walls_for([home], {"HOME": str(home)}, home / ".config/tether", tmp_path / "s")
    assert home.resolve() not in whole.hidden and home.resolve() / ".ssh" in whole.hidden


async def test_other_processes_environment_is_not_readable(
    sandbox: Sandbox, ws: Path, groups: list[int]
) -> None:
    # The server's environment holds the provider's API key: stand in a process like it.
    marker = f"sk-{uuid.uuid4().hex}"
    with subprocess.Popen(["sleep", "60"], env={**os.environ, "OPENAI_API_KEY": marker}) as keeper:
        try:
            out = await sandboxed(sandbox, f"cat /proc/{keeper.pid}/environ", ws, groups)
        finally:
            keeper.kill()
    assert marker not in out.output and out.exit_code != 0


async def test_tools_installed_under_home_stay_usable(
    tmp_path: Path, home: Path, ws: Path, groups: list[int]
) -> None:
    tool = home / ".tooling" / "bin" / "hello-tool"
    tool.parent.mkdir(parents=True)
    (home / ".tooling" / "share.txt").write_text("from the tool's folder\n")
    tool.write_text(f"#!/bin/sh\ncat {home}/.tooling/share.txt\n")
    tool.chmod(0o755)
    env = command_environment({**os.environ, "PATH": f"{tool.parent}:/usr/bin:/bin"})
    for backend in BACKENDS:
        box = sandbox_in(backend, [ws], home, tmp_path / "state")
        box = Sandbox(
            box.backend,
            box.roots,
            {"HOME": str(home), "PATH": env["PATH"]},
            box.config_dir,
            box.state_dir,
            box.bwrap,
            box.landlock_abi,
        )
        out = await sandboxed(box, f"hello-tool; cat {home}/.ssh/id_rsa", ws, groups, env)
        assert out.output.startswith("from the tool's folder\n"), (backend, out.output)
        assert "PRIVATE KEY" not in out.output, backend


async def test_bwrap_keeps_the_workspaces_git_and_tether_read_only(
    tmp_path: Path, home: Path, ws: Path, groups: list[int]
) -> None:
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".tether").mkdir()
    box = sandbox_in("bwrap", [ws], home, tmp_path / "state")
    out = await sandboxed(
        box,
        "echo evil > .git/hooks/pre-commit; echo x > .tether/rules.toml; echo ok > fine.txt",
        ws,
        groups,
    )
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert not (ws / ".tether" / "rules.toml").exists()
    assert (ws / "fine.txt").read_text() == "ok\n"
    assert "Read-only file system" in out.output


@pytest.mark.parametrize("signals", [("TERM", "HUP"), ("HUP", "TERM"), ("TERM", "INT", "HUP")])
def test_stop_signals_arriving_together_still_end_every_descendant(
    signals: tuple[str, ...],
) -> None:
    """A killed server's death signal (SIGTERM) and its terminal's hang-up (SIGHUP) reach
    the trampoline together: however they interleave, it ends what the command started
    before it returns, never leaving a process behind."""
    for _ in range(5):
        prepared = unsandboxed(["/bin/sh", "-c", "sleep 600 & echo $!; wait"], dict(os.environ))
        with subprocess.Popen(prepared.argv, stdout=subprocess.PIPE, text=True) as tramp:
            assert tramp.stdout is not None
            child = int(tramp.stdout.readline())
            try:
                for name in signals:
                    os.kill(tramp.pid, getattr(signal, f"SIG{name}"))
                tramp.wait(timeout=30)
                assert not alive(child), "the trampoline returned; its command's child lives on"
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
