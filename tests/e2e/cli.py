"""The ``tether`` command line as the CLI tests run it: a clean environment, a call through
pipes to its end, and a reader that leaves after one line (``| head -1``).

A pseudo-terminal (a person at the keyboard) is ``Terminal`` in ``test_cli_terminal.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests import forkserver

TETHER_EXEC = [sys.executable, "-m", "tether"]
"""A new interpreter: for the tests of what a process imports or how it reaches the daemon."""
TETHER = forkserver.command()
"""Forked by the worker's fork server, its server too (``tests/forkserver.py``)."""


def home_beside(tmp_path: Path) -> dict[str, str]:
    """``HOME`` and ``XDG_CONFIG_HOME`` for a test whose workspace is ``tmp_path``: the user's
    config file in ``tmp_path / ".config"`` (where the tests write it) and a home folder
    beside ``tmp_path``, neither it nor inside it (a workspace of the home folder or above it
    is refused: ``allowBroadWorkspace``)."""
    home = tmp_path.with_name(f"{tmp_path.name}-home")
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / ".config")}


def cli_env(tmp_path: Path, *, home: Path | None = None, **settings: str) -> dict[str, str]:
    """The environment of a ``tether`` subprocess: none of the tester's ``TETHER_*`` or
    ``XDG_*`` settings, ``HOME`` at ``home`` (unless given, ``home_beside(tmp_path)``: the
    user's config file under ``tmp_path``) so no file of the user's is read, sessions under
    ``tmp_path / "state"``; then ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "XDG_"))}
    env |= {"HOME": str(home)} if home is not None else home_beside(tmp_path)
    env |= {"TETHER_STATE_DIR": str(tmp_path / "state")}
    env["TETHER_DAEMON"] = "0"  # in-process: no daemon outlives the test (tests/conftest.py)
    return env | settings


def tether(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    *,
    timeout: float = 60,
    command: Sequence[str] = TETHER,
) -> subprocess.CompletedProcess[str]:
    """``tether ARGV`` in ``cwd`` run to its end with no input (no terminal to ask anyone),
    its output captured as text."""
    return subprocess.run(
        [*command, *argv],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def read_one_line_and_leave(argv: list[str], cwd: Path, env: Mapping[str, str]) -> tuple[int, str]:
    """``tether ARGV | head -1``: read one line of its output, close the pipe, and wait
    (up to 30 s) for it to end. Its exit status and what it wrote to stderr."""
    proc = subprocess.Popen(
        [*TETHER, *argv],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline(), "no line came before the pipe was closed"
        proc.stdout.close()
        status = proc.wait(timeout=30)
        return status, proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def configured_project(
    tmp_path: Path, user: str, project: str | None = None
) -> tuple[Path, dict[str, str]]:
    """A project ``tmp_path / "p"`` (with its ``.tether`` folder) and a home whose user config
    file holds ``user``; the project's config file holds ``project`` when given. The project
    and the environment of a ``tether`` run there (no API key of the tester's)."""
    home = tmp_path / "home"
    (home / ".config" / "tether").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "tether" / "config.toml").write_text(user)
    root = tmp_path / "p"
    (root / ".tether").mkdir(parents=True, exist_ok=True)
    if project is not None:
        (root / ".tether" / "config.toml").write_text(project)
    env = cli_env(tmp_path, home=home)
    env.pop("OPENAI_API_KEY", None)
    return root, env
