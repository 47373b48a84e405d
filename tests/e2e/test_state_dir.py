"""A state dir that cannot be written: runs go on, and the user is told once.

CI runs as root, where a chmod'ed folder stays writable; a state dir under a regular file
cannot be created by anyone.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from lsprotocol import types

from ..waiting import wait_until
from .cli import tether
from .conftest import Editor, script, server_env, serving

READ_APP = {"name": "read_file", "arguments": {"path": "src/app.py"}}
TURNS = [{"text": "reading", "toolCalls": [READ_APP]}, {"text": "it greets"}]


@pytest_asyncio.fixture
async def unwritable(tmp_path: Path) -> Path:
    """A state dir path whose parent is a regular file."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the state dir's parent should be\n")
    return blocker / "state"


@pytest_asyncio.fixture
async def editor_without_state(unwritable: Path) -> AsyncIterator[Editor]:
    """The usual editor, against a server whose state dir cannot be created."""
    async with serving(unwritable) as editor:
        yield editor


async def test_runs_go_on_and_the_editor_gets_one_warning(
    editor_without_state: Editor, workspace: Path, unwritable: Path
) -> None:
    editor = editor_without_state
    await editor.open_session(workspace, script=script(*TURNS, *TURNS))
    for run_id in ("r1", "r2"):
        result = await editor.run(prompt="what does app.py do?", runId=run_id)
        assert result["outcome"] == "done" and result["answer"] == "it greets"
    # agent/sessions waits for the writer to finish, so every report was sent before it.
    listed = await editor.client.protocol.send_request_async("agent/sessions", {})
    assert listed["sessions"] == []
    shown = editor.client.messages
    assert len(shown) == 1, shown
    assert shown[0].type == types.MessageType.Warning
    assert str(unwritable) in shown[0].message and "runs go on" in shown[0].message


def test_tether_run_tells_the_terminal_once(workspace: Path, unwritable: Path) -> None:
    env = {
        **server_env(unwritable),
        "TETHER_PROVIDER": "scripted",
        "TETHER_SCRIPT": json.dumps(script(*TURNS)),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    done = tether(["run", "what does app.py do?", "--yes"], workspace, env)
    assert done.returncode == 0, done.stderr
    assert "outcome done" in done.stdout
    errors = done.stderr.splitlines()
    assert len(errors) < 10, done.stderr
    told = [line for line in errors if line.startswith("tether: warning: ")]
    assert len(told) == 1 and str(unwritable) in told[0], done.stderr


async def logged_kinds(state_dir: Path, run_id: str, until: str) -> list[str]:
    """The kinds of ``run_id``'s events in ``state_dir``'s logs, once ``until`` is among
    them (waits up to 5 s: the log is written by the server's own thread)."""

    def kinds() -> list[str] | None:
        found = []
        for log in sorted((state_dir / "sessions").glob("*.jsonl")):
            for line in log.read_text().splitlines():
                item = json.loads(line)
                if "record" not in item and item["runId"] == run_id:
                    found.append(item["kind"])
        return found if until in found else None

    return await wait_until(kinds, f"{until} of {run_id} in {state_dir}'s logs")


async def test_a_state_dir_changed_mid_run_keeps_the_run_in_the_old_one(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    old, new = editor.state_dir, tmp_path / "new-state"
    await editor.open_session(workspace, script=script(*TURNS, *TURNS, delaySeconds=0.5))
    running = asyncio.ensure_future(editor.run(prompt="slow", runId="r1"))
    await editor.wait_for_event("step")
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tether": {"stateDir": str(new)}})
    )
    assert (await running)["outcome"] == "done"
    kinds = await logged_kinds(old, "r1", until="run-finished")
    assert kinds == editor.kinds("r1")  # every event of the run, none dropped
    second = await editor.run(prompt="after the change", runId="r2")
    assert "run-started" in await logged_kinds(new, "r2", until="run-finished")
    assert not (new / "sessions" / f"{(await running)['sessionId']}.jsonl").exists()
    listed = await editor.client.protocol.send_request_async("agent/sessions", {})
    assert [s["sessionId"] for s in listed["sessions"]] == [second["sessionId"]]
