"""A real ``tether acp`` rehearses a first prompt before the client's first
(``acp.rehearsal``): the client sees none of it, nothing of it stays on disk, and the
client's own first prompt and its session are as without it."""

from __future__ import annotations

import sys
from pathlib import Path

from ..waiting import wait_until
from .client import AcpAgent
from .recorder import EDITOR, RecordingClient
from .tether import EOF_WITHIN, call, tether_env, turns

REHEARSED = "a first run rehearsed in"
SCRIPT = turns(
    {"tool_calls": [call("read_file", path="notes.txt")]},
    {"tool_calls": [call("write_file", path="notes.txt", content="b\n")]},
    {"text": "Changed."},
)


async def test_the_rehearsal_is_invisible_to_the_client_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    root, temp, log = tmp_path / "work", tmp_path / "tmp", tmp_path / "stderr.txt"
    root.mkdir()
    temp.mkdir()
    (root / "notes.txt").write_text("a\n")
    client = RecordingClient(capabilities=EDITOR, permission="allow_once")
    argv = [sys.executable, "-m", "tether", "--log-level", "INFO", "acp"]
    env = tether_env(tmp_path, SCRIPT, TMPDIR=str(temp))
    async with AcpAgent.spawn(argv, cwd=root, env=env, client=client, stderr_path=log) as agent:
        await agent.initialize()
        await wait_until(lambda: REHEARSED in log.read_text(), "the rehearsal's end", 60)
        # The client got nothing of the rehearsal's prompt: no update, request or answer.
        assert [m.payload.get("id") for m in client.messages if m.direction == "to_client"] == [
            m.payload["id"] for m in client.messages if m.direction == "to_agent"
        ]
        assert client.updates == [] and client.permissions == [] and client.reads == []
        assert list(temp.iterdir()) == []

        session = await agent.new_session(root)
        answer = await agent.prompt(session, "change it")
        assert answer["stopReason"] == "end_turn"
        assert agent.text(session) == "Changed."
        assert len(client.permissions) == 1
        assert client.writes == [(str(root / "notes.txt"), "b\n")]
        # The one session in the user's state folder is the client's.
        logs = list((tmp_path / "sessions").rglob("*.jsonl"))
        assert [p.stem for p in logs] == [session], logs
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
    assert log.read_text().count(REHEARSED) == 1
