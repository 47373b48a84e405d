"""Helpers for the MCP tests: the test server's settings, a run's loop over real servers."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.events import RunEvents
from tether.host import NoBuffers
from tether.mcp.hub import McpHub
from tether.mcp.registry import RunTools
from tether.policy.gate import ApprovalGate, ApprovalPolicy
from tether.providers.base import ToolResultMessage
from tether.providers.scripted import ScriptedProvider
from tether.run.loop import AgentLoop, Limits
from tether.tools.base import ToolDeps
from tether.tools.registry import ToolRegistry
from tether.workspace.folders import Workspace
from tether_protocol import ApproveParams, ApproveResult, McpServerSettings, RunEvent, Script

SERVER = Path(__file__).with_name("notes_server.py")


def write_notes_config(folder: Path, marks: Path) -> None:
    """A user ``config.toml`` in ``folder`` (made) naming the test's notes server, which
    notes its calls and its pid in ``marks``."""
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(
        "[mcpServers.notes]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SERVER))}]\n"
        f"env = {{ NOTES_MARKS = {json.dumps(str(marks))} }}\n"
        "startupTimeoutSeconds = 90\n"
    )


STARTUP = 90.0
"""Importing the SDK's server takes seconds on a loaded 2-core machine."""


def notes(marks: Path, **extra: Any) -> McpServerSettings:
    """The test server over stdio, recording into ``marks``."""
    env = {"NOTES_MARKS": str(marks), **extra.pop("env", {})}
    return McpServerSettings(
        command=sys.executable,
        args=[str(SERVER)],
        env=env,
        startup_timeout_seconds=STARTUP,
        **extra,
    )


class Asker:
    """An editor that records the approvals it was asked and answers ``answer``."""

    def __init__(self, answer: str = "allow") -> None:
        self.answer = answer
        self.asked: list[ApproveParams] = []

    async def ask_approval(
        self, request: ApproveParams, change: object = None
    ) -> ApproveResult | None:
        self.asked.append(request)
        return ApproveResult.model_validate({"decision": self.answer})


@dataclass
class Collector:
    events: list[RunEvent] = field(default_factory=list)

    def publish(self, event: RunEvent) -> None:
        self.events.append(event)


@dataclass
class Ran:
    loop: AgentLoop
    asker: Asker
    events: Collector
    outcome: str | None

    def results(self) -> list[ToolResultMessage]:
        return [m for m in self.loop.history if isinstance(m, ToolResultMessage)]


async def run_calls(
    hub: McpHub,
    tmp_path: Path,
    calls: Sequence[dict[str, Any]],
    *,
    answer: str = "allow",
    auto_approve: Sequence[str] = (),
    policy: ApprovalPolicy | None = None,
) -> Ran:
    """A run whose model makes ``calls`` (one per step) then ends, over the hub's tools,
    through the real approval gate answered by ``answer``."""
    turns = [{"toolCalls": [call]} for call in calls] + [{"text": "done"}]
    script = Script.model_validate({"turns": turns})
    asker = Asker(answer)
    sink = Collector()
    events = RunEvents("r", [sink])
    policy = policy or ApprovalPolicy()
    policy.configure(auto_approve)
    tools = RunTools(ToolRegistry([]), hub)
    loop = AgentLoop(
        provider=ScriptedProvider(script),
        tools=tools,
        deps=ToolDeps(
            workspace=Workspace([tmp_path], NoBuffers()),
            run_id="r",
            gate=ApprovalGate(policy, asker, events),  # type: ignore[arg-type]
        ),
        events=events,
        limits=Limits(max_steps=len(turns) + 1, timeout_seconds=300),
        system="system",
        history=[],
    )
    state = await loop.run("go", "s")
    return Ran(loop, asker, sink, state.outcome)


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def started_pids(marks: Path) -> list[int]:
    return [int(p.read_text()) for p in marks.glob("started-*")] + [
        int(p.read_text()) for p in marks.glob("child-*")
    ]
