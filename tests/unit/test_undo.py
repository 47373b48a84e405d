"""Undo is confined and honest: the log is data, edits are logged before they are sent,
and undo says what it could not find."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.config.layers import resolve
from tether.events import RunEvents
from tether.host import EditOutcome, FileEdit, NoBuffers
from tether.policy.gate import ApprovalGate, ApprovalPolicy
from tether.providers.scripted import ScriptedProvider
from tether.run.loop import AgentLoop, Limits
from tether.run.manager import InvalidRun, RunManager
from tether.session.index import session_log_path
from tether.session.records import read_session
from tether.session.store import RunIndex
from tether.session.writer import SessionLogWriter, SessionRecorder
from tether.tools.base import ToolDeps
from tether.tools.edits import EditFile, WriteFile
from tether.tools.registry import ToolRegistry
from tether.workspace.folders import Workspace
from tether.writes.disk import DiskEditor
from tether_protocol import RunParams, Script, TetherSettings


def write_log(state: Path, session_id: str, run_id: str, records: list[dict[str, Any]]) -> None:
    """A session log as a server would leave it (or as someone could forge it)."""
    started = {"runId": run_id, "seq": 0, "kind": "run-started", "prompt": "p", "sessionId": "s"}
    path = session_log_path(state, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [started, *({"runId": run_id, **r} for r in records)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def edit_record(path: Path, before: str, after: str, **extra: Any) -> dict[str, Any]:
    return {
        "record": "edit",
        "uri": path.as_uri(),
        "path": str(path),
        "before": before,
        "after": after,
        **extra,
    }


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Path, Path, Workspace, RunManager]]:
    root = tmp_path / "ws"
    root.mkdir()
    state = tmp_path / "state"
    writer = SessionLogWriter(state)
    yield (
        root,
        state,
        Workspace([root], NoBuffers()),
        RunManager(ToolRegistry([EditFile(), WriteFile()]), writer),
    )
    writer.close()


async def test_undo_refuses_a_log_pointing_outside_the_workspace(
    setup: tuple[Path, Path, Workspace, RunManager], tmp_path: Path
) -> None:
    root, state, ws, manager = setup
    victim = tmp_path / "outside.txt"
    victim.write_text("planted\n")
    (root / "sub").symlink_to(tmp_path, target_is_directory=True)
    through_link = root / "sub" / "outside.txt"
    inside = root / "a.txt"
    inside.write_text("after\n")
    write_log(
        state,
        "s-forged",
        "r-forged",
        [
            edit_record(victim, "precious\n", "planted\n"),
            edit_record(through_link, "precious\n", "planted\n"),
            edit_record(inside, "before\n", "after\n"),
        ],
    )
    result = await manager.undo("r-forged", ws, DiskEditor())
    assert victim.read_text() == "planted\n"
    assert sorted(result.refused) == sorted([victim.as_uri(), through_link.as_uri()])
    assert result.reverted == [inside.as_uri()] and inside.read_text() == "before\n"


async def test_undo_of_an_edit_that_may_not_have_landed(
    setup: tuple[Path, Path, Workspace, RunManager],
) -> None:
    root, state, ws, manager = setup
    landed, missing, never = (root / n for n in ("landed.txt", "missing.txt", "never.txt"))
    landed.write_text("after\n")
    missing.write_text("something else\n")
    never.write_text("before\n")
    intents = [
        {**edit_record(p, "before\n", "after\n"), "record": "edit-intent", "editId": f"e{i}"}
        for i, p in enumerate((landed, missing, never))
    ]
    write_log(state, "s-killed", "r-killed", intents)  # killed before any outcome was logged
    result = await manager.undo("r-killed", ws, DiskEditor())
    assert result.reverted == [landed.as_uri()] and landed.read_text() == "before\n"
    assert result.not_found == [missing.as_uri()]
    assert missing.read_text() == "something else\n" and never.read_text() == "before\n"
    assert result.conflicts == [] and result.refused == []


async def test_undo_says_when_there_is_nothing_to_undo(
    setup: tuple[Path, Path, Workspace, RunManager],
) -> None:
    root, state, ws, manager = setup
    refused = {**edit_record(root / "x.txt", "a", "b"), "record": "edit-intent", "editId": "e1"}
    outcome = {"record": "edit-outcome", "editId": "e1", "applied": False}
    write_log(state, "s-quiet", "r-quiet", [refused, outcome])
    result = await manager.undo("r-quiet", ws, DiskEditor())
    assert result.reverted == [] and result.note is not None and "no recorded edits" in result.note
    again = await manager.undo("r-quiet", ws, DiskEditor())
    assert again.note is not None and "already undone" in again.note


async def test_an_edit_is_logged_before_it_is_sent(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    writer = SessionLogWriter(tmp_path / "state")
    log = session_log_path(tmp_path / "state", "s")
    seen_in_log: list[list[bool]] = []

    class KilledRightAfter(DiskEditor):
        """Applies the edit, and records what a kill -9 at that moment would leave."""

        async def apply_edit(self, edit: FileEdit, label: str) -> EditOutcome:
            outcome = await super().apply_edit(edit, label)
            seen_in_log.append([e.is_after("two\n") for e in read_session(log, "s").edits])
            return outcome

    call = {
        "name": "edit_file",
        "arguments": {"path": "a.txt", "old_text": "one", "new_text": "two"},
    }
    events = RunEvents("r", [])
    editor = KilledRightAfter()
    loop = AgentLoop(
        provider=ScriptedProvider(Script.model_validate({"turns": [{"toolCalls": [call]}]})),
        tools=ToolRegistry([EditFile()]),
        deps=ToolDeps(
            workspace=Workspace([root], NoBuffers()),
            run_id="r",
            editor=editor,
            gate=ApprovalGate(
                ApprovalPolicy(auto_approve=frozenset({"edit_file"})), editor, events
            ),
        ),
        events=events,
        limits=Limits(max_steps=3),
        system="",
        history=[],
        recorder=SessionRecorder(writer, "s", "r"),
    )
    assert (await loop.run("go", "s")).outcome == "done"
    assert seen_in_log == [[True]]
    assert writer.flush()
    [edit] = read_session(log, "s").edits
    assert edit.confirmed and edit.is_before("one\n") and edit.is_after("two\n")
    assert edit.text_before("two\n") == "one\n"
    writer.close()


async def test_a_client_run_id_is_unique_across_sessions(
    setup: tuple[Path, Path, Workspace, RunManager],
) -> None:
    root, state, ws, manager = setup
    write_log(state, "s-old", "r-taken", [])
    config = resolve(
        TetherSettings.model_validate(
            {
                "provider": "scripted",
                "script": {"turns": [{"text": "done"}]},
                "maxSteps": 3,
                "timeoutSeconds": 30,
                "stateDir": str(state),
            }
        ),
        {},
    )
    params = RunParams(prompt="again", run_id="r-taken")
    with pytest.raises(InvalidRun, match="runId"):
        await manager.create(params, config, ws, [], DiskEditor())
    fresh = await manager.create(
        RunParams(prompt="p", run_id="r-new"), config, ws, [], DiskEditor()
    )
    assert fresh.session_id != "s-old"


def test_the_run_index_reads_only_what_was_appended(tmp_path: Path) -> None:
    write_log(tmp_path, "s-a", "r1", [])
    index = RunIndex(tmp_path)
    index.refresh()
    assert index.sessions_of("r1") == ["s-a"] and index.sessions_of("r2") == []
    log = session_log_path(tmp_path, "s-a")
    started = {"runId": "r2", "seq": 1, "kind": "run-started", "prompt": "p", "sessionId": "s-a"}
    line = json.dumps(started).encode() + b"\n"
    with log.open("ab") as handle:
        handle.write(line[:20])  # a line being written: not read yet
    index.refresh()
    assert index.sessions_of("r2") == []
    with log.open("ab") as handle:
        handle.write(line[20:])
    index.refresh()
    assert index.sessions_of("r2") == ["s-a"]
    mention = {"record": "message", "runId": "r3", "message": {"role": "user", "text": "r4"}}
    mention["message"] = {"role": "user", "text": "r4" * 200}  # longer than before
    write_log(tmp_path, "s-a", "r3", [mention])  # rewritten in place: read again
    index.refresh()
    assert index.sessions_of("r1") == [] and index.sessions_of("r3") == ["s-a"]
    assert index.sessions_of("r4") == []  # a mention is not a run
