"""``plan``: the model's step list for the task, shown to the user as it goes.

Read-only and asks nothing: it touches no file and runs nothing. Each call sends the whole
list (it replaces the one before), so the user always sees the current plan: the editors'
panels, the CLI, and ACP clients as their ``plan`` update. The model is told what it set,
in one line, so the list costs it almost nothing to keep up to date.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field

from tether_protocol import PlanEntry
from tether_protocol.events import PlanPriority, PlanStatus

from .base import Tool, ToolArgs, ToolDeps, ToolResult

MAX_STEPS = 100
"""Steps a plan holds at most (the protocol's bound)."""


class PlanStep(ToolArgs):
    """One step of a plan, as the model writes it."""

    content: Annotated[str, Field(min_length=1, max_length=2000)] = Field(
        description="What the step does, in a short sentence."
    )
    status: PlanStatus = Field(
        default="pending", description="pending, in_progress (at most one) or completed."
    )
    priority: PlanPriority = Field(default="medium", description="high, medium or low.")


class PlanArgs(ToolArgs):
    """Arguments of ``plan``."""

    steps: Annotated[list[PlanStep], Field(min_length=1, max_length=MAX_STEPS)] = Field(
        description="The whole plan, in order; it replaces the previous one."
    )


class Plan(Tool[PlanArgs]):
    """Sets the plan the user sees."""

    name: ClassVar[str] = "plan"
    kind: ClassVar[str] = "think"

    def title(self, arguments: dict[str, Any]) -> str:
        return "Plan"

    description: ClassVar[str] = (
        "Show the user your plan for a task of several steps, as a checklist. Send the whole "
        "list each time (it replaces the previous one): mark the step you are on in_progress "
        "and finished ones completed. Use it for multi-step work, not for a single change."
    )
    args_model: ClassVar[type[ToolArgs]] = PlanArgs

    async def run(self, args: PlanArgs, deps: ToolDeps) -> ToolResult:
        entries = tuple(
            PlanEntry(content=step.content, status=step.status, priority=step.priority)
            for step in args.steps
        )
        counts = {status: 0 for status in ("completed", "in_progress", "pending")}
        for entry in entries:
            counts[entry.status] += 1
        steps = "1 step" if len(entries) == 1 else f"{len(entries)} steps"
        summary = ", ".join(f"{n} {status.replace('_', ' ')}" for status, n in counts.items() if n)
        return ToolResult(
            ok=True, output=f"Plan shown to the user: {steps} ({summary}).", plan=entries
        )
