"""Client → server requests about background jobs: agent/jobs, agent/jobStop,
agent/jobOutput.

A background job is a command the model started with ``bash``'s ``background: true``: it
keeps running after its tool call, until it ends, the model or the user stops it, or its
session ends."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import WireModel
from .run import Id

JobState = Literal["running", "exited", "stopped", "failed"]


class JobsParams(WireModel):
    """Params of ``agent/jobs``: one session's jobs, or (no ``sessionId``) those of every
    session open in this server."""

    session_id: Id | None = None


class JobInfo(WireModel):
    """One background job."""

    job_id: str
    """``job-1``, ``job-2``…: unique within its session."""
    session_id: str
    command: str
    """The command line as the model wrote it (show it as text from outside)."""
    state: JobState
    """``running``; ``exited`` (on its own: see ``exitCode``); ``stopped`` (by
    ``job_stop``, ``agent/jobStop``, ``/jobs stop`` or its session's end); ``failed``
    (it could not start, or it waited for input and was ended: see ``note``)."""
    runtime_seconds: Annotated[float, Field(ge=0)]
    """Seconds since it started, or that it ran."""
    exit_code: int | None = None
    last_line: str
    """The last line it printed that is not blank, escaped for display (as
    ``tool-progress``'s)."""
    sandbox: str | None = None
    """The sandbox it runs in (``bwrap``, ``landlock``); none when it runs outside."""
    note: str | None = None
    """How it ended, when that needs saying."""


class JobsResult(WireModel):
    """The jobs, oldest first."""

    jobs: list[JobInfo]


class JobStopParams(WireModel):
    """Params of ``agent/jobStop``."""

    session_id: Id
    job_id: Id


class JobStopResult(WireModel):
    """``stopped`` is false when the session has no such job running (``job`` then says
    what there is, if the job exists)."""

    stopped: bool
    job: JobInfo | None = None


MAX_VIEW_WAIT_SECONDS = 30.0


class JobOutputParams(WireModel):
    """Params of ``agent/jobOutput``: what a job printed from ``since`` on, for a person to
    watch. The caller keeps its own position (the ``next`` of its last answer): reading
    never moves the model's ``job_output`` position, and two viewers never take from each
    other."""

    session_id: Id
    job_id: Id
    since: Annotated[int, Field(ge=0)] = 0
    """A position in what the job printed, in characters: 0 (the default) for the start,
    or the ``next`` of the previous answer."""
    wait_seconds: Annotated[float, Field(ge=0, le=MAX_VIEW_WAIT_SECONDS)] = 0
    """Wait up to this many seconds for output after ``since`` (it answers as soon as some
    comes, or the job ends); 0: answer at once."""


class JobOutputResult(WireModel):
    """What the job printed from ``since`` on, and its state."""

    text: str
    """The output, escaped for display line by line (control characters, carriage returns,
    bidi and invisible characters written as ``\\x1b``, ``\\r``, ``\\u202e``; line breaks
    and tabs kept). Empty when nothing new was printed."""
    next: Annotated[int, Field(ge=0)]
    """The ``since`` of the next read."""
    lost: Annotated[int, Field(ge=0)] = 0
    """Characters printed after ``since`` that are no longer kept (the job keeps its first
    and its last characters): they fell out between ``since`` and ``text``."""
    state: JobState
    exit_code: int | None = None
    note: str | None = None
    """How it ended, when that needs saying."""
