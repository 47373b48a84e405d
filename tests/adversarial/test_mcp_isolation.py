"""The user's MCP servers start in a neutral folder, whatever the workspace plants.

A cloned repository plants what the usual launchers pick up from the folder they run in —
``node_modules/.bin/pkg`` and ``node_modules/pkg`` (``npx``), a ``pkg.py`` (``python -m``),
an executable ``tool`` (a relative ``./tool``), an ``.npmrc`` naming a shell of its own
(``script-shell``: npm runs every command through it), ``uv.toml``, ``.python-version`` — and
each planted thing, if it ever runs, writes a mark. The user's config names servers that
would run them if they started in the workspace, or resolved a relative ``PATH`` entry
(``node_modules/.bin``) from it; the same names exist in the user's home, where they run the
recording server (``tests/mcp/recording_server.py``), which writes the folder it runs in.
The project's own servers (``.mcp.json``, ``.tether/config.toml``) must not start at all: the
project is not trusted. Every front that starts servers is tried: ``tether serve`` at
``initialize``, ``tether acp`` at ``session/new`` (with a server of the client's too) and
``tether run``. A trusted project's own server runs in the project folder, as documented.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..acp.client import AcpAgent
from ..acp.recorder import RecordingClient
from ..e2e.raw_client import RawServer
from ..waiting import wait_until, wait_until_sync

pytestmark = pytest.mark.slow

RECORDER = Path(__file__).resolve().parents[1] / "mcp" / "recording_server.py"
TETHER = [sys.executable, "-m", "tether"]
USER_SERVERS = ("py", "tool", "npx", "bare")
"""The user's servers: ``python -m pkg``, ``./tool``, ``npx -y pkg``, a bare ``pkg``."""
STARTED_WITHIN = 90.0
"""A loaded 2-core machine starts npm slowly; never a timing assertion."""


@dataclass(frozen=True)
class Hostile:
    home: Path
    workspace: Path
    marks: Path
    env: dict[str, str]

    def planted(self) -> list[str]:
        """The marks a planted file wrote (it ran)."""
        return sorted(p.name for p in self.marks.glob("planted-*"))

    def recorded(self, tag: str) -> dict[str, Any] | None:
        path = self.marks / f"{tag}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def settled(self, tags: tuple[str, ...]) -> bool:
        """Every server ran its recording side, or a planted file ran."""
        return bool(self.planted()) or all(self.recorded(t) is not None for t in tags)

    def assert_neutral(self, tags: tuple[str, ...]) -> None:
        assert self.planted() == [], f"the workspace's files ran: {self.planted()}"
        for tag in tags:
            shown = self.recorded(tag)
            assert shown is not None, f"server {tag!r} did not start"
            assert Path(shown["cwd"]).resolve() == self.home.resolve(), (tag, shown)
            for entry in shown["path"].split(os.pathsep):
                assert os.path.isabs(entry), f"{tag}: a relative PATH entry {entry!r}"
                assert not Path(entry).resolve().is_relative_to(self.workspace.resolve()), entry


def _script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def _planted_sh(marks: Path, label: str) -> str:
    return f'#!/bin/sh\necho ran > "{marks}/planted-{label}"\nexit 3\n'


def _recorder_sh() -> str:
    return f'#!/bin/sh\nexec "{sys.executable}" "{RECORDER}" "$@"\n'


def _node_package(root: Path, cli: str) -> None:
    """``root/node_modules/pkg`` with a ``pkg`` bin, linked in ``node_modules/.bin``."""
    package = root / "node_modules" / "pkg"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "pkg", "version": "1.0.0", "bin": {"pkg": "cli.sh"}})
    )
    _script(package / "cli.sh", cli)
    (root / "node_modules" / ".bin").mkdir()
    (root / "node_modules" / ".bin" / "pkg").symlink_to("../pkg/cli.sh")


def plant_workspace(workspace: Path, marks: Path) -> None:
    """What a hostile repository plants: each file marks that it ran."""
    (workspace / "pkg.py").write_text(
        f"open({str(marks / 'planted-pkg.py')!r}, 'w').write('ran')\nraise SystemExit(3)\n"
    )
    _script(workspace / "tool", _planted_sh(marks, "tool"))
    _node_package(workspace, _planted_sh(marks, "node_modules-pkg"))
    evil_shell = workspace / "evil-shell.sh"
    _script(evil_shell, f'#!/bin/sh\necho ran > "{marks}/planted-npmrc"\nexec /bin/sh "$@"\n')
    (workspace / ".npmrc").write_text(f"script-shell={evil_shell}\n")
    (workspace / "uv.toml").write_text('python-preference = "only-managed"\n')
    (workspace / ".python-version").write_text("2.7.1-planted\n")
    (workspace / "app.py").write_text("print('hi')\n")
    # The project's own servers: an untrusted project starts none of them.
    theirs = {"command": "sh", "args": ["-c", f'echo ran > "{marks}/planted-mcp.json"']}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"theirs": theirs}}))
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "config.toml").write_text(
        '[mcpServers.ours]\ncommand = "sh"\n'
        f'args = ["-c", {json.dumps(f"echo ran > {marks}/planted-config.toml")}]\n'
    )


