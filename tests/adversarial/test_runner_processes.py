"""Every process a command started ends with the call, whatever the backend — also when
the server itself dies mid-command (issue 24 break 7: a daemon outlived the server)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..sandboxes import require_backend
from ..waiting import wait_until
from .probes import OUTSIDE, kill_all_with, mark, processes_with

SERVER = """
import sys
from pathlib import Path
import anyio
from tether.tools.shell import run_command
from tests.sandboxes import sandbox_in

async def main(backend: str, ws: str, home: str, command: str) -> None:
    home_dir = Path(home)
    box = None if backend == "none" else sandbox_in(backend, [Path(ws)], home_dir, home_dir / "s")
    await run_command(command, Path(ws), 120.0, sandbox=box)

anyio.run(main, *sys.argv[1:])
"""


@pytest.fixture
def marker() -> Iterator[str]:
    made = mark()
    yield made
    kill_all_with(made)


@pytest.mark.parametrize("backend", ["none", "bwrap", "landlock"])
async def test_a_daemon_ends_when_the_server_dies_mid_command(
    tmp_path: Path, marker: str, backend: str
) -> None:
    if backend != "none":
        require_backend(backend)  # type: ignore[arg-type]
    ws = tmp_path / "ws"
    ws.mkdir()
    command = (
        f"setsid sh -c 'echo $$ > started; exec sleep {marker}' > /dev/null 2>&1 < /dev/null &"
        f" until [ -s started ]; do :; done; touch ready; sleep {marker}9"
    )
    root = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(dir=OUTSIDE, prefix="tether-adv-home-") as home:
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, backend, str(ws), home, command],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            stdin=subprocess.DEVNULL,
        )
        try:
            await wait_until(lambda: (ws / "ready").exists(), "the command to be running", 30)
            assert processes_with(marker)
            server.send_signal(signal.SIGKILL)  # no cleanup of its own can run
            server.wait(timeout=10)
            await wait_until(lambda: not processes_with(marker), "the daemon to be gone", 10)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait(timeout=10)
