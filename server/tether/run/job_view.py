"""A background job's output as a person watches it (``agent/jobOutput``): read from the
same ring the model's ``job_output`` reads (``tools.jobs.JobOutput``), from a position the
caller keeps — so a view never moves the model's read, and two views never take from each
other — and escaped for display line by line."""

from __future__ import annotations

import anyio

from tether_protocol import JobOutputParams, JobOutputResult

from ..text.display import shown
from ..tools.jobs import Job
from .manager import RunManager

__all__ = ["JobViewError", "read_job_output"]


class JobViewError(Exception):
    """The request names no job this server has, or a position it never reached."""


def _find(runs: RunManager, session_id: str, job_id: str) -> Job:
    table = runs.session_jobs(session_id)
    if table is None:
        raise JobViewError(f"no session {shown(session_id[:80])} is open in this server")
    job = next((j for j in table.all() if j.id == job_id), None)
    if job is None:
        there = ", ".join(j.id for j in table.all()) or "none"
        raise JobViewError(
            f"no job {shown(job_id[:80])} in session {shown(session_id[:80])} (its jobs: {there})"
        )
    return job


async def read_job_output(runs: RunManager, params: JobOutputParams) -> JobOutputResult:
    """What ``params.job_id`` printed from ``params.since`` on, waiting up to
    ``params.wait_seconds`` for some if there is none yet and the job still runs."""
    job = _find(runs, params.session_id, params.job_id)
    since = params.since
    if since > job.output.written:
        raise JobViewError(
            f"since {since} is past what {job.id} printed ({job.output.written} characters)"
        )
    if params.wait_seconds and job.state == "running" and job.output.written == since:
        with anyio.move_on_after(params.wait_seconds):
            while job.state == "running" and job.output.written == since:
                await job.changed()
    text, lost = job.output.since(since)
    following = job.output.written
    if text.endswith("\r") and job.state == "running":  # it may begin a CR LF line break
        text, following = text[:-1], following - 1
    return JobOutputResult(
        text=shown(text, lines=True),
        next=following,
        lost=lost,
        state=job.state,
        exit_code=job.exit_code,
        note=job.note or None,
    )
