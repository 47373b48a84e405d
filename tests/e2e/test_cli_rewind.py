"""``tether rewind`` through real ``tether`` subprocesses on a scripted provider: the last
session's checkpoints listed (lines and ``--json``), a rewind of a ``bash`` step that put
the files back, a user's change since reported and kept, and bad input a clear error."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from . import cli
from .cli import cli_env

BASH = {"name": "bash", "arguments": {"command": "rm a.txt && printf 'new\\n' > b.txt"}}


def tether(
    argv: list[str], cwd: Path, env: dict[str, str], script: dict[str, Any] | None = None
) -> subprocess.CompletedProcess[str]:
    return cli.tether(argv, cwd, env | {"TETHER_SCRIPT": json.dumps(script or {"turns": []})})


def test_list_then_rewind_a_bash_step_from_the_terminal(tmp_path: Path) -> None:
    env = cli_env(tmp_path, TETHER_PROVIDER="scripted")
    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    ran = tether(["run", "tidy up", "--yes"], project, env, {"turns": [{"toolCalls": [BASH]}]})
    assert ran.returncode == 0, ran.stderr
    assert not (project / "a.txt").exists() and (project / "b.txt").exists()

    listed = tether(["rewind", "--list", "--json"], project, env)
    assert listed.returncode == 0, listed.stderr
    [checkpoint] = json.loads(listed.stdout)["checkpoints"]
    assert checkpoint["tool"] == "bash"
    assert {f["path"]: f["change"] for f in checkpoint["files"]} == {
        "a.txt": "deleted",
        "b.txt": "created",
    }
    shown = tether(["rewind"], project, env)  # no checkpoint: the list, in lines
    assert shown.returncode == 0, shown.stderr
    assert checkpoint["id"] in shown.stdout and "a.txt deleted" in shown.stdout

    (project / "b.txt").write_text("the user's\n")  # changed since: a conflict, kept
    done = tether(["rewind", checkpoint["id"], "--restore", "files"], project, env)
    assert done.returncode == 1, done.stderr
    assert "restored: a.txt" in done.stdout and "left alone" in done.stdout
    assert (project / "a.txt").read_text() == "one\n"
    assert (project / "b.txt").read_text() == "the user's\n"

    forced = tether(["rewind", checkpoint["id"], "--restore", "files", "--force"], project, env)
    assert forced.returncode == 0, forced.stderr
    assert not (project / "b.txt").exists()

    unknown = tether(["rewind", "c-nothing"], project, env)
    assert unknown.returncode == 2 and "unknown checkpoint" in unknown.stderr
    both = tether(["rewind", checkpoint["id"], "--list"], project, env)
    assert both.returncode == 2 and "not both" in both.stderr


def test_no_session_here_is_said(tmp_path: Path) -> None:
    env = cli_env(tmp_path, TETHER_PROVIDER="scripted")
    project = tmp_path / "empty"
    project.mkdir()
    nothing = tether(["rewind", "--list"], project, env)
    assert nothing.returncode == 2 and "no session to rewind" in nothing.stderr


async def test_a_session_from_an_editor_is_rewound_in_its_own_folder(tmp_path: Path) -> None:
    from tether.client.headless import connect

    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    env = cli_env(tmp_path, TETHER_PROVIDER="scripted")
    options = {
        "provider": "scripted",
        "script": {"turns": [{"toolCalls": [BASH]}]},
        "stateDir": env["TETHER_STATE_DIR"],
        "autoApprove": ["bash"],
    }
    async with connect(project, options) as client:
        session = (await client.run("tidy up"))["sessionId"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listed = tether(["rewind", "--session", session, "--json"], elsewhere, env)
    assert listed.returncode == 0, listed.stderr
    [checkpoint] = json.loads(listed.stdout)["checkpoints"]
    done = tether(["rewind", "--session", session, checkpoint["id"]], elsewhere, env)
    assert done.returncode == 0, done.stderr
    assert (project / "a.txt").read_text() == "one\n" and not (project / "b.txt").exists()
