"""``agent/event`` notifications: a tagged union of small records, keyed by ``kind``.

Every event carries the ``runId`` it belongs to and a ``seq`` that counts 1, 2, 3… per run
with no gaps, so a client can tell it missed nothing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from .base import WireModel
from .rules import Rule
from .run import Outcome

Decision = Literal["allow", "allow-always", "deny", "auto", "denied-by-default"]
SandboxBackend = Literal["bwrap", "landlock"]


class _Event(WireModel):
    run_id: str
    seq: Annotated[int, Field(ge=1)]


class RunStartedEvent(_Event):
    """The run was accepted and begins."""

    kind: Literal["run-started"] = "run-started"
    prompt: str
    session_id: str


class StepEvent(_Event):
    """A model call begins (1-based)."""

    kind: Literal["step"] = "step"
    step: int


class TextDeltaEvent(_Event):
    """A piece of streamed assistant text."""

    kind: Literal["text-delta"] = "text-delta"
    text: str


class ThinkingEvent(_Event):
    """A piece of the model's reasoning, streamed as it arrives (Anthropic's extended
    thinking, an OpenAI-compatible server's ``reasoning_content``). Never part of the
    answer: ``assistant`` and ``text-delta`` carry the answer alone. After a ``retry`` the
    reasoning starts again from the beginning."""

    kind: Literal["thinking"] = "thinking"
    text: str


class AssistantEvent(_Event):
    """The whole assistant text of a step."""

    kind: Literal["assistant"] = "assistant"
    text: str


class ToolCallEvent(_Event):
    """The model asked for a tool."""

    kind: Literal["tool-call"] = "tool-call"
    call_id: str
    tool: str
    arguments: dict[str, Any]
    label: str | None = None
    """How a front names the tool when ``tool`` is no name for people: an MCP server's tool
    ``mcp__notes__echo`` is ``notes · echo``. Absent for Tether's own tools."""


class ApprovalEvent(_Event):
    """The decision taken on a call that needs approval."""

    kind: Literal["approval"] = "approval"
    call_id: str
    decision: Decision
    rules: list[Rule] | None = None
    """The rules that decided it (every simple command's allow, or the deny or ask)."""
    sandbox: SandboxBackend | None = None
    """The command ran in this sandbox (with ``auto`` and no ``rules``: it ran unasked
    because it ran there)."""


class ToolResultEvent(_Event):
    """What a tool call produced; ``output`` may be a truncated preview."""

    kind: Literal["tool-result"] = "tool-result"
    call_id: str
    tool: str
    ok: bool
    output: str
    error: str | None = None
    label: str | None = None
    """The tool's name for people, as on its ``tool-call`` event."""


class ToolProgressEvent(_Event):
    """A call still runs (a ``bash`` command): the time so far and what it printed last.

    Transient: sent at most every half second while something changed (the whole seconds
    count as a change), never written to the session log, never shown to the model. It has
    no ``seq`` of its own: it repeats the ``seq`` of the event before it, so the events that
    stay count 1, 2, 3… without a gap in the stream and in the log alike. The call's
    ``tool-result`` replaces what it says.

    Also Tether's own wait, before a run's first model call, for a session's MCP servers
    to start: ``callId`` ``mcp-start`` (no call of the model's: no ``tool-call`` or
    ``tool-result`` comes with it), ``tool`` ``mcp``, ``lastLine`` ``waiting for MCP
    server notes to start``, then how the wait ended; the next event replaces it."""

    kind: Literal["tool-progress"] = "tool-progress"
    call_id: str
    tool: str
    elapsed_ms: Annotated[int, Field(ge=0)]
    last_line: str
    """The last line the command printed that is not blank (the rest after its last
    carriage return, as a terminal shows it), at most 200 characters."""
    tail: str = ""
    """The end of what it printed so far: at most its last 20 lines and 2,000 characters."""


class UsageEvent(_Event):
    """Token usage (and cost when known), cumulative for the run."""

    kind: Literal["usage"] = "usage"
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None


class RunFinishedEvent(_Event):
    """The run ended; the last event of every run."""

    kind: Literal["run-finished"] = "run-finished"
    outcome: Outcome
    steps: int


class CompactedEvent(_Event):
    """Older turns of the conversation were replaced by a summary to fit the context budget."""

    kind: Literal["compacted"] = "compacted"
    tokens_before: int
    tokens_after: int


class RetryEvent(_Event):
    """A model request failed transiently (429, 5xx, timeout, dropped connection) before
    anything streamed, and is sent again after ``delay_seconds``; ``attempt`` counts the
    retries of that request (1-based). Informational: clients may show or ignore it."""

    kind: Literal["retry"] = "retry"
    attempt: Annotated[int, Field(ge=1)]
    delay_seconds: Annotated[float, Field(ge=0)]
    reason: str


class InjectionFlaggedEvent(_Event):
    """A tool result contains text that looks like instructions to the model."""

    kind: Literal["injection-flagged"] = "injection-flagged"
    call_id: str
    tool: str
    markers: list[str]


PlanStatus = Literal["pending", "in_progress", "completed"]
PlanPriority = Literal["high", "medium", "low"]


class PlanEntry(WireModel):
    """One step of the model's plan (ACP's ``PlanEntry``)."""

    content: Annotated[str, Field(min_length=1, max_length=2000)]
    status: PlanStatus = "pending"
    priority: PlanPriority = "medium"


class PlanEvent(_Event):
    """The model's step list, always whole: each event replaces the one before."""

    kind: Literal["plan"] = "plan"
    entries: Annotated[list[PlanEntry], Field(max_length=100)]


RunEvent = Annotated[
    RunStartedEvent
    | StepEvent
    | TextDeltaEvent
    | ThinkingEvent
    | AssistantEvent
    | ToolCallEvent
    | ApprovalEvent
    | ToolResultEvent
    | UsageEvent
    | RunFinishedEvent
    | CompactedEvent
    | InjectionFlaggedEvent
    | PlanEvent
    | RetryEvent
    | ToolProgressEvent,
    Field(discriminator="kind"),
]
"""Any ``agent/event`` params."""

EVENT_KINDS: tuple[str, ...] = (
    "run-started",
    "step",
    "text-delta",
    "thinking",
    "assistant",
    "tool-call",
    "approval",
    "tool-result",
    "usage",
    "run-finished",
    "compacted",
    "injection-flagged",
    "plan",
    "retry",
    "tool-progress",
)

TRANSIENT_KINDS: frozenset[str] = frozenset({"tool-progress"})
"""Event kinds shown while they are true and then gone: not in the session log, no ``seq``
of their own."""

RUN_EVENT_ADAPTER: TypeAdapter[RunEvent] = TypeAdapter(RunEvent)


def parse_event(data: object) -> RunEvent:
    """Validate a decoded ``agent/event`` params object into its event record."""
    return RUN_EVENT_ADAPTER.validate_python(data)
