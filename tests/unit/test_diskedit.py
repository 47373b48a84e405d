"""The disk writer: serialised per file, never through a link, umask kept, no temp left.

Runs go through the real loop, tools and approval gate with ``DiskEditor`` (a client with no
``workspace/applyEdit``: the server writes the disk itself).
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tether.events import RunEvents
from tether.host import FileEdit, NoBuffers
from tether.policy.gate import ApprovalGate, ApprovalPolicy
from tether.providers.scripted import ScriptedProvider
from tether.run.loop import AgentLoop, Limits
from tether.text.edit import minimal_changes
from tether.tools.base import ToolDeps
from tether.tools.edits import EditFile, WriteFile
from tether.tools.registry import ToolRegistry
from tether.workspace.folders import Workspace
from tether.writes import disk as diskedit
from tether.writes.disk import DiskEditor, apply_on_disk, delete_on_disk
from tether.writes.locks import locked_paths
from tether_protocol import ApproveParams, ApproveResult, RunEvent, Script, ToolResultEvent

RUNS = 8
EDITS = 24


class Sink:
    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def publish(self, event: RunEvent) -> None:
        self.events.append(event)


Ask = Callable[[ApproveParams], Awaitable[ApproveResult | None]]


async def allow(request: ApproveParams) -> ApproveResult:
    await anyio.lowlevel.checkpoint()  # an editor answers later, letting other runs go on
    return ApproveResult(decision="allow")


async def run_calls(
    root: Path, calls: list[dict[str, Any]], ask: Ask = allow, run_id: str = "r"
) -> list[ToolResultEvent]:
    """Run one scripted run making ``calls`` (one a step); its tool results."""
    sink = Sink()
    events = RunEvents(run_id, [sink])
    editor = DiskEditor(ask)
    turns = [{"toolCalls": [call]} for call in calls]
    loop = AgentLoop(
        provider=ScriptedProvider(Script.model_validate({"turns": turns})),
        tools=ToolRegistry([EditFile(), WriteFile()]),
        deps=ToolDeps(
            workspace=Workspace([root], NoBuffers()),
            run_id=run_id,
            editor=editor,
            gate=ApprovalGate(ApprovalPolicy(), editor, events),
        ),
        events=events,
        limits=Limits(max_steps=len(turns) + 1),
        system="",
        history=[],
    )
    state = await loop.run("go", "s")
    assert state.outcome == "done"
    return [e for e in sink.events if isinstance(e, ToolResultEvent)]


def line(run: int, edit: int) -> str:
    return f"<run {run} line {edit}>"


async def test_concurrent_runs_lose_no_edit(tmp_path: Path) -> None:
    shared = tmp_path / "shared.txt"
    shared.write_text("".join(line(r, e) + " old\n" for r in range(RUNS) for e in range(EDITS)))
    results: dict[int, list[ToolResultEvent]] = {}

    async def one_run(run: int) -> None:
        calls = [
            {
                "name": "edit_file",
                "arguments": {
                    "path": "shared.txt",
                    "old_text": line(run, e) + " old",
                    "new_text": line(run, e) + " new",
                },
            }
            for e in range(EDITS)
        ]
        results[run] = await run_calls(tmp_path, calls, run_id=f"r{run}")

    async with anyio.create_task_group() as group:
        for run in range(RUNS):
            group.start_soon(one_run, run)

    final = shared.read_text()
    lost = []
    for run in range(RUNS):
        assert len(results[run]) == EDITS
        for e, result in enumerate(results[run]):
            landed = line(run, e) + " new\n" in final
            reported = result.ok and result.output.startswith("Edited shared.txt")
            assert reported == result.ok  # a result is an edit or a failure, nothing else
            if reported != landed:
                lost.append((run, e, result.output))
    assert lost == [], f"{len(lost)} edits reported one way and landed the other: {lost[:3]}"
    assert all(r.ok for rs in results.values() for r in rs)  # serialised: none even stale
    assert locked_paths() == []


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "outside"
    folder.mkdir()
    yield folder
    shutil.rmtree(folder)


def swap_for_link(folder: Path, target: Path) -> None:
    """What a daemon started by an earlier command could do: the folder becomes a link."""
    shutil.rmtree(folder)
    folder.symlink_to(target, target_is_directory=True)


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
async def test_a_folder_swapped_for_a_link_after_the_allow_is_not_followed(
    tmp_path: Path, outside: Path, tool: str
) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "x.txt").write_text("before\n")
    (outside / "x.txt").write_text("before\n")

    async def allow_then_swap(request: ApproveParams) -> ApproveResult:
        swap_for_link(root / "sub", outside)
        return ApproveResult(decision="allow")

    arguments = (
        {"path": "sub/x.txt", "content": "written\n"}
        if tool == "write_file"
        else {"path": "sub/x.txt", "old_text": "before", "new_text": "written"}
    )
    [result] = await run_calls(root, [{"name": tool, "arguments": arguments}], allow_then_swap)
    assert (outside / "x.txt").read_text() == "before\n"
    assert sorted(p.name for p in outside.iterdir()) == ["x.txt"]
    assert not result.ok
    assert "symbolic link" in result.output


def file_edit(root: Path, path: Path, before: str | None, after: str) -> FileEdit:
    return FileEdit(
        path=path,
        root=root,
        uri=path.as_uri(),
        base_text=before or "",
        after=after,
        version=None,
        create=before is None,
        changes=minimal_changes(before or "", after),
    )


async def test_paths_outside_the_root_and_links_are_refused(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    victim = outside / "v.txt"
    victim.write_text("mine\n")
    outcome = await apply_on_disk(file_edit(root, victim, "mine\n", "owned\n"))
    assert not outcome.applied and "outside the workspace" in (outcome.failure or "")
    (root / "link.txt").symlink_to(victim)
    outcome = await apply_on_disk(file_edit(root, root / "link.txt", "mine\n", "owned\n"))
    assert not outcome.applied and "symbolic link" in (outcome.failure or "")
    assert victim.read_text() == "mine\n"
    (root / "sub").symlink_to(outside, target_is_directory=True)
    deleted = await delete_on_disk(root / "sub" / "v.txt", root)
    assert not deleted.applied and "symbolic link" in (deleted.failure or "")
    deleted = await delete_on_disk(root / "sub" / "v.txt")  # from "/": no link either
    assert not deleted.applied
    assert victim.read_text() == "mine\n"


@pytest.fixture
def umask_027() -> Iterator[int]:
    old = os.umask(0o027)
    try:
        yield 0o027
    finally:
        os.umask(old)


@pytest.fixture(params=["O_TMPFILE", "named temporary"])
def temp_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of writing: an anonymous file, and the fallback without ``O_TMPFILE``."""
    if request.param == "named temporary":
        monkeypatch.setattr(diskedit, "_O_TMPFILE", None)
    return str(request.param)


