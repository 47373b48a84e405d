"""Client → server requests about background jobs: agent/jobs, agent/jobStop.

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
