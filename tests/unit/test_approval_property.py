"""Property: no file changes and no command runs without an allow.

Random scripted runs (edits, writes and commands, each leaving a unique trace) meet random
answers from the user (allow, allow-always, deny, errors, nonsense) and a random
``autoApprove``; an independent model of the policy says which calls may happen, and the
disk must show exactly those.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.approvals import ApprovalGate, ApprovalPolicy
from tether.diskedit import DiskEditor
from tether.events import RunEvents
from tether.host import ApprovalAnswer, ApprovalRequest, NoBuffers
from tether.loop import AgentLoop, Limits
from tether.providers.scripted import ScriptedProvider
from tether.tools.base import ToolContext
from tether.tools.edits import EditFile, WriteFile
from tether.tools.registry import ToolRegistry
from tether.tools.shell import Bash
from tether.workspace import Workspace
from tether_protocol import RunEvent, Script

TOOLS = ("edit_file", "write_file", "bash")
ANSWERS = st.sampled_from(["allow", "allow-always", "deny", "error", "none", "nonsense"])


def call_for(tool: str, i: int) -> dict[str, Any]:
    if tool == "edit_file":
        return {
            "name": tool,
            "arguments": {"path": "shared.txt", "old_text": f"T{i}.", "new_text": f"E{i}."},
        }
    if tool == "write_file":
        return {"name": tool, "arguments": {"path": f"w{i}.txt", "content": f"W{i}\n"}}
    return {"name": tool, "arguments": {"command": f"echo ran > b{i}.txt"}}


def happened(root: Path, tool: str, i: int) -> bool:
    if tool == "edit_file":
        return f"E{i}." in (root / "shared.txt").read_text()
    if tool == "write_file":
        return (root / f"w{i}.txt").exists()
    return (root / f"b{i}.txt").exists()


class Sink:
    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def publish(self, event: RunEvent) -> None:
        self.events.append(event)


async def play(root: Path, tools: list[str], answers: list[str], auto: frozenset[str]) -> None:
    pending = list(answers)

    async def ask(request: ApprovalRequest) -> ApprovalAnswer | None:
        answer = pending.pop(0) if pending else "deny"
        if answer == "error":
            raise RuntimeError("the editor went away")
        if answer in ("none", "nonsense"):
            return None if answer == "none" else "yes"  # type: ignore[return-value]
        return ApprovalAnswer(answer)  # type: ignore[arg-type]

    turns = [{"toolCalls": [call_for(tool, i)]} for i, tool in enumerate(tools)]
    events = RunEvents("r", [Sink()])
    editor = DiskEditor(ask)
    loop = AgentLoop(
        provider=ScriptedProvider(Script.model_validate({"turns": turns})),
        tools=ToolRegistry([EditFile(), WriteFile(), Bash()]),
        context=ToolContext(
            workspace=Workspace([root], NoBuffers()),
            run_id="r",
            editor=editor,
            gate=ApprovalGate(ApprovalPolicy(auto_approve=auto), editor, events),
        ),
        events=events,
        limits=Limits(max_steps=len(turns) + 1),
        system="",
        history=[],
    )
    state = await loop.run("go", "s")
    assert state.outcome == "done"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tools=st.lists(st.sampled_from(TOOLS), min_size=1, max_size=7),
    answers=st.lists(ANSWERS, max_size=7),
    auto=st.frozensets(st.sampled_from(TOOLS), max_size=2),
)
def test_nothing_happens_without_an_allow(
    tools: list[str], answers: list[str], auto: frozenset[str]
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "shared.txt").write_text("".join(f"T{i}.\n" for i in range(len(tools))))
        anyio.run(play, root, tools, answers, auto)
        # the oracle: the policy as the contract states it, independent of the code
        always: set[str] = set()
        pending = list(answers)
        for i, tool in enumerate(tools):
            if tool in auto or tool in always:
                allowed = True
            else:
                answer = pending.pop(0) if pending else "deny"
                allowed = answer in ("allow", "allow-always")
                if answer == "allow-always":
                    always.add(tool)
            assert happened(root, tool, i) == allowed, (i, tool, answers, auto)
