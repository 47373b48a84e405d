"""The run lifecycle without a transport: atomic id reservation, release on every way out,
cancel and steer before the run starts, and bounded session memory."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import wait_until
from tether.config.layers import Config, resolve
from tether.host import NoBuffers
from tether.providers.base import UserMessage
from tether.run import manager as runs
from tether.run.manager import InvalidRun, Run, RunManager
from tether.session.store import load
from tether.session.writer import SessionLogWriter
from tether.tools.registry import ToolRegistry
from tether.workspace.folders import Workspace
from tether.writes.disk import DiskEditor
from tether_protocol import RunEvent, RunParams, TetherSettings


class Collector:
    """An event sink keeping every event."""

    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def publish(self, event: RunEvent) -> None:
        self.events.append(event)

    def kinds(self, run_id: str) -> list[str]:
        return [e.kind for e in self.events if e.run_id == run_id]


class Server:
    """What a transport holds: a manager, the configuration, a workspace, an event sink."""

    def __init__(self, tmp_path: Path, turns: list[dict[str, Any]]) -> None:
        root = tmp_path / "ws"
        root.mkdir(exist_ok=True)
        self.state = tmp_path / "state"
        self.writer = SessionLogWriter(self.state)
        self.manager = RunManager(ToolRegistry([]), self.writer)
        settings = {"provider": "scripted", "script": {"turns": turns}, "stateDir": str(self.state)}
        self.config: Config = resolve(TetherSettings.model_validate(settings), {})
        self.workspace = Workspace([root], NoBuffers())
        self.sink = Collector()

    async def create(self, **params: Any) -> Run:
        return await self.manager.create(
            RunParams.model_validate(params), self.config, self.workspace, [self.sink], DiskEditor()
        )

    async def run(self, **params: Any) -> str:
        """A whole run; its session id."""
        run = await self.create(**params)
        return (await self.manager.execute(run)).session_id


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[Server]]:
    made: list[Server] = []
    yield made
    for server in made:
        server.writer.close()


def start(servers: list[Server], tmp_path: Path, *turns: dict[str, Any]) -> Server:
    """A server on ``tmp_path``'s state; a second one is the first restarted."""
    server = Server(tmp_path, list(turns) or [{"text": "ok"}])
    servers.append(server)
    return server


async def outcomes(*creates: Any) -> tuple[list[Run], list[BaseException]]:
    answers = await asyncio.gather(*creates, return_exceptions=True)
    return [a for a in answers if isinstance(a, Run)], [
        a for a in answers if isinstance(a, BaseException)
    ]


async def test_two_creates_for_one_session_start_one(servers: list[Server], tmp_path: Path) -> None:
    session_id = await start(servers, tmp_path).run(prompt="yesterday")
    server = start(servers, tmp_path)  # restarted: the session is read from its log
    started, refused = await outcomes(
        server.create(prompt="a", sessionId=session_id),
        server.create(prompt="b", sessionId=session_id),
    )
    assert len(started) == 1 and len(refused) == 1, refused
    assert isinstance(refused[0], InvalidRun) and "sessionId" in str(refused[0])
    assert (await server.manager.execute(started[0])).outcome == "done"
    assert await server.run(prompt="free again", sessionId=session_id) == session_id


async def test_two_creates_with_one_run_id_start_one(servers: list[Server], tmp_path: Path) -> None:
    server = start(servers, tmp_path)
    started, refused = await outcomes(
        server.create(prompt="a", runId="same"), server.create(prompt="b", runId="same")
    )
    assert len(started) == 1 and len(refused) == 1, refused
    assert isinstance(refused[0], InvalidRun) and "runId" in str(refused[0])
    await server.manager.execute(started[0])
    assert server.sink.kinds("same").count("run-started") == 1


