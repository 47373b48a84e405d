"""What the user sees of and does to background jobs, in every front: ``agent/jobs`` and
``agent/jobStop`` (the protocol's requests), and ``/jobs`` (a session command:
``run.commands``). A job is a command the model started with ``bash``'s
``background: true`` (``tools/jobs.py``); the user may stop it whatever the model does."""

from __future__ import annotations

from tether_protocol import CommandParams, CommandResult, JobInfo, JobStopResult

from ..text.display import shown
from ..tools.jobs import Job
from .manager import RunManager

USAGE = "/jobs [stop ID]"


def job_info(session_id: str, job: Job) -> JobInfo:
    """``job`` as the protocol says it (its last line escaped for display)."""
    return JobInfo(
        job_id=job.id,
        session_id=session_id,
        command=job.command,
        state=job.state,
        runtime_seconds=round(job.runtime(), 1),
        exit_code=job.exit_code,
        last_line=shown(job.output.last_line()),
        sandbox=job.sandbox,
        note=job.note or None,
    )


def job_infos(runs: RunManager, session_id: str | None) -> list[JobInfo]:
    """The jobs of one session in memory here, or of every one (None), oldest first."""
    found: list[JobInfo] = []
    for session, table in runs.jobs():
        if session_id is None or session == session_id:
            found.extend(job_info(session, job) for job in table.all())
    return found


async def stop_job(runs: RunManager, session_id: str, job_id: str) -> JobStopResult:
    """Stop a session's running job and every process it started (``agent/jobStop``)."""
    table = runs.session_jobs(session_id)
    job = None if table is None else next((j for j in table.all() if j.id == job_id), None)
    if table is None or job is None:
        return JobStopResult(stopped=False)
    if job.state != "running":
        return JobStopResult(stopped=False, job=job_info(session_id, job))
    await table.stop(job)
    return JobStopResult(stopped=True, job=job_info(session_id, job))


def _line(info: JobInfo) -> str:
    command = shown(" ".join(info.command.split()))
    if len(command) > 60:
        command = command[:59] + "…"
    state = f"exited {info.exit_code}" if info.state == "exited" else info.state
    last = f" · {info.last_line}" if info.last_line else ""
    return f"{info.job_id} · {state} · {info.runtime_seconds:.0f} s · {command}{last}"


async def jobs_command(runs: RunManager, params: CommandParams) -> CommandResult:
    """``/jobs``: the session's background jobs; ``/jobs stop ID`` stops one."""
    words = (params.argument or "").split()
    if not words:
        infos = [] if params.session_id is None else job_infos(runs, params.session_id)
        if not infos:
            return CommandResult(message="no background jobs in this session")
        return CommandResult(message="\n".join(_line(i) for i in infos))
    if words[0] != "stop" or len(words) != 2:
        return CommandResult(message=f"usage: {USAGE}")
    job_id = words[1]
    if params.session_id is None:
        return CommandResult(message=f"no job {shown(job_id[:80])}: no session yet")
    result = await stop_job(runs, params.session_id, job_id)
    if result.stopped and result.job is not None:
        return CommandResult(message=f"stopped {_line(result.job)}")
    if result.job is not None:
        return CommandResult(message=f"not running: {_line(result.job)}")
    return CommandResult(message=f"no job {shown(job_id[:80])} in this session")