def user_home(home: Path, marks: Path) -> None:
    """The user's own copies of the same names (they run the recording server), and a user
    config naming the four servers."""
    (home / "pkg.py").write_text(
        f"import runpy\nrunpy.run_path({str(RECORDER)!r}, run_name='__main__')\n"
    )
    _script(home / "tool", _recorder_sh())
    _script(home / "bin" / "pkg", _recorder_sh())
    _node_package(home, _recorder_sh())

    def server(tag: str, command: str, args: list[str], **env: str) -> str:
        variables = {"TAG": tag, "MARKS": str(marks), **env}
        table = ", ".join(f"{k} = {json.dumps(v)}" for k, v in variables.items())
        return (
            f"[mcpServers.{tag}]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n"
            f"env = {{ {table} }}\nstartupTimeoutSeconds = {STARTED_WITHIN}\n"
        )

    npm = {"npm_config_offline": "true", "npm_config_update_notifier": "false"}
    config = "\n".join(
        [
            server("py", sys.executable, ["-m", "pkg"]),
            server("tool", "./tool", []),
            server("npx", "npx", ["-y", "pkg"], **npm),
            server("bare", "pkg", []),
        ]
    )
    folder = home / ".config" / "tether"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(config)


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Hostile]:
    home, workspace, marks = tmp_path / "home", tmp_path / "clone", tmp_path / "marks"
    for folder in (home, workspace, marks):
        folder.mkdir()
    plant_workspace(workspace, marks)
    user_home(home, marks)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "XDG_", "npm_"))}
    for secret in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(secret, None)
    # A relative entry first, as some users keep ./node_modules/.bin on their PATH.
    env["PATH"] = os.pathsep.join(["node_modules/.bin", str(home / "bin"), env["PATH"]])
    env |= {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "TETHER_STATE_DIR": str(tmp_path / "state"),
        "TETHER_DAEMON": "0",
        "TETHER_PROVIDER": "scripted",
    }
    yield Hostile(home, workspace, marks, env)


def test_tether_serve_starts_the_users_servers_outside_the_workspace(hostile: Hostile) -> None:
    env = {**hostile.env, "TETHER_SCRIPT": json.dumps({"turns": []})}
    # The editor started in the project folder (the server's own folder is the workspace).
    server = RawServer(hostile.workspace, env)
    try:
        server.initialize(hostile.workspace)
        wait_until_sync(lambda: hostile.settled(USER_SERVERS), "the servers", STARTED_WITHIN)
        hostile.assert_neutral(USER_SERVERS)
        server.request("bye", "shutdown")
        server.answer("bye", timeout=30)
        server.notify("exit")
        assert server.close(timeout=30) == 0
    finally:
        server.kill()


async def test_tether_acp_starts_the_users_and_the_clients_servers_outside_the_workspace(
    hostile: Hostile,
) -> None:
    env = {**hostile.env, "TETHER_SCRIPT": json.dumps({"turns": []})}
    clients = {
        "name": "client",
        "command": sys.executable,
        "args": ["-m", "pkg"],
        "env": [{"name": "TAG", "value": "client"}, {"name": "MARKS", "value": str(hostile.marks)}],
    }
    tags = (*USER_SERVERS, "client")
    async with AcpAgent.spawn(
        [*TETHER, "acp"], cwd=hostile.workspace, env=env, client=RecordingClient()
    ) as agent:
        await agent.initialize()
        await agent.new_session(hostile.workspace, mcp_servers=[clients])
        await wait_until(lambda: hostile.settled(tags), "the servers", STARTED_WITHIN)
        hostile.assert_neutral(tags)


def test_tether_run_starts_the_users_servers_outside_the_workspace(hostile: Hostile) -> None:
    import subprocess

    # One call to each server: the run waits for it to start (then the call is denied:
    # nobody is there to ask), so every server has started before the run ends.
    calls = [{"name": f"mcp__{tag}__echo", "arguments": {"text": "hi"}} for tag in USER_SERVERS]
    script = {"turns": [{"toolCalls": calls}, {"text": "done"}]}
    env = {**hostile.env, "TETHER_SCRIPT": json.dumps(script)}
    done = subprocess.run(
        [*TETHER, "run", "use the servers"],
        cwd=hostile.workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in done.stderr, done.stderr
    hostile.assert_neutral(USER_SERVERS)


def test_a_trusted_projects_own_server_runs_in_the_project(tmp_path: Path) -> None:
    """Trusting a project lets its servers start, in the project folder: said explicitly,
    its own ``./tool`` is the one run; the user's still run in the home folder."""
    import subprocess

    home, project, marks = tmp_path / "home", tmp_path / "project", tmp_path / "marks"
    for folder in (home, project, marks):
        folder.mkdir()
    _script(project / "tool", _recorder_sh())
    own = {"command": "./tool", "env": {"TAG": "own", "MARKS": str(marks)}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"own": own}}))
    user_home(home, marks)
    config = home / ".config" / "tether" / "config.toml"
    config.write_text(f"trustedProjects = [{json.dumps(str(project))}]\n" + config.read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "XDG_", "npm_"))}
    calls = [{"name": f"mcp__{tag}__echo", "arguments": {}} for tag in ("own", "tool")]
    env |= {
        "HOME": str(home),
        "TETHER_STATE_DIR": str(tmp_path / "state"),
        "TETHER_DAEMON": "0",
        "TETHER_PROVIDER": "scripted",
        "TETHER_SCRIPT": json.dumps({"turns": [{"toolCalls": calls}, {"text": "done"}]}),
    }
    done = subprocess.run(
        [*TETHER, "run", "use them"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in done.stderr, done.stderr
    ran = {tag: json.loads((marks / f"{tag}.json").read_text()) for tag in ("own", "tool")}
    assert Path(ran["own"]["cwd"]).resolve() == project.resolve()
    assert Path(ran["tool"]["cwd"]).resolve() == home.resolve()
