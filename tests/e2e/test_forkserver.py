"""The test fork server (``tests/forkserver.py``) stands in for a started process: a test
sees the command's output and status through its launcher, a signal sent to the launcher
reaches the command, and a killed launcher takes the command with it."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests import forkserver

from ..acp.process import alive, descendants
from ..waiting import wait_until
from .conftest import server_env

pytestmark = pytest.mark.skipif(not forkserver.ENABLED, reason="TETHER_TEST_FORK=0")


def test_a_forked_command_answers_through_its_launcher(tmp_path: Path) -> None:
    done = subprocess.run(
        forkserver.command("config", "--bogus"),
        capture_output=True,
        cwd=tmp_path,
        env=server_env(tmp_path / "state"),
        timeout=120,
    )
    assert done.returncode == 2
    assert b"unrecognized arguments: --bogus" in done.stderr


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
async def test_signals_reach_the_fork_and_a_killed_launcher_takes_it_along(
    tmp_path: Path, sent: signal.Signals
) -> None:
    launcher = subprocess.Popen(
        forkserver.command("serve"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=server_env(tmp_path / "state"),
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        fork = await wait_until(lambda: forkserver.served_pid(launcher.pid), "the fork")
        assert fork != launcher.pid and fork in descendants(launcher.pid)
        assert os.getsid(fork) == fork  # the launcher leads a session: so does its fork
        os.kill(launcher.pid, sent)
        assert launcher.wait(timeout=60) == -sent
        await wait_until(lambda: not alive(fork), f"the fork gone after {sent.name}")
    finally:
        launcher.kill()
        launcher.wait(timeout=60)
