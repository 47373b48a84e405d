"""Undo through a real ``tether serve``: a forged log is refused outside the workspace, and
a client-chosen runId names one run across sessions and restarts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.client.connection import ServerError
from tether.client.headless import connect
from tether.session.index import session_log_path

from .conftest import script


async def test_a_forged_log_cannot_make_undo_write_outside(workspace: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    victim = tmp_path / "victim.txt"
    victim.write_text("planted\n")
    lines = [
        {"runId": "r-forged", "seq": 1, "kind": "run-started", "prompt": "p", "sessionId": "s-x"},
        {
            "record": "edit",
            "runId": "r-forged",
            "uri": victim.as_uri(),
            "path": str(victim),
            "before": "precious\n",
            "after": "planted\n",
        },
    ]
    log = session_log_path(state, "s-x")
    log.parent.mkdir(parents=True)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    options = {"provider": "scripted", "script": script({"text": "hi"}), "stateDir": str(state)}
    async with connect(workspace, options) as client:
        result = await client.request("agent/undo", {"runId": "r-forged"})
    assert victim.read_text() == "planted\n"
    assert result == {
        "reverted": [],
        "partial": [],
        "conflicts": [],
        "notFound": [],
        "refused": [victim.as_uri()],
    }


async def test_a_client_run_id_is_unique_across_sessions_and_restarts(
    workspace: Path, tmp_path: Path
) -> None:
    options = {
        "provider": "scripted",
        "script": script({"text": "hi"}),
        "stateDir": str(tmp_path / "state"),
    }
    async with connect(workspace, options) as client:
        first = await client.run("one", runId="r1")
        with pytest.raises(ServerError) as same_server:
            await client.run("two", runId="r1")  # a new session, the same runId
    async with connect(workspace, options) as client:  # a restart
        with pytest.raises(ServerError) as restarted:
            await client.run("three", runId="r1")
        undone = await client.request("agent/undo", {"runId": "r1"})
    for caught in (same_server, restarted):
        assert caught.value.code == -32602 and "runId" in str(caught.value)
    assert first["outcome"] == "done"
    assert undone["note"] == "the run made no recorded edits; nothing to undo"
