"""``agent/checkpoints`` and ``agent/rewind``: a session's steps that could change files,
and going back to before any of them — its files, its conversation, or both."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import WireModel
from .run import Id

RewindWhat = Literal["files", "conversation", "both"]
FileChange = Literal["modified", "created", "deleted", "mode"]


class CheckpointsParams(WireModel):
    """Params of ``agent/checkpoints``."""

    session_id: Id


class CheckpointFile(WireModel):
    """A file a step changed."""

    uri: str
    path: str
    """The path relative to the workspace folder (absolute when outside it)."""
    change: FileChange
    """``mode``: only its permission bits changed."""
    restorable: bool = True
    """False: its content before the step was not kept (past the size cap, unreadable)."""


class Checkpoint(WireModel):
    """A point to rewind to: before one step of a run."""

    id: str
    run_id: str
    step: int
    """The run's step (its model call) the tool call was made in."""
    time: str
    """When the step started (ISO 8601, UTC)."""
    tool: str
    """The tool called (``rewind``: a rewind, which can itself be rewound)."""
    title: str
    """The call as the approval showed it (the command, the file)."""
    files: list[CheckpointFile] = Field(default_factory=list)
    incomplete: str | None = None
    """Why the files were not captured around this step; absent when they were."""


class CheckpointsResult(WireModel):
    """A session's checkpoints, oldest first."""

    session_id: str
    checkpoints: list[Checkpoint]


class RewindParams(WireModel):
    """Params of ``agent/rewind``: go back to before checkpoint ``checkpoint_id``."""

    session_id: Id
    checkpoint_id: Id
    restore: RewindWhat = "both"
    force: bool = False
    """Put back files the user changed since too (their changes are lost)."""


class RewindResult(WireModel):
    """What the rewind did with each file (URIs, each in at most one list)."""

    restored: list[str] = Field(default_factory=list)
    """Files put back as they were before the checkpoint's step."""
    conflicts: list[str] = Field(default_factory=list)
    """Files changed since by someone else (on disk, or unsaved in an editor): left as they
    are (``force`` puts them back)."""
    not_restorable: list[str] = Field(default_factory=list)
    """Files whose content before the step was not kept (past the size cap, unreadable)."""
    failed: list[str] = Field(default_factory=list)
    """Files that could not be written (the reason is in ``note``)."""
    conversation: bool = False
    """Whether the conversation went back to before the step."""
    note: str | None = None
