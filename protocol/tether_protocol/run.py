"""Client → server requests: agent/run, agent/cancel, agent/steer, agent/undo."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from .base import Range, WireModel
from .config import MAX_STEPS_LIMIT, MAX_TIMEOUT_SECONDS

NonEmpty = Annotated[str, StringConstraints(min_length=1)]
MAX_ID_LENGTH = 128
"""Run and session ids are names (of log files too), not payloads."""
Id = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_LENGTH)]
Outcome = Literal["done", "max-steps", "timeout", "no-progress", "cancelled", "budget", "error"]
OUTCOMES: tuple[Outcome, ...] = (
    "done",
    "max-steps",
    "timeout",
    "no-progress",
    "cancelled",
    "budget",
    "error",
)


class RunContext(WireModel):
    """What the user is looking at when they start the run (all optional).

    The server puts it in the system prompt, compactly; the selected text in full up to a cap.
    """

    uri: str | None = None
    """The active editor's document."""
    selection: Range | None = None
    """The selection in the active editor (absent or empty: none)."""
    selected_text: str | None = None
    """The selected text (the server reads it from the buffer when absent)."""
    visible_range: Range | None = None
    """The lines of the active editor on screen."""
    open_files: list[str] | None = None
    """The documents open in the editor (tabs or listed buffers), most recent first."""


class RunLimits(WireModel):
    """Per-run limits; each overrides the configured default."""

    max_steps: Annotated[int, Field(ge=1, le=MAX_STEPS_LIMIT)] | None = None
    timeout_seconds: (
        Annotated[float, Field(gt=0, le=MAX_TIMEOUT_SECONDS, allow_inf_nan=False)] | None
    ) = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    max_cost_usd: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None


class RunParams(WireModel):
    """Params of ``agent/run`` (and the argument of the ``tether.run`` command)."""

    prompt: NonEmpty
    run_id: Id | None = None
    session_id: Id | None = None
    work_done_token: str | int | None = None
    context: RunContext | None = None
    limits: RunLimits | None = None
    provider: NonEmpty | None = None
    model: NonEmpty | None = None


class Usage(WireModel):
    """Token usage (and cost when known), cumulative for a run."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


class RunResult(WireModel):
    """Result of ``agent/run``: returned for every outcome, never thrown away."""

    run_id: str
    session_id: str
    outcome: Outcome
    answer: str
    steps: int
    usage: Usage
    changed_files: list[str] = Field(default_factory=list)
    error: str | None = None


class CancelParams(WireModel):
    """Params of ``agent/cancel`` (and the argument of the ``tether.cancel`` command)."""

    run_id: Id


class CancelResult(WireModel):
    """``cancelled`` is false when no such run is in flight."""

    cancelled: bool


class SteerParams(WireModel):
    """Params of ``agent/steer``: a user message for a running run."""

    run_id: Id
    message: NonEmpty


class SteerResult(WireModel):
    """``accepted`` is false when no such run is in flight."""

    accepted: bool


class SessionsParams(WireModel):
    """Params of ``agent/sessions``."""

    limit: Annotated[int, Field(ge=1)] | None = None


class SessionInfo(WireModel):
    """One stored session."""

    session_id: str
    title: str
    """The first prompt of the session, shortened."""
    created_at: str
    """ISO 8601 time of the first event."""
    updated_at: str
    """ISO 8601 time of the last event."""
    runs: int
    last_outcome: Outcome | None = None


class SessionsResult(WireModel):
    """The stored sessions, newest first."""

    sessions: list[SessionInfo]


class HistoryParams(WireModel):
    """Params of ``agent/history``."""

    session_id: Id


class HistoryResult(WireModel):
    """A session's events, in order, as they were sent."""

    session_id: str
    events: list[dict[str, Any]]


class UndoParams(WireModel):
    """Params of ``agent/undo``."""

    run_id: Id


class PartialUndo(WireModel):
    """A file someone changed since the run: the run's hunks they did not touch were put
    back, the ones they touched (their lines or the 3 lines around them) were kept."""

    uri: str
    reverted_hunks: int
    """Hunks of the run's edits put back (at least 1)."""
    kept_hunks: int
    """Hunks of the run's edits left as the run made them (0: all went back, the other
    changes made since were kept)."""


class UndoResult(WireModel):
    """What undo did with each file the run edited (URIs, each in at most one list)."""

    reverted: list[str] = Field(default_factory=list)
    """Files put back as they were before the run."""
    partial: list[PartialUndo] = Field(default_factory=list)
    """Files changed since the run whose untouched hunks were put back, the changes made
    since kept."""
    conflicts: list[str] = Field(default_factory=list)
    """Files left alone because someone changed them since the run's edit (and every hunk
    of it, or the log has no hunks: older logs, large edits)."""
    not_found: list[str] = Field(default_factory=list)
    """Files whose edit may not have landed (the server stopped while it was being applied)
    and that now show neither the text before nor after it: left alone."""
    refused: list[str] = Field(default_factory=list)
    """Files the log names outside the workspace, or reached through a link: never written."""
    note: str | None = None
    """Why nothing was done, when nothing was: the run made no recorded edits, or was
    already undone."""