async def test_new_files_honour_the_umask_and_old_files_keep_their_mode(
    tmp_path: Path, umask_027: int, temp_kind: str
) -> None:
    created = tmp_path / "deep" / "new.txt"
    assert (await apply_on_disk(file_edit(tmp_path, created, None, "new\n"))).applied
    assert stat.S_IMODE(created.stat().st_mode) == 0o666 & ~umask_027
    assert stat.S_IMODE(created.parent.stat().st_mode) == 0o777 & ~umask_027
    kept = tmp_path / "kept.sh"
    kept.write_text("old\n")
    kept.chmod(0o751)
    assert (await apply_on_disk(file_edit(tmp_path, kept, "old\n", "new\n"))).applied
    assert stat.S_IMODE(kept.stat().st_mode) == 0o751
    assert kept.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "kept.sh"]


async def test_a_new_file_created_meanwhile_is_not_overwritten(
    tmp_path: Path, temp_kind: str
) -> None:
    target = tmp_path / "new.txt"
    edit = file_edit(tmp_path, target, None, "agent\n")
    target.write_text("user\n")
    outcome = await apply_on_disk(edit)
    assert not outcome.applied and outcome.stale
    assert target.read_text() == "user\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.txt"]


KILLED_WRITER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from tether.writes import disk as diskedit
    from tether.host import FileEdit

    def stop_here(fd):  # the data is written, the rename not done: tell the test, wait
        sys.stdout.write("writing\\n")
        sys.stdout.flush()
        sys.stdin.readline()

    os.fsync = stop_here
    root = Path(sys.argv[1])
    path = root / sys.argv[2]
    before = path.read_text() if path.exists() else None
    edit = FileEdit(path=path, root=root, uri=path.as_uri(), base_text=before or "",
                    after="new\\n", version=None, create=before is None, changes=())
    diskedit._apply_on_disk(edit)
    """
)


@pytest.mark.parametrize("name", ["old.txt", "created.txt"])
def test_a_write_killed_midway_leaves_no_temp_file(tmp_path: Path, name: str) -> None:
    (tmp_path / "old.txt").write_text("old\n")
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(tmp_path), name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "writing\n"
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=10)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait(timeout=10)
    assert writer.returncode == -signal.SIGKILL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.txt"]
    assert (tmp_path / "old.txt").read_text() == "old\n"


async def test_a_change_made_while_writing_is_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, temp_kind: str
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("base\n")
    write_all = diskedit._write_all

    def outsider_writes_meanwhile(fd: int, data: bytes) -> None:
        write_all(fd, data)
        target.write_text("the user's\n")  # after the first check, before the rename

    monkeypatch.setattr(diskedit, "_write_all", outsider_writes_meanwhile)
    outcome = await apply_on_disk(file_edit(tmp_path, target, "base\n", "agent\n"))
    assert not outcome.applied and outcome.stale
    assert target.read_text() == "the user's\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
