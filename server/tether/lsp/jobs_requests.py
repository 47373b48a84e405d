"""``agent/jobs``, ``agent/jobStop`` and ``agent/jobOutput`` under ``tether serve``: the
background jobs of the sessions open in this server, stopping one (``run.jobs_command``),
and watching one's output (``run.job_view``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel
from pygls.exceptions import JsonRpcInvalidParams

from tether_protocol import (
    AGENT_JOB_OUTPUT_METHOD,
    AGENT_JOB_STOP_METHOD,
    AGENT_JOBS_METHOD,
    JobOutputParams,
    JobsParams,
    JobsResult,
    JobStopParams,
)

from ..run.job_view import JobViewError, read_job_output
from ..run.jobs_command import job_infos, stop_job
from ..text.params import ParamsError, validated

if TYPE_CHECKING:
    from .server import TetherServer

M = TypeVar("M", bound=BaseModel)


def _params(model: type[M], raw: Any, method: str) -> M:
    try:
        return validated(model, raw)
    except ParamsError as exc:
        raise JsonRpcInvalidParams(f"{method}: {exc}") from exc


async def list_jobs(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/jobs``."""
    params = _params(JobsParams, raw, AGENT_JOBS_METHOD)
    return JobsResult(jobs=job_infos(ls.runs, params.session_id)).to_wire()


async def stop_job_request(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/jobStop``."""
    params = _params(JobStopParams, raw, AGENT_JOB_STOP_METHOD)
    result = await stop_job(ls.runs, params.session_id, params.job_id)
    return result.to_wire()


async def job_output_request(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/jobOutput``."""
    params = _params(JobOutputParams, raw, AGENT_JOB_OUTPUT_METHOD)
    try:
        result = await read_job_output(ls.runs, params)
    except JobViewError as exc:
        raise JsonRpcInvalidParams(f"{AGENT_JOB_OUTPUT_METHOD}: {exc}") from exc
    return result.to_wire()
