"""A change the user makes between two steps is the user's, not the next step's: against
the real ``tether serve``, whose scan before a ``bash`` step lists again only the folders
the kernel said changed (and falls back to a full scan for a new folder), and whose scan
after a step ends in the background and is recorded by the run's end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tether.client.headless import connect

from .conftest import script
from .test_rewind import paths


def _bash(command: str) -> dict[str, Any]:
    return {"text": "shell", "toolCalls": [{"name": "bash", "arguments": {"command": command}}]}


async def test_changes_made_between_runs_are_not_the_next_steps(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "src").mkdir(exist_ok=True)
    (workspace / "src" / "kept.txt").write_text("kept\n")
    (workspace / "a.txt").write_text("a\n")
    turns = [_bash("printf 'run\\n' >> src/log.txt"), {"text": "done"}]  # each run's
    options = {
        "provider": "scripted",
        "script": script(*turns),
        "stateDir": str(tmp_path / "state"),
        "autoApprove": ["bash"],
    }
    root = workspace.resolve()
    async with connect(workspace, options) as client:
        first = await client.run("one")
        assert first["outcome"] == "done", first
        session = first["sessionId"]
        # The user, between runs: a file in a folder seen, a file chmodded and moved into
        # another folder, a new folder.
        (workspace / "src" / "kept.txt").write_text("the user's\n")
        (workspace / "a.txt").chmod(0o600)
        (workspace / "a.txt").rename(workspace / "src" / "moved.txt")
        (workspace / "notes").mkdir()
        (workspace / "notes" / "todo.txt").write_text("the user's\n")
        second = await client.run("two", sessionId=session)
        assert second["outcome"] == "done", second
        # Only a file the user changed in a folder already seen, then the next step.
        (workspace / "src" / "kept.txt").write_text("the user's again\n")
        third = await client.run("three", sessionId=session)
        assert third["outcome"] == "done", third
        listed = await client.request("agent/checkpoints", {"sessionId": session})
    changed = [paths([f["uri"] for f in c["files"]], root) for c in listed["checkpoints"]]
    assert changed == [["src/log.txt"]] * 3
