"""The session log's records of checkpoints: what each step that could change files found
before it and left after it (``checkpoint``), and each rewind (``rewound``).

A file's state names its content by sha256 (the bytes are in the checkpoint store,
``blobs.py``), a link by its target; a file past the size cap or unreadable has no content
and says why it is not restorable.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from .scan import Seen


class _Record(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class FileState(_Record):
    """A file or link as a checkpoint saw it."""

    kind: Literal["file", "link"]
    mode: int = Field(0, ge=0, le=0o7777)
    sha256: str | None = None
    target: str | None = None
    size: int = 0
    mtime_ns: int = 0
    not_restorable: str | None = None
    """Why the content was not kept (past the size cap, unreadable); None: it was."""

    @classmethod
    def of(cls, seen: Seen) -> FileState:
        return cls(
            kind=seen.kind,
            mode=seen.mode,
            sha256=seen.digest,
            target=seen.target,
            size=seen.size,
            mtime_ns=seen.mtime_ns,
            not_restorable=seen.why,
        )

    def seen(self) -> Seen:
        return Seen(
            self.kind,
            self.mode,
            self.size,
            self.mtime_ns,
            0,
            0,
            self.sha256,
            self.target,
            self.not_restorable,
        )


class CheckpointFile(_Record):
    """One file a step changed: before and after it (None: not there)."""

    path: str
    uri: str
    before: FileState | None = None
    after: FileState | None = None


class CheckpointRecord(_Record):
    """A step that could change files ran: its change set (empty: it changed nothing)."""

    record: Literal["checkpoint"] = "checkpoint"
    id: str
    run_id: str
    call_id: str | None = None
    step: int = 0
    tool: str
    title: str = ""
    at: float = 0.0
    files: list[CheckpointFile] = Field(default_factory=list)
    incomplete: str | None = None
    """Why the workspace was not captured around the step (too many files, the store
    could not be written); None when it was."""


class RewoundRecord(_Record):
    """The session was rewound to before checkpoint ``checkpoint_id``."""

    record: Literal["rewound"] = "rewound"
    checkpoint_id: str
    call_id: str | None = None
    """The call the conversation was cut before (None: the conversation was kept)."""
    note: str | None = None
    """What the session's model is told before its next prompt."""
