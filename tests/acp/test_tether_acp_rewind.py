"""``/rewind`` from an ACP client's prompt, through the real ``tether acp``: the list of the
session's checkpoints, then a rewind of a ``bash`` step that put its files back."""

from __future__ import annotations

from pathlib import Path

from .recorder import NOTHING, RecordingClient
from .tether import call, tether_acp, turns


async def test_rewind_lists_and_rewinds_from_a_prompt(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    shell = call("bash", command="rm a.txt && printf 'new\\n' > b.txt")
    script = turns({"tool_calls": [shell]}, {"text": "done"})
    client = RecordingClient(capabilities=NOTHING, permission="allow_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        await agent.prompt(session, "tidy up")
        assert not (root / "a.txt").exists() and (root / "b.txt").exists()
        before = len(client.updates)
        assert (await agent.prompt(session, "/rewind"))["stopReason"] == "end_turn"
        listed = "".join(u.text() for u in client.updates[before:])
        assert "a.txt deleted" in listed and "b.txt created" in listed, listed
        checkpoint = next(w for w in listed.split() if w.startswith("c-"))
        before = len(client.updates)
        await agent.prompt(session, f"/rewind {checkpoint} files")
        said = "".join(u.text() for u in client.updates[before:])
        assert "restored: a.txt" in said and "restored: b.txt" in said, said
        assert (root / "a.txt").read_text() == "one\n" and not (root / "b.txt").exists()
        client.assert_clean()
