"""No process an MCP server started outlives Tether's stop of it, however hard it holds on.

The server here (``recording_server.py`` with ``STUBBORN_CHILD``) starts a child that leaves
its process group (``setsid``) and ignores SIGTERM: a group kill misses it, and a SIGTERM
does nothing. The server is started through the trampoline, a subreaper that ends every
descendant (SIGTERM, then SIGKILL after its grace); Tether's stop must let it finish, and
finish it itself if it cannot. Each test waits on the child's pid, bounded.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.mcp.hub import McpHub
from tether_protocol import McpServerSettings

from ..acp.client import AcpAgent
from ..acp.recorder import RecordingClient
from ..e2e.raw_client import RawServer
from ..waiting import wait_until, wait_until_sync
from .conftest import alive

RECORDER = Path(__file__).with_name("recording_server.py")
GONE_WITHIN = 30.0
"""A bound on the wait, never a timing assertion (a loaded 2-core machine)."""


def stubborn(marks: Path) -> McpServerSettings:
    return McpServerSettings(
        command=sys.executable,
        args=[str(RECORDER)],
        env={"MARKS": str(marks), "TAG": "stubborn", "STUBBORN_CHILD": str(marks / "child")},
        startup_timeout_seconds=60,
    )


@pytest.fixture
def marks(tmp_path: Path) -> Iterator[Path]:
    """The folder the server writes to; the stubborn child is killed at the end if it is
    still there (a failed test leaves nothing behind)."""
    folder = tmp_path / "marks"
    folder.mkdir()
    yield folder
    pid_file = folder / "child"
    if pid_file.exists() and alive(pid := int(pid_file.read_text())):
        os.kill(pid, signal.SIGKILL)


def child_pid(marks: Path) -> int:
    wait_until_sync(lambda: (marks / "child").exists(), "the stubborn child", GONE_WITHIN)
    pid = int((marks / "child").read_text())
    assert alive(pid)
    return pid


async def test_a_stubborn_descendant_is_gone_once_the_hub_has_stopped(
    tmp_path: Path, marks: Path
) -> None:
    async with McpHub({"PATH": os.environ["PATH"], "HOME": str(tmp_path)}) as hub:
        await hub.configure({"stubborn": stubborn(marks)}, tmp_path)
        hub.start()
        await hub.ready(60)
        assert hub.servers["stubborn"].failure is None, hub.servers["stubborn"].failure
        pid = child_pid(marks)
    # The hub's stop returned: the cleanup it owns is finished.
    await wait_until(lambda: not alive(pid), "the stubborn child to end", GONE_WITHIN)


def user_config(home: Path, marks: Path) -> None:
    folder = home / ".config" / "tether"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(
        "[mcpServers.stubborn]\n"
        f'command = "{sys.executable}"\n'
        f'args = ["{RECORDER}"]\n'
        f'env = {{ MARKS = "{marks}", TAG = "stubborn", STUBBORN_CHILD = "{marks / "child"}" }}\n'
        "startupTimeoutSeconds = 60\n"
    )


def environment(tmp_path: Path, marks: Path) -> dict[str, str]:
    home = tmp_path / "home"
    user_config(home, marks)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "XDG_"))}
    return env | {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "TETHER_STATE_DIR": str(tmp_path / "state"),
        "TETHER_PROVIDER": "scripted",
        "TETHER_SCRIPT": '{"turns": []}',
    }


@pytest.mark.slow
def test_a_stubborn_descendant_is_gone_once_tether_serve_has_exited(
    tmp_path: Path, marks: Path
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    server = RawServer(tmp_path, environment(tmp_path, marks))
    try:
        server.initialize(workspace)
        pid = child_pid(marks)
        server.request("bye", "shutdown")
        server.answer("bye", timeout=30)
        server.notify("exit")
        assert server.close(timeout=30) == 0
    finally:
        server.kill()
    wait_until_sync(lambda: not alive(pid), "the stubborn child to end", GONE_WITHIN)


@pytest.mark.slow
async def test_a_stubborn_descendant_is_gone_once_tether_acp_has_exited(
    tmp_path: Path, marks: Path
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    async with AcpAgent.spawn(
        [sys.executable, "-m", "tether", "acp"],
        cwd=workspace,
        env=environment(tmp_path, marks),
        client=RecordingClient(),
    ) as agent:
        await agent.initialize()
        await agent.new_session(workspace)
        pid = await wait_until(lambda: child_or_none(marks), "the stubborn child", GONE_WITHIN)
        await agent.exit_after_eof(within=GONE_WITHIN)
    await wait_until(lambda: not alive(pid), "the stubborn child to end", GONE_WITHIN)


def child_or_none(marks: Path) -> int | None:
    path = marks / "child"
    return int(path.read_text()) if path.exists() else None
