"""Sessions from the terminal: run → continue → sessions → undo, and replay, through real
`tether` subprocesses on a scripted provider."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from . import cli
from .cli import cli_env, read_one_line_and_leave

EDIT = {"name": "edit_file", "arguments": {"path": "a.txt", "old_text": "one", "new_text": "two"}}


def tether(
    argv: list[str], cwd: Path, env: dict[str, str], script: dict[str, Any]
) -> subprocess.CompletedProcess[str]:
    """``tether ARGV`` whose scripted model follows ``script``."""
    return cli.tether(argv, cwd, env | {"TETHER_SCRIPT": json.dumps(script)})


def environment(tmp_path: Path) -> dict[str, str]:
    return cli_env(tmp_path, TETHER_PROVIDER="scripted")


def session_of(stdout: str) -> str:
    return stdout.split(" · session ")[1].split()[0]


def test_run_continue_sessions_undo(tmp_path: Path) -> None:
    env = environment(tmp_path) | {"HOME": str(tmp_path)}  # the project is ~/p
    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    first = tether(
        ["run", "make it two", "--yes"], project, env, {"turns": [{"toolCalls": [EDIT]}]}
    )
    assert first.returncode == 0, first.stderr
    assert (project / "a.txt").read_text() == "two\n"
    session = session_of(first.stdout)

    again = tether(["run", "--continue", "and now?"], project, env, {"turns": [{"text": "two"}]})
    assert again.returncode == 0, again.stderr
    assert session_of(again.stdout) == session  # the same conversation, continued

    listed = tether(["sessions"], project, env, {})
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith(session))
    assert row.split()[3:6] == ["2", "done", "~/p"] and row.endswith("and now?")  # HOME=tmp

    undone = tether(["undo"], project, env, {})  # the last run that edited something
    assert undone.returncode == 0, undone.stderr
    assert "put back: a.txt" in undone.stdout
    assert (project / "a.txt").read_text() == "one\n"
    nothing = tether(["undo"], project, env, {})
    assert nothing.returncode == 2 and "no run with edits to undo" in nothing.stderr


def test_continue_without_an_earlier_session_says_so(tmp_path: Path) -> None:
    out = tether(["run", "--continue", "hi"], tmp_path, environment(tmp_path), {"turns": []})
    assert out.returncode == 2 and "no earlier session" in out.stderr


def test_replay_shows_each_outcome_and_reruns_absolute_paths_elsewhere(tmp_path: Path) -> None:
    env = environment(tmp_path)
    project, other = tmp_path / "p", tmp_path / "q"
    for folder in (project, other):
        folder.mkdir()
        (folder / "a.txt").write_text("one\n")
    read = {"name": "read_file", "arguments": {"path": str(project / "a.txt")}}
    script = {"turns": [{"toolCalls": [read]}, {"text": "read it"}]}
    first = tether(["run", "read a.txt", "--yes"], project, env, script)
    assert first.returncode == 0, first.stderr
    session = session_of(first.stdout)

    shown = tether(["replay", session], project, env, {})
    assert shown.returncode == 0, shown.stderr
    assert "outcome done · 2 steps" in shown.stdout

    (project / "a.txt").unlink()  # a re-run that still read the original folder would fail
    rerun = tether(["replay", session, "--rerun", str(other), "--yes"], other, env, {})
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "same tool calls and outcome" in rerun.stdout


def test_a_run_that_failed_replays_with_its_error(tmp_path: Path) -> None:
    from tests.providers.fakes import FakeApi, Status

    env = environment(tmp_path) | {"TETHER_PROVIDER": "openai"}
    with FakeApi() as fake:
        fake.queue(
            *[Status(500, {"error": {"message": "model crashed"}}, {"retry-after": "0"})] * 4
        )
        argv = ["run", "hi", "--base-url", fake.url + "/v1", "--model", "m"]
        failed = tether(argv, tmp_path, env, {})
    assert failed.returncode == 1, failed.stderr
    assert "answered 500: model crashed" in failed.stdout
    assert "(no answer)" not in failed.stdout  # the error is the run's last word
    assert "WARNING" not in failed.stderr  # no log lines over the run (no --log-level)
    assert "outcome error · 1 step · 0 in" in failed.stdout
    shown = tether(["replay", session_of(failed.stdout)], tmp_path, env, {})
    assert shown.returncode == 0, shown.stderr
    assert "outcome error · 1 step · error: " in shown.stdout
    assert "answered 500: model crashed (gave up after 4 attempts)" in shown.stdout


def test_replay_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    long_answer = "line of the answer\n" * 20_000  # more than a pipe holds
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": long_answer}]}))
    env = environment(tmp_path) | {"TETHER_SCRIPT": str(script)}
    first = cli.tether(["run", "talk"], tmp_path, env)
    assert first.returncode == 0, first.stderr[-2000:]
    session = first.stdout.rsplit(" · session ", 1)[1].split()[0]
    status, errors = read_one_line_and_leave(["replay", session], tmp_path, env)
    assert status == 141 and "Traceback" not in errors, errors


def test_the_state_folder_of_the_users_config_file_is_where_every_command_looks(
    tmp_path: Path,
) -> None:
    """``stateDir`` in ``~/.config/tether/config.toml`` (no ``TETHER_STATE_DIR``): the server
    keeps the logs there, and ``sessions``, ``--continue`` and ``undo`` find them there."""
    state = tmp_path / "my-state"
    root, env = cli.configured_project(
        tmp_path, f'provider = "scripted"\nstateDir = {json.dumps(str(state))}\n'
    )
    del env["TETHER_STATE_DIR"]
    (root / "a.txt").write_text("one\n")
    first = tether(["run", "make it two", "--yes"], root, env, {"turns": [{"toolCalls": [EDIT]}]})
    assert first.returncode == 0, first.stderr
    session = session_of(first.stdout)
    assert (state / "sessions" / f"{session}.jsonl").is_file()

    listed = tether(["sessions", "--here"], root, env, {})
    assert listed.returncode == 0, listed.stderr
    assert session in listed.stdout, listed.stderr
    again = tether(["run", "--continue", "and now?"], root, env, {"turns": [{"text": "ok"}]})
    assert again.returncode == 0, again.stderr
    assert session_of(again.stdout) == session
    undone = tether(["undo"], root, env, {})
    assert undone.returncode == 0, undone.stderr
    assert (root / "a.txt").read_text() == "one\n"


def test_undo_of_a_file_changed_since_puts_back_the_runs_hunk_and_keeps_the_users(
    tmp_path: Path,
) -> None:
    env = environment(tmp_path)
    project = tmp_path / "p"
    project.mkdir()
    target = project / "a.txt"
    target.write_text("one\n" + "".join(f"{i}\n" for i in range(10)))
    ran = tether(["run", "make it two", "--yes"], project, env, {"turns": [{"toolCalls": [EDIT]}]})
    assert ran.returncode == 0, ran.stderr
    target.write_text(target.read_text() + "the user's line\n")  # typed since, further down
    undone = tether(["undo"], project, env, {})
    assert undone.returncode == 0, undone.stderr
    assert "partly put back: a.txt (1 hunk put back, the changes made since kept)" in undone.stdout
    assert (
        target.read_text() == "one\n" + "".join(f"{i}\n" for i in range(10)) + "the user's line\n"
    )
