"""Regression tests for the walls of issue 24, on every backend, around the real
``run_command``: no unix socket outside the workspace is reached (break 5), no process a
command started outlives the call (break 7), and only allow-listed environment
variables reach a sandboxed command (break 10)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.config.layers import ConfigError, parse_settings, resolve
from tether.config.project import read_project_file
from tether.sandbox import Sandbox
from tether.tools.shell import CommandOutcome, command_environment, run_command
from tether_protocol import TetherSettings

from ..sandboxes import BACKENDS, sandbox_in
from ..waiting import wait_until
from .probes import (
    OUTSIDE,
    client_command,
    kill_all_with,
    mark,
    pair_sendto_command,
    processes_with,
    shlex_quote,
    unix_listener,
)


@pytest.fixture
def home() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(dir=OUTSIDE, prefix="tether-adv-home-") as made:
        yield Path(made)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture(params=BACKENDS)
def sandbox(request: pytest.FixtureRequest, tmp_path: Path, ws: Path, home: Path) -> Sandbox:
    return sandbox_in(request.param, [ws], home, tmp_path / "state")


@pytest.fixture(params=[*BACKENDS, None], ids=[*BACKENDS, "none"])
def maybe_sandbox(
    request: pytest.FixtureRequest, tmp_path: Path, ws: Path, home: Path
) -> Sandbox | None:
    if request.param is None:
        return None
    return sandbox_in(request.param, [ws], home, tmp_path / "state")


async def run(
    sandbox: Sandbox | None, command: str, cwd: Path, env: dict[str, str] | None = None
) -> CommandOutcome:
    return await run_command(command, cwd, 60.0, env=env, sandbox=sandbox)


@pytest.mark.parametrize("kind", ["stream", "dgram", "abstract"])
async def test_no_unix_socket_outside_the_workspace_is_reached(
    sandbox: Sandbox, ws: Path, kind: str
) -> None:
    with unix_listener(kind) as listener:
        out = await run(sandbox, client_command(listener), ws)
        assert not listener.reached(), out.output
    assert out.exit_code != 0


async def test_a_datagram_pair_cannot_send_to_a_path_outside(sandbox: Sandbox, ws: Path) -> None:
    with unix_listener("dgram") as listener:
        out = await run(sandbox, pair_sendto_command(listener), ws)
        assert not listener.reached(), out.output


async def test_unix_sockets_inside_the_command_still_work(sandbox: Sandbox, ws: Path) -> None:
    # A socketpair (Python's asyncio and multiprocessing use one) connects no one outside.
    body = (
        "import socket\n"
        "a, b = socket.socketpair()\n"
        "a.sendall(b'pair-ok')\n"
        "print(b.recv(16).decode())\n"
    )
    out = await run(sandbox, f"python3 -c {shlex_quote(body)}", ws)
    assert out.exit_code == 0 and out.output == "pair-ok\n", out.output


DAEMONS = {
    "setsid": "setsid sh -c 'echo $$ > started.{n}; exec sleep {mark}{n}' > /dev/null 2>&1 &",
    "nohup": "nohup sh -c 'echo $$ > started.{n}; exec sleep {mark}{n}' > /dev/null 2>&1 &",
    "double-fork": (
        "python3 -c 'import os,sys\n"
        "if os.fork(): sys.exit(0)\n"
        "os.setsid()\n"
        "if os.fork(): sys.exit(0)\n"
        'open("started.{n}", "w").write(str(os.getpid()))\n'
        'os.execvp("sleep", ["sleep", "{mark}{n}"])\' > /dev/null 2>&1 < /dev/null'
    ),
}


@pytest.fixture
def marker() -> Iterator[str]:
    made = mark()
    yield made
    kill_all_with(made)


@pytest.mark.parametrize("form", sorted(DAEMONS))
async def test_no_process_a_command_started_outlives_the_call(
    maybe_sandbox: Sandbox | None, ws: Path, marker: str, form: str
) -> None:
    start = DAEMONS[form].format(n=1, mark=marker)
    # The command returns only once the daemon runs (it wrote its pid), so a daemon that
    # survives is seen, never one that had not started yet.
    command = f"{start}\nuntil [ -s started.1 ]; do :; done; echo started"
    out = await run(maybe_sandbox, command, ws)
    assert out.output.endswith("started\n"), out.output
    await wait_until(lambda: not processes_with(marker), f"the {form} daemon to be gone", 5)


async def test_only_allow_listed_variables_reach_a_sandboxed_command(
    sandbox: Sandbox, ws: Path
) -> None:
    secrets = {
        "OPENAI_KEY": "sk-openai-kept-out",
        "STRIPE_KEY": "sk_live_kept_out",
        "GH_PAT": "ghp_kept_out",
        "AWS_ACCESS_KEY_ID": "AKIAKEPTOUT",
        "DATABASE_URL": "postgres://u:pw-kept-out@h/db",
        "SSH_AUTH_SOCK": "/run/user/0/ssh-agent.kept-out",
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus-kept-out",
    }
    env = command_environment({**os.environ, **secrets, "LANG": "C.UTF-8", "LC_ALL": "C"})
    out = await run(sandbox, "env", ws, env)
    assert out.exit_code == 0, out.output
    leaked = [name for name, value in secrets.items() if value in out.output]
    assert leaked == []
    seen = dict(line.split("=", 1) for line in out.output.splitlines() if "=" in line)
    assert seen["LANG"] == "C.UTF-8" and seen["LC_ALL"] == "C"
    assert seen["PATH"] == env["PATH"] and seen["HOME"]


def test_sandbox_env_is_the_users_setting_and_no_cloned_projects(tmp_path: Path) -> None:
    project = tmp_path / "clone"
    (project / ".tether").mkdir(parents=True)
    (project / ".tether" / "config.toml").write_text('sandboxEnv = ["OPENAI_API_KEY"]\n')
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
    read = read_project_file(project, [], TetherSettings())
    assert read.settings.sandbox_env is None and read.dropped == ("sandboxEnv",)
    mine = parse_settings({"sandboxEnv": ["JAVA_HOME", "GOPATH"]}, "config.toml")
    assert resolve(mine, environ).sandbox_env == ("JAVA_HOME", "GOPATH")
    with pytest.raises(ConfigError):
        parse_settings({"sandboxEnv": ["NOT A NAME"]}, "config.toml")


async def test_a_projects_git_stays_read_only_when_the_project_is_inside_home(
    home: Path,
) -> None:
    """bubblewrap keeps a workspace's sensitive folders read-only (Landlock cannot: see
    docs/security.md) also for a project inside the home folder, which is hidden around
    it — the usual place of a project. Before, the hidden home folder counted as hiding
    them, and a sandboxed command planted a git hook there."""
    project = home / "proj"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".vscode").mkdir()
    sandbox = sandbox_in("bwrap", [project], home, home / "state")
    hook = project / ".git" / "hooks" / "pre-commit"
    command = f"echo evil > {hook}; echo '{{}}' > .vscode/tasks.json; echo ok > notes.txt"
    out = await run(sandbox, command, project)
    assert not hook.exists() and not (project / ".vscode" / "tasks.json").exists(), out.output
    assert (project / "notes.txt").read_text() == "ok\n"