async def test_a_failed_history_load_holds_the_session_then_releases_it(
    servers: list[Server], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = await start(servers, tmp_path).run(prompt="yesterday")
    server = start(servers, tmp_path)
    loading, fail = threading.Event(), threading.Event()

    def broken_load(state_dir: Path, session: str) -> None:
        loading.set()
        fail.wait(10)
        raise OSError("disk gone")

    monkeypatch.setattr(runs, "load", broken_load)
    first = asyncio.ensure_future(server.create(prompt="a", sessionId=session_id, runId="r-a"))
    await wait_until(loading.is_set, "the session's log to be read")
    with pytest.raises(InvalidRun, match="sessionId"):  # reserved while the log is read
        await server.create(prompt="b", sessionId=session_id)
    fail.set()
    with pytest.raises(OSError):
        await first
    monkeypatch.undo()
    run = await server.create(prompt="c", sessionId=session_id, runId="r-a")  # both ids free
    assert (await server.manager.execute(run)).outcome == "done"


async def test_cancel_and_steer_before_the_run_starts(
    servers: list[Server], tmp_path: Path
) -> None:
    server = start(servers, tmp_path)
    run = await server.create(prompt="never asked", runId="r1")
    assert server.manager.steer("r1", "also this")
    assert server.manager.cancel("r1")
    result = await server.manager.execute(run)
    assert result.outcome == "cancelled" and result.steps == 0
    assert server.sink.kinds("r1") == ["run-started", "run-finished"]  # no model call
    assert not server.manager.cancel("r1") and not server.manager.steer("r1", "late")


async def test_a_steer_before_the_start_joins_the_first_step(
    servers: list[Server], tmp_path: Path
) -> None:
    server = start(servers, tmp_path)
    run = await server.create(prompt="first", runId="r1")
    assert server.manager.steer("r1", "and mind the tests")
    await server.manager.execute(run)
    assert run.loop is not None
    said = [m.text for m in run.loop.history if isinstance(m, UserMessage)]
    assert said == ["first", "and mind the tests"]


async def test_a_cancel_during_the_transports_setup_ends_the_run(
    servers: list[Server], tmp_path: Path
) -> None:
    server = start(servers, tmp_path)
    session_id = await server.run(prompt="first")
    run = await server.create(prompt="second", sessionId=session_id, runId="r2")
    asked = asyncio.Event()

    async def progress_never_answered() -> None:
        asked.set()
        await asyncio.Event().wait()  # the client has not answered progress creation

    executing = asyncio.ensure_future(server.manager.execute(run, progress_never_answered()))
    async with asyncio.timeout(5):
        await asked.wait()
    assert server.manager.cancel("r2")
    async with asyncio.timeout(5):
        result = await executing
    assert result.outcome == "cancelled" and "step" not in server.sink.kinds("r2")
    assert await server.run(prompt="third", sessionId=session_id) == session_id


async def test_session_memory_is_bounded(
    servers: list[Server], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runs, "SESSIONS_KEPT", 3, raising=False)
    server = start(servers, tmp_path)
    sessions = [await server.run(prompt=f"session {i}") for i in range(10)]
    kept = {
        key
        for value in vars(server.manager).values()
        if isinstance(value, dict)
        for key in value
        if key in sessions
    }
    assert kept == set(sessions[-3:])  # the most recent ones, for a fast continuation
    # an evicted session continues from its log
    run = await server.create(prompt="back to the first", sessionId=sessions[0])
    await server.manager.execute(run)
    assert run.loop is not None
    said = [m.text for m in run.loop.history if isinstance(m, UserMessage)]
    assert said == ["session 0", "back to the first"]


async def test_every_way_out_releases_the_ids(servers: list[Server], tmp_path: Path) -> None:
    server = start(servers, tmp_path)
    session_id = await server.run(prompt="first")
    with pytest.raises(InvalidRun, match="provider"):  # refused after the ids were taken
        await server.create(prompt="x", runId="r1", sessionId=session_id, provider="nope")
    with pytest.raises(InvalidRun, match="sessionId"):
        await server.create(prompt="x", runId="r1", sessionId="s-unknown")
    run = await server.create(prompt="x", runId="r1", sessionId=session_id)

    async def progress_fails() -> None:
        raise RuntimeError("transport broke")

    with pytest.raises(RuntimeError):
        await server.manager.execute(run, progress_fails())
    assert run.phase == "finished" and run.finished.is_set()
    assert not server.manager.cancel("r1")
    assert await server.run(prompt="again", sessionId=session_id) == session_id


async def test_a_finished_run_is_in_its_log_before_its_result_is_answered(
    servers: list[Server], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process (the terminal after the editor, a restarted server) continues the
    session the moment the answer arrives: a slow disk must not make it unknown there."""
    write = SessionLogWriter._write

    def slow_disk(self: SessionLogWriter, path: Path, item: Any) -> bool:
        time.sleep(0.05)  # a loaded machine's disk, not a wait for anything
        return write(self, path, item)

    monkeypatch.setattr(SessionLogWriter, "_write", slow_disk)
    session_id = await start(servers, tmp_path).run(prompt="yesterday")
    data = load(tmp_path / "state", session_id)  # at once: no wait, no flush of ours
    assert data is not None and any(isinstance(m, UserMessage) for m in data.history)
