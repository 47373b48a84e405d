"""Every process a command started ends with the call, whatever the backend — also when
the server itself dies mid-command (issue 24 break 7: a daemon outlived the server)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether_protocol import ToolProgressEvent

from ..e2e.conftest import script, serving
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


# A run's command that leaves a descendant behind it, cancelled through the real server.
# The descendant leaves the command's process group (``setsid``) and ignores SIGTERM: a
# group kill misses it and a SIGTERM does nothing, so only the trampoline's tree walk
# (SIGTERM, SIGKILL after its grace) or Tether's own last hammer can end it. It says its
# pid once it ignores SIGTERM; the command prints it (``child PID``) and waits for it.
STUBBORN = (
    'setsid sh -c \'trap "" TERM; echo $$;'
    ' exec python3 -c "import signal; signal.pause()" {marker} > /dev/null 2>&1\''
    " < /dev/null | {{ read pid; echo child $pid; }}"
)
# The same, and it also keeps the trampoline stopped (SIGSTOP, again whenever it is
# continued): the trampoline cannot finish its own cleanup, so the cleanup's owner (the
# server) must end the whole tree itself once the trampoline's grace is over — a kill of
# the group alone would kill the trampoline and leave this process running for good.
HOLDS_THE_REAPER = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
reaper = os.pidfd_open(int(sys.argv[1]))  # never a reused pid
signal.pidfd_send_signal(reaper, signal.SIGSTOP)
print(os.getpid(), flush=True)
while True:
    time.sleep(0.02)
    try:
        signal.pidfd_send_signal(reaper, signal.SIGSTOP)
    except ProcessLookupError:
        break
while True:
    signal.pause()
"""
STOPS_ITS_REAPER = (
    "setsid python3 -c '{code}' $PPID {marker} 2> /dev/null < /dev/null"
    " | {{ read pid; echo child $pid; }}"
)
GONE_WITHIN = 30.0
"""A bound on the wait, never a timing assertion (a loaded 2-core machine)."""


def _command(kind: str, marker: str) -> str:
    if kind == "stubborn":
        return STUBBORN.format(marker=marker)
    return STOPS_ITS_REAPER.format(code=HOLDS_THE_REAPER.strip(), marker=marker)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["stubborn", "stops-its-reaper"])
async def test_a_cancelled_runs_setsid_descendant_that_ignores_sigterm_is_gone(
    tmp_path: Path, marker: str, kind: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    bash = {"name": "bash", "arguments": {"command": _command(kind, marker)}}
    turns = script({"toolCalls": [bash]}, {"text": "ok"})
    async with serving(tmp_path / "state") as editor:

        def child() -> int | None:
            """The pid the running command printed (its ``tool-progress`` reports)."""
            for event in editor.events_of("r1"):
                if isinstance(event, ToolProgressEvent) and event.last_line.startswith("child "):
                    return int(event.last_line.removeprefix("child "))
            return None

        await editor.open_session(workspace, options={"autoApprove": ["bash"]}, script=turns)
        running = asyncio.ensure_future(editor.run(prompt="start it", runId="r1"))
        try:
            pid = await wait_until(child, "the command to say its child's pid", GONE_WITHIN)
            assert pid in processes_with(marker)
            await editor.client.protocol.send_request_async("agent/cancel", {"runId": "r1"})
            result = await asyncio.wait_for(running, GONE_WITHIN)
        finally:
            running.cancel()
        assert result["outcome"] == "cancelled"
        await wait_until(lambda: not processes_with(marker), "the descendant to end", GONE_WITHIN)
