"""Background jobs: commands the model started with ``bash``'s ``background: true``, which
keep running after the call, and the tools that read and stop them.

A job runs through ``run_command`` like any command — the same sandbox, the same process
rules (its own process group, the trampoline or bubblewrap's PID namespace holding every
process it starts, an input terminal no one types into) — only its call does not wait: it
is a task of its own on the front's event loop, answered at once with the job's id
(``job-1``, ``job-2``… in each session) and what it printed in its first moment.

What a job prints is kept in a ``JobOutput``: the first ``HEAD_CHARS`` and the last
``TAIL_CHARS`` characters, whatever it prints, so a flood costs bounded memory. The model
reads it with ``job_output``: what was printed since its last read (what fell out of the
ring in between replaced by one marker line), the job's state; asked to, it waits up to
``wait_seconds`` until the new output matches ``until`` (an RE2 pattern:
``text.linear_regex``) or the job ends — woken by the output itself, not by polling.
``job_stop`` ends a job and every process it started (SIGTERM, SIGKILL after the grace).

A session's jobs (``JobTable``) end with it: when it is closed or forgotten, and when the
server ends (``close_front``); if the server dies, the trampoline's parent-death signal
or bubblewrap's ``--die-with-parent`` ends them. At most ``maxBackgroundJobs`` (default
``DEFAULT_MAX_JOBS``) run at once in a session.
"""

from __future__ import annotations

import asyncio
import codecs
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import anyio
from pydantic import Field

from ..errors import ToolError
from ..text.display import shown
from ..text.linear_regex import LinearRegex, LinearRegexError
from .base import Tool, ToolArgs, ToolDeps, ToolResult
from .shell import run_command, waited_for_input

if TYPE_CHECKING:
    from ..sandbox import Sandbox

__all__ = [
    "DEFAULT_MAX_JOBS",
    "MAX_WAIT_SECONDS",
    "Job",
    "JobOutput",
    "JobOutputTool",
    "JobStop",
    "JobTable",
]

DEFAULT_MAX_JOBS = 4
MAX_JOBS_LIMIT = 64
MAX_WAIT_SECONDS = 120.0
HEAD_CHARS = 4_000
TAIL_CHARS = 16_000
FIRST_LOOK_SECONDS = 0.5
"""How long a new job's call waits for its first output (or its end) before it answers."""
STOP_WAIT_SECONDS = 10.0
"""How long ``job_stop`` waits for the job's processes to be gone."""
LAST_LINE_CHARS = 200

JobState = Literal["running", "exited", "stopped", "failed"]
_TASKS: set[asyncio.Task[Any]] = set()
"""Every job's task (kept, so none is collected while it runs)."""


