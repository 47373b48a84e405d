"""The server's own disk writer through a real ``tether serve`` (a client without
``workspace/applyEdit``): concurrent runs lose no edit, a link swapped in is not followed."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from tether_protocol import ToolResultEvent

from .conftest import Editor, script

RUNS = 8
EDITS = 20


def line(edit: int) -> str:
    return f"<line {edit}>"


async def test_concurrent_runs_through_the_disk_writer_lose_no_edit(
    editor: Editor, workspace: Path
) -> None:
    shared = workspace / "shared.txt"
    shared.write_text("".join(f"{line(e)} old\n" for e in range(EDITS)))
    # Every run plays the same script: each line is fought over by all eight runs.
    turns = [
        {
            "toolCalls": [
                {
                    "name": "edit_file",
                    "arguments": {
                        "path": "shared.txt",
                        "old_text": f"{line(e)} old",
                        "new_text": f"{line(e)} new",
                    },
                }
            ]
        }
        for e in range(EDITS)
    ]
    await editor.open_session(
        workspace,
        apply_edit=False,
        script=script(*turns),
        options={"autoApprove": ["edit_file"], "maxSteps": EDITS + 2},
    )
    results = await asyncio.gather(
        *(editor.run(prompt="edit", runId=f"r{run}") for run in range(RUNS))
    )
    assert all(r["outcome"] == "done" for r in results)
    final = shared.read_text()
    for e in range(EDITS):
        reported = [
            run
            for run in range(RUNS)
            if any(
                isinstance(ev, ToolResultEvent) and ev.ok and ev.call_id == f"call_{e + 1}_1"
                for ev in editor.events_of(f"r{run}")
            )
        ]
        assert f"{line(e)} new\n" in final, f"edit {e}, reported by runs {reported}, was lost"
        assert len(reported) == 1, f"edit {e} reported applied by runs {reported}"
    assert not [p.name for p in workspace.iterdir() if p.name.endswith(".tether")]


CALLS = {
    "write_file": {"path": "sub/x.txt", "content": "written\n"},
    "edit_file": {"path": "sub/x.txt", "old_text": "before", "new_text": "written"},
}


@pytest.mark.parametrize("tool", sorted(CALLS))
async def test_a_folder_swapped_for_a_link_after_the_allow_is_refused(
    editor: Editor, workspace: Path, tmp_path: Path, tool: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "sub").mkdir()
    (workspace / "sub" / "x.txt").write_text("before\n")
    (outside / "x.txt").write_text("before\n")
    call = {"name": tool, "arguments": CALLS[tool]}
    await editor.open_session(workspace, apply_edit=False, script=script({"toolCalls": [call]}))

    def allow_after_a_swap(params: Any) -> Any:  # a daemon swaps the folder meanwhile
        shutil.rmtree(workspace / "sub")
        (workspace / "sub").symlink_to(outside, target_is_directory=True)
        return {"decision": "allow"}

    editor.approve = allow_after_a_swap
    result = await editor.run(prompt="go", runId="r1")
    assert result["outcome"] == "done" and result["changedFiles"] == []
    assert sorted(p.name for p in outside.iterdir()) == ["x.txt"]
    assert (outside / "x.txt").read_text() == "before\n"
    [failure] = [e for e in editor.events_of("r1") if isinstance(e, ToolResultEvent)]
    assert not failure.ok and "symbolic link" in failure.output
