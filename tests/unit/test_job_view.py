"""A person's view of a background job's output (``run.job_view``, ``agent/jobOutput``):
read in whatever pieces, from the position each answer gives, the views put together are
the whole output escaped for display — a CR LF cut between two reads still reads as one
line break — and reading never moves the model's ``job_output`` position."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.run.job_view import JobViewError, read_job_output
from tether.run.manager import RunManager
from tether.text.display import shown
from tether.tools.jobs import Job, JobOutput, JobTable
from tether_protocol import JobOutputParams


class Runs:
    """The part of a ``RunManager`` the view reads: one session with its jobs."""

    def __init__(self, table: JobTable) -> None:
        self.table = table

    def session_jobs(self, session_id: str) -> JobTable | None:
        return self.table if session_id == "s-1" else None


def setup(job: Job) -> RunManager:
    table = JobTable()
    table._jobs[job.id] = job
    return cast(RunManager, Runs(table))


def view(runs: RunManager, since: int, job: str = "job-1") -> Any:
    params = JobOutputParams(session_id="s-1", job_id=job, since=since)
    return anyio.run(read_job_output, runs, params)


# Characters that escape (controls, CR, bidi, zero-width space) and those that do not.
pieces = st.lists(
    st.tuples(st.text(alphabet="ab\n\r\t\x1b\u202e\u200bé€", max_size=20), st.booleans()),
    max_size=25,
)


@given(pieces)
@settings(max_examples=300, deadline=None)
def test_views_put_together_are_the_whole_output_escaped(steps: list[tuple[str, bool]]) -> None:
    job = Job("job-1", "cmd", Path("/"), None, output=JobOutput(head=10_000, tail=10_000))
    runs = setup(job)
    stream, seen, position = "", "", 0
    for text, read in steps:
        job.fed(text.encode("utf-8"))
        stream += text
        if read:
            answer = view(runs, position)
            assert answer.lost == 0 and answer.next >= position
            seen += answer.text
            position = answer.next
    job.end("exited", 0)
    last = view(runs, position)
    assert last.state == "exited" and last.exit_code == 0
    seen += last.text
    assert seen == shown(stream, lines=True)
    assert job.read_to == 0  # the model's read has not moved


def test_a_position_past_the_output_and_an_unknown_job_are_refused() -> None:
    job = Job("job-1", "cmd", Path("/"), None)
    job.fed(b"abc")
    runs = setup(job)
    with pytest.raises(JobViewError, match="since 4 is past what job-1 printed"):
        view(runs, 4)
    with pytest.raises(JobViewError, match="no job job-2 in session s-1 \\(its jobs: job-1\\)"):
        view(runs, 0, job="job-2")
    with pytest.raises(JobViewError, match="no job job-1\\\\u202e in session"):
        view(runs, 0, job="job-1\u202e")
    assert view(runs, 3).text == ""
