"""The model's plan reaches the editor whole, as a ``plan`` event after the call that set it."""

from __future__ import annotations

from pathlib import Path

from tether_protocol import PlanEvent, ToolResultEvent

from .conftest import Editor, script


def _plan(*steps: tuple[str, str]) -> dict[str, object]:
    return {
        "name": "plan",
        "arguments": {"steps": [{"content": c, "status": s} for c, s in steps]},
    }


async def test_each_plan_call_sends_the_whole_list_and_asks_nothing(
    editor: Editor, workspace: Path
) -> None:
    first = _plan(("read the code", "in_progress"), ("fix the bug", "pending"))
    second = _plan(("read the code", "completed"), ("fix the bug", "in_progress"))
    await editor.open_session(
        workspace, script=script({"toolCalls": [first]}, {"toolCalls": [second]}, {"text": "done"})
    )
    result = await editor.run(prompt="fix it", runId="r1")
    assert result["outcome"] == "done"
    assert editor.approvals == []  # a plan touches nothing: it is never asked
    events = editor.events_of("r1")
    plans = [e for e in events if isinstance(e, PlanEvent)]
    assert [[(p.content, p.status) for p in e.entries] for e in plans] == [
        [("read the code", "in_progress"), ("fix the bug", "pending")],
        [("read the code", "completed"), ("fix the bug", "in_progress")],
    ]
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert results[0].output == "Plan shown to the user: 2 steps (1 in progress, 1 pending)."
    assert events.index(plans[0]) == events.index(results[0]) + 1  # after the call set it


async def test_a_malformed_plan_is_a_failed_call_and_sends_no_plan(
    editor: Editor, workspace: Path
) -> None:
    bad = {"name": "plan", "arguments": {"steps": [{"content": "x", "status": "doing"}]}}
    await editor.open_session(workspace, script=script({"toolCalls": [bad]}, {"text": "done"}))
    result = await editor.run(prompt="plan", runId="r2")
    assert result["outcome"] == "done"
    events = editor.events_of("r2")
    assert not any(isinstance(e, PlanEvent) for e in events)
    [failed] = [e for e in events if isinstance(e, ToolResultEvent)]
    assert not failed.ok and "status" in failed.output
