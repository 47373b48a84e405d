"""Background jobs through ACP: a command the model started in the background (the client
allowed it) keeps running after the turn; ``/jobs`` (an available command) lists it; the
session's close ends it and every process it started. Against the real ``tether acp``,
every message checked against the vendored schema."""

from __future__ import annotations

from pathlib import Path

from ..waiting import wait_until
from .process import alive
from .recorder import NOTHING, RecordingClient
from .tether import EOF_WITHIN, call, tether_acp, turns

SERVE = "echo $$ > pid; echo 'ready on :8000'; exec sleep 300"


async def test_a_job_is_listed_by_jobs_and_ends_with_its_session(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    script = turns(
        {"tool_calls": [call("bash", command=SERVE, background=True)]}, {"text": "It runs."}
    )
    client = RecordingClient(capabilities=NOTHING, permission=lambda asked: "allow_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        assert (await agent.prompt(session, "start the server"))["stopReason"] == "end_turn"
        pid = int((root / "pid").read_text())
        assert alive(pid)  # the turn ended, the job runs on
        before = len(client.updates)
        assert (await agent.prompt(session, "/jobs"))["stopReason"] == "end_turn"
        said = "".join(u.text() for u in client.updates[before:])
        assert "job-1 · running" in said and "ready on :8000" in said, said
        assert await agent.request("session/close", {"sessionId": session}) == {}
        await wait_until(lambda: not alive(pid), "the job's process gone with its session")
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
