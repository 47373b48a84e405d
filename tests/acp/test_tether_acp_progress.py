"""A command Tether runs itself (the client has no terminals) shows its output so far: a
``tool_call_update`` with it as content while it runs, before the one that completes it.
The command waits on a FIFO the test opens once it has seen that update."""

from __future__ import annotations

from pathlib import Path

from ..fifo import gate, release
from .recorder import NOTHING, RecordingClient
from .tether import EOF_WITHIN, call, tether_acp, turns

COMMAND = "echo compiling part one; read word < gate; echo finished $word"


def texts(update: dict) -> list[str]:
    return [c["content"]["text"] for c in update.get("content") or [] if c["type"] == "content"]


async def test_a_running_command_shows_its_output_so_far(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    fifo = gate(root)
    script = turns({"tool_calls": [call("bash", command=COMMAND)]}, {"text": "Built."})
    client = RecordingClient(capabilities=NOTHING, permission="allow_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        turn = agent.start_prompt(session, "build it")

        def running() -> dict | None:
            return next(
                (
                    u.update
                    for u in client.updates
                    if u.kind == "tool_call_update"
                    and "rawOutput" not in u.update
                    and texts(u.update) == ["compiling part one\n"]
                ),
                None,
            )

        try:
            so_far = await client.wait_for(running, "the output so far", 20)
        finally:
            await release(fifo)
        assert so_far["status"] == "in_progress"
        assert (await turn)["stopReason"] == "end_turn"
        updates = [u.update for u in client.updates if u.kind == "tool_call_update"]
        [done] = [u for u in updates if "rawOutput" in u]
        assert done["toolCallId"] == so_far["toolCallId"] and done["status"] == "completed"
        assert "finished go" in texts(done)[0]
        assert updates.index(so_far) < updates.index(done)
        # Sent when the output changed, not at every report of the time.
        assert sum(texts(u) == ["compiling part one\n"] for u in updates) == 1
        client.assert_clean()  # every update valid against ACP's schema
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