class JobOutput:
    """What a job printed, bounded: the first ``head`` and the last ``tail`` characters,
    with positions in the whole stream so a reader can ask for what came after its last
    read."""

    def __init__(self, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> None:
        self._head_limit = head
        self._tail_limit = tail
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head = ""
        self._tail = ""
        self._tail_start = 0  # the stream position of self._tail's first character
        self.written = 0
        """Characters printed so far."""

    def feed(self, data: bytes) -> None:
        self._add(self._decoder.decode(data))

    def finish(self) -> None:
        self._add(self._decoder.decode(b"", final=True))

    def _add(self, text: str) -> None:
        room = self._head_limit - len(self._head)
        if room > 0 and text:
            taken = text[:room]
            self._head += taken
            self.written += len(taken)
            self._tail_start = self.written
            text = text[room:]
        if not text:
            return
        self._tail += text
        self.written += len(text)
        if len(self._tail) > 2 * self._tail_limit:  # cut seldom: amortised
            cut = len(self._tail) - self._tail_limit
            self._tail = self._tail[cut:]
            self._tail_start += cut

    def since(self, position: int) -> tuple[str, int]:
        """What was printed from ``position`` on, and how many characters of it are lost
        (fell out of the ring)."""
        parts: list[str] = []
        if position < len(self._head):
            parts.append(self._head[position:])
            position = len(self._head)
        lost = max(0, self._tail_start - position)
        start = max(position, self._tail_start) - self._tail_start
        parts.append(self._tail[start:])
        return "".join(parts), lost

    def last_line(self) -> str:
        """The last line that is not blank (for people: shown escaped by the caller)."""
        text = self._tail or self._head
        for line in reversed(text[-4 * LAST_LINE_CHARS :].split("\n")):
            if line.strip():
                return line.rsplit("\r", 1)[-1][-LAST_LINE_CHARS:]
        return ""


@dataclass(eq=False)
class Job:
    """One background command of a session."""

    id: str
    command: str
    cwd: Path
    sandbox: str | None
    started_at: float = field(default_factory=time.time)
    started: float = field(default_factory=time.monotonic)
    output: JobOutput = field(default_factory=JobOutput)
    state: JobState = "running"
    exit_code: int | None = None
    ended: float | None = None
    note: str = ""
    """How it ended when that needs saying (it waited for input, it could not start)."""
    read_to: int = 0
    """Where the model's last read of its output ended."""
    task: asyncio.Task[Any] | None = None
    _changed: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)

    def fed(self, data: bytes) -> None:
        self.output.feed(data)
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def changed(self) -> None:
        """Return once something new was printed or the job ended."""
        await self._changed.wait()

    def end(self, state: JobState, exit_code: int | None, note: str = "") -> None:
        if self.state != "running":
            return
        self.output.finish()
        self.state, self.exit_code, self.note = state, exit_code, note
        self.ended = time.monotonic()
        self.done.set()
        self._wake()

    def runtime(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def describe_state(self) -> str:
        """The job's state in words, for the model."""
        seconds = f"{self.runtime():.0f} s"
        if self.state == "running":
            return f"{self.id} is running ({seconds} so far)"
        if self.state == "stopped":
            return f"{self.id} was stopped after {seconds}"
        if self.state == "failed":
            return f"{self.id} ended after {seconds}: {self.note}"
        return f"{self.id} exited with code {self.exit_code} after {seconds}"


class JobTable:
    """A session's background jobs."""

    def __init__(self, limit: int = DEFAULT_MAX_JOBS) -> None:
        self.limit = limit
        self._jobs: dict[str, Job] = {}
        self._count = 0
        self.closed = False

    def running(self) -> list[Job]:
        return [j for j in self._jobs.values() if j.state == "running"]

    def all(self) -> list[Job]:
        return list(self._jobs.values())

    def get(self, job_id: str) -> Job:
        """The job ``job_id`` of this session, or a ``ToolError`` naming the ones there are."""
        job = self._jobs.get(job_id)
        if job is None:
            there = ", ".join(self._jobs) or "none"
            raise ToolError(
                f"there is no job {shown(job_id[:80])} in this session (its jobs: {there})"
            )
        return job

    async def launch(
        self,
        command: str,
        cwd: Path,
        *,
        sandbox: Sandbox | None,
        extra_env: Callable[[Mapping[str, str]], Mapping[str, str]] | None,
    ) -> str:
        """``start`` it, and what the call answers: its id and its first output."""
        return await first_look(self.start(command, cwd, sandbox=sandbox, extra_env=extra_env))

    def start(
        self,
        command: str,
        cwd: Path,
        *,
        sandbox: Sandbox | None,
        extra_env: Callable[[Mapping[str, str]], Mapping[str, str]] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Job:
        """Start ``command`` as a job of this session (a task of its own); ``ToolError``
        when the session already runs as many as it may."""
        if self.closed:
            raise ToolError("this session is closing: no job can start")
        if len(self.running()) >= self.limit:
            raise ToolError(
                f"this session already runs {self.limit} background jobs, as many as it may "
                "(maxBackgroundJobs): stop one with job_stop first"
            )
        self._count += 1
        job = Job(f"job-{self._count}", command, cwd, None if sandbox is None else sandbox.backend)
        self._jobs[job.id] = job
        job.task = asyncio.ensure_future(_serve(job, sandbox, extra_env, env))
        _TASKS.add(job.task)
        job.task.add_done_callback(_TASKS.discard)
        job.task.add_done_callback(lambda _: job.end("stopped", None))  # cancelled unstarted
        return job

    async def stop(self, job: Job) -> None:
        """End ``job`` and every process it started; return once they are gone (or
        ``STOP_WAIT_SECONDS`` passed)."""
        if job.state == "running" and job.task is not None:
            job.task.cancel()
        with anyio.move_on_after(STOP_WAIT_SECONDS):
            await job.done.wait()

    def close(self) -> list[asyncio.Task[Any]]:
        """End every job (the session ends): their tasks, to wait for if one wants."""
        self.closed = True
        tasks = []
        for job in self.running():
            if job.task is not None:
                job.task.cancel()
                tasks.append(job.task)
        return tasks


async def _serve(
    job: Job,
    sandbox: Sandbox | None,
    extra_env: Callable[[Mapping[str, str]], Mapping[str, str]] | None,
    env: Mapping[str, str] | None,
) -> None:
    """Run the job to its end (or until its task is cancelled: stopped)."""
    try:
        outcome = await run_command(
            job.command,
            job.cwd,
            float("inf"),
            output_limit=2_000,
            env=env,
            sandbox=sandbox,
            extra_env=extra_env,
            on_output=job.fed,
        )
    except asyncio.CancelledError:
        job.end("stopped", None)
        raise
    except (ToolError, OSError) as exc:
        job.end("failed", None, f"it could not start: {exc}")
        return
    except BaseException:
        job.end("failed", None, "it failed inside Tether")
        raise
    if outcome.asked is not None:
        job.end("failed", None, waited_for_input(outcome.asked))
    else:
        job.end("exited", outcome.exit_code)


def _read(job: Job, *, move: bool = True) -> str:
    """What the job printed since the model's last read, and its state; the read moves on
    unless ``move`` is False."""
    text, lost = job.output.since(job.read_to)
    if move:
        job.read_to = job.output.written
    parts = [job.describe_state()]
    if lost:
        parts.append(f"… [{lost} characters cut: printed while no one read] …")
    parts.append(text.removesuffix("\n") if text else "(no new output)")
    return "\n".join(parts)


async def first_look(job: Job) -> str:
    """A new job's answer: its id and what it printed in its first moment."""
    with anyio.move_on_after(FIRST_LOOK_SECONDS):
        await job.done.wait()
    return (
        f"started in the background as {job.id}; it keeps running after this call. Read "
        f"what it prints with job_output (job {job.id!r}; its first read starts from the "
        f"beginning, and can wait until a pattern shows up), end it with job_stop.\n"
        f"{_read(job, move=False)}"
    )


def _table(deps: ToolDeps) -> JobTable:
    if not isinstance(deps.jobs, JobTable):
        raise ToolError("background jobs are not available here")
    return deps.jobs


class JobOutputArgs(ToolArgs):
    job: str = Field(min_length=1, max_length=200, description="The job's id, e.g. job-1.")
    wait_seconds: float = Field(
        default=0,
        ge=0,
        le=MAX_WAIT_SECONDS,
        description=(
            f"Wait up to this many seconds (at most {MAX_WAIT_SECONDS:g}) for `until` to match "
            "the new output, or, without `until`, for any new output; it returns at once "
            "when the job ends. 0 (the default): return what there is now."
        ),
    )
    until: str | None = Field(
        default=None,
        max_length=1000,
        description=(
            "A regular expression (RE2 syntax: no look-around or backreferences); return as "
            "soon as the new output matches it, e.g. 'Listening on|error'."
        ),
    )


class JobOutputTool(Tool[JobOutputArgs]):
    """Reads a background job's new output, waiting for it when asked."""

    name: ClassVar[str] = "job_output"
    kind: ClassVar[str] = "read"
    answers_change: ClassVar[bool] = True
    description: ClassVar[str] = (
        "Read what a background job (started with bash's background: true) printed since "
        "the last read, and whether it still runs or how it ended. With wait_seconds, wait "
        "for new output (or for it to match `until`, a regular expression) and return as "
        "soon as it comes or the job ends: use it to wait for a server's 'ready' line "
        "instead of sleeping. Output that came while no one read may be cut in the middle."
    )
    args_model: ClassVar[type[ToolArgs]] = JobOutputArgs

    def title(self, arguments: dict[str, Any]) -> str:
        return f"Output of {arguments.get('job', '')}"

    async def run(self, args: JobOutputArgs, deps: ToolDeps) -> ToolResult:
        job = _table(deps).get(args.job)
        pattern = None
        if args.until is not None:
            try:
                pattern = LinearRegex(args.until)
            except LinearRegexError as exc:
                raise ToolError(f"until is not a valid regular expression: {exc}") from None
        matched = await _wait(job, args.wait_seconds, pattern)
        text = _read(job)
        if pattern is not None:
            said = "matched" if matched else "did not match (yet)"
            text = f"`until` {said}\n{text}"
        return ToolResult(ok=True, output=text)


async def _wait(job: Job, seconds: float, pattern: LinearRegex | None) -> bool:
    """Wait (at most ``seconds``) until the output since the last read matches
    ``pattern`` (any new output without one) or the job ends; whether it matched."""

    def found() -> bool:
        text, _ = job.output.since(job.read_to)
        if pattern is None:
            return bool(text)
        return pattern.search(text)

    if found():
        return True
    with anyio.move_on_after(seconds):
        while job.state == "running":
            await job.changed()
            if found():
                return True
    return found()


class JobStopArgs(ToolArgs):
    job: str = Field(min_length=1, max_length=200, description="The job's id, e.g. job-1.")


class JobStop(Tool[JobStopArgs]):
    """Ends a background job and every process it started."""

    name: ClassVar[str] = "job_stop"
    kind: ClassVar[str] = "execute"
    description: ClassVar[str] = (
        "Stop a background job (started with bash's background: true) and every process it "
        "started; returns what it printed since the last read."
    )
    args_model: ClassVar[type[ToolArgs]] = JobStopArgs

    def title(self, arguments: dict[str, Any]) -> str:
        return f"Stop {arguments.get('job', '')}"

    async def run(self, args: JobStopArgs, deps: ToolDeps) -> ToolResult:
        job = _table(deps).get(args.job)
        await _table(deps).stop(job)
        return ToolResult(ok=True, output=_read(job))
