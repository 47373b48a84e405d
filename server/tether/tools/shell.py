"""The ``bash`` tool, and ``run_command``: one shell command, bounded in time, output and reach.

``run_command`` is the one runner of every command Tether runs, allowed however it was (an
ACP editor that declared terminals runs an allowed, unsandboxed command in its own terminal
instead, through the ``RunsCommands`` seam, so the user watches it): it runs ``bash
-c COMMAND`` with stdin closed and stdout and stderr merged into one pipe, in a new session
(so its own process group, and no controlling terminal), inside the sandbox when it is
given one (``tether.sandbox``). It returns when the command has exited, or when the
timeout fires, or it is cancelled. Whatever way it ends, every process the command started
ends with it: SIGTERM, and SIGKILL for anything still alive ``KILL_GRACE_SECONDS`` later.
That includes background leftovers (``server &``) and processes that left the group on
purpose (``setsid``, a double fork, ``nohup setsid …``): bubblewrap's PID namespace holds
them, and otherwise the trampoline bash starts through is their subreaper and ends them
(``sandbox/trampoline.py``; Linux) — given its whole grace first; whatever of the tree is
still alive after it is SIGKILLed here, before the group (``sandbox.runner.kill_tree``).
A tool call must not leave processes behind that the user never sees.

Output is read while the command runs and capped: the first and last halves of
``output_limit`` characters are kept, with a marker line saying how much was cut between.
"""

from __future__ import annotations

import codecs
import math
import os
import shutil
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import anyio
import anyio.abc
import anyio.to_thread
from pydantic import Field, field_validator

from tether_protocol import CommandPreview

from ..errors import ToolError
from ..host import RunsCommands
from ..sandbox import Prepared, Sandbox, blocked_reason, unsandboxed
from ..sandbox.runner import KILL_GRACE_SECONDS as SANDBOX_KILL_GRACE_SECONDS
from ..sandbox.runner import kill_tree
from ..writes.coherence import after_command, before_command, unsaved_note
from .base import Proposal, Tool, ToolArgs, ToolDeps, ToolResult, one_line
from .command_input import NOT_ANSWERED, AnswersInput, answered_note, input_answerer
from .git_guard import git_environment, refusal, refused_settings
from .input_wait import (
    CHECK_SECONDS,
    INPUT_WAIT_SECONDS,
    InputTerminal,
    asked_line,
    open_input_terminal,
)
from .progress import OutputWatch, ReportProgress, report_progress

if TYPE_CHECKING:
    from ..policy.capability import Effect

__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "DEFAULT_TIMEOUT_SECONDS",
    "KILL_GRACE_SECONDS",
    "MAX_TIMEOUT_SECONDS",
    "Bash",
    "BashArgs",
    "CommandOutcome",
    "command_environment",
    "run_command",
]

DEFAULT_TIMEOUT_SECONDS = 120.0
MAX_TIMEOUT_SECONDS = 600.0
DEFAULT_OUTPUT_LIMIT = 30_000
# Between SIGTERM and SIGKILL: time for well-behaved programs to clean up (temp files, locks).
KILL_GRACE_SECONDS = SANDBOX_KILL_GRACE_SECONDS
# For a command started through the trampoline: how much longer the group may take to end,
# since the trampoline itself SIGKILLs the command's processes after the grace.
REAPER_SLACK_SECONDS = 1.0
# After bash exits, how long to keep reading output still in flight. Only background
# leftovers that keep the pipe open make this wait; otherwise the pipe ends at once.
DRAIN_SECONDS = 0.25
# After SIGKILL, how long to wait for the group to be gone (only processes stuck in the
# kernel, e.g. on a dead network mount, take longer; those are not waited for).
KILL_WAIT_SECONDS = 1.0
SUMMARY_CHARS = 80
QUESTION_CHARS = 2000
"""The end of a command's output its question is asked with (``commandInput: "ask"``)."""
SANDBOX_WALLS = (
    "only the workspace writable, no network, no unix sockets, $HOME hidden, a private /tmp"
)

# Commands run without a terminal and without input, so anything interactive must be off.
# Most tools only page or colour when stdout is a terminal, which a pipe is not; these make
# sure of it for the rest. PAGER/GIT_PAGER=cat: `git log`, `man`, `systemctl` print instead
# of waiting in `less`. TERM=dumb: no cursor movement or progress-bar redraws. NO_COLOR=1: no
# ANSI colour codes in what the model reads. GIT_TERMINAL_PROMPT=0: git fails instead of
# asking for credentials. CI is deliberately NOT set: besides making tools non-interactive
# it changes what they do (jest refuses to write new snapshots, some test suites skip or
# behave differently, package managers switch to frozen lockfiles), so the agent would see
# different results than the user does in their own terminal.
NON_INTERACTIVE_ENV: Mapping[str, str] = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "TERM": "dumb",
    "NO_COLOR": "1",
    "GIT_TERMINAL_PROMPT": "0",
}


def command_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment commands run with: ``base`` (default ``os.environ``), non-interactive,
    its ``PATH`` without relative entries (``absolute_path``)."""
    env = dict(os.environ if base is None else base)
    env.update(NON_INTERACTIVE_ENV)
    if "PATH" in env:
        env["PATH"] = absolute_path(env["PATH"])
    return env


def absolute_path(path: str) -> str:
    """A ``PATH`` without its relative entries (``node_modules/.bin``, ``.``, an empty one):
    they look programs up from the folder a command runs in, the workspace, so a command the
    built-in rules run unasked (``git status``, ``ls``) would run the repository's own."""
    return os.pathsep.join(entry for entry in path.split(os.pathsep) if os.path.isabs(entry))


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """How a command ended and what it printed."""

    exit_code: int | None
    """bash's exit status; None when it was killed (timeout). A death by signal N that the
    command brought on itself reads 128 + N, as a shell reports it."""
    output: str
    """stdout and stderr merged in the order written, UTF-8 (bad bytes replaced), capped."""
    timed_out: bool
    truncated_chars: int
    """How many characters were cut out of the middle of ``output`` (0: nothing)."""
    duration: float
    """Seconds from start until the command and its process group were gone."""
    asked: str | None = None
    """When it was ended for waiting for input: what it asked (its output's last line,
    "" when it printed none); see ``tools/input_wait.py``."""
    answered: tuple[bool, ...] = ()
    """Each question of it the user answered (``commandInput: "ask"``): whether a secret."""


async def run_command(
    command: str,
    cwd: Path,
    timeout: float,  # noqa: ASYNC109 - a timeout is an outcome here, not an error
    *,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    env: Mapping[str, str] | None = None,
    on_start: Callable[[int], None] | None = None,
    sandbox: Sandbox | None = None,
    extra_env: Callable[[Mapping[str, str]], Mapping[str, str]] | None = None,
    progress: ReportProgress | None = None,
    on_output: Callable[[bytes], None] | None = None,
    answer: AnswersInput | None = None,
) -> CommandOutcome:
    """Run ``bash -c command`` in ``cwd`` and return how it ended; see the module docstring.

    ``env`` is the complete environment (default: ``command_environment()``). ``on_start``
    is called with the process-group id (bash's pid) once the process runs, e.g. to watch
    it. When the calling task is cancelled, the group is stopped (SIGTERM, then SIGKILL
    after ``KILL_GRACE_SECONDS``) before the cancellation goes on. Raises ``ToolError``
    when bash is not installed and ``OSError`` when it cannot be started (e.g. no ``cwd``).
    With ``sandbox``, bash runs inside it (see ``tether.sandbox``), with the environment
    it lets in; ``extra_env`` gives Tether's own variables for that environment, set on
    top of it in either case. ``progress`` is told, while it runs, the time so far and
    the end of its output (``tools/progress.py``: for people, throttled); ``on_output`` is
    given every piece of output as read (a background job's ring, ``tools/jobs.py``).
    ``answer``, when given, is asked what a command that waits for input asked (and
    whether its typing is hidden); its answer and a newline are typed into the command,
    and with None the command is ended as without it (``tools/command_input.py``).
    """
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, not {timeout}")
    if output_limit < 0:
        raise ValueError(f"output_limit must not be negative, not {output_limit}")
    environment = command_environment() if env is None else dict(env)
    bash = shutil.which("bash", path=environment.get("PATH"))
    if bash is None:
        raise ToolError("bash was not found on PATH, so commands cannot be run")

    # The trailing "bash" is $0: messages read "bash: …", not "/usr/bin/bash: …".
    argv = [bash, "-c", command, "bash"]
    with anyio.CancelScope(shield=True):  # its temp folder and descriptors must not be lost
        prepared = await anyio.to_thread.run_sync(_prepare, sandbox, argv, cwd, environment)
    if extra_env is not None:
        prepared.env.update(extra_env(prepared.env))
    try:
        return await _run(
            prepared, cwd, timeout, output_limit, on_start, progress, on_output, answer
        )
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(prepared.cleanup)


def _prepare(
    sandbox: Sandbox | None, argv: list[str], cwd: Path, env: Mapping[str, str]
) -> Prepared:
    """The command line of ``argv``: in ``sandbox``, else through the trampoline alone."""
    if sandbox is None:
        return unsandboxed(argv, env)
    try:
        return sandbox.prepare(argv, cwd, env)
    except ValueError as exc:  # no seccomp filter for this machine: nothing runs
        raise ToolError(f"the {sandbox.backend} sandbox cannot start here: {exc}") from exc


async def _run(
    prepared: Prepared,
    cwd: Path,
    timeout: float,  # noqa: ASYNC109 - a timeout is an outcome here, not an error
    output_limit: int,
    on_start: Callable[[int], None] | None,
    progress: ReportProgress | None = None,
    on_output: Callable[[bytes], None] | None = None,
    answer: AnswersInput | None = None,
) -> CommandOutcome:
    started = time.monotonic()
    capture = _OutputCapture(output_limit)
    watch = OutputWatch() if progress is not None else None
    # Its input: a terminal no one types into, to see it ask (``input_wait``), else nothing.
    with anyio.CancelScope(shield=True):  # its descriptors must not be lost
        terminal = await anyio.to_thread.run_sync(open_input_terminal)  # the first probes
    asked: list[str] = []
    answered: list[bool] = []

    def feed(data: bytes) -> None:  # what it wrote to that terminal: output too
        capture.feed(data)
        if watch is not None:
            watch.feed(data)
        if on_output is not None:
            on_output(data)

    # Shielded: the command may already run (and fork) before the spawn returns, and a cancel
    # landing then would lose the group; it is delivered at the first await below instead.
    try:
        with anyio.CancelScope(shield=True):
            process = await anyio.open_process(
                prepared.argv,
                cwd=cwd,
                env=prepared.env,
                pass_fds=prepared.pass_fds,
                stdin=subprocess.DEVNULL if terminal is None else terminal.slave,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,  # one pipe keeps stdout and stderr in the order written
                start_new_session=True,  # own process group, to kill grandchildren
            )
    except BaseException:
        if terminal is not None:
            terminal.close()
        raise
    if terminal is not None:
        terminal.started()
    pgid = process.pid  # a new session's leader leads its process group: pgid == pid
    grace = KILL_GRACE_SECONDS + (REAPER_SLACK_SECONDS if prepared.reaped else 0.0)
    timed_out = False
    stopped = False
    try:
        if on_start is not None:
            on_start(pgid)
        stdout = process.stdout
        assert stdout is not None  # stdout=PIPE
        eof = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_pump, stdout, capture, eof, watch, on_output)
            if progress is not None and watch is not None:
                tg.start_soon(report_progress, watch, started, progress)
            try:
                with anyio.move_on_after(timeout) as deadline:
                    async with anyio.create_task_group() as waiting:
                        if terminal is not None:
                            typed = _Typed(answer, answered, deadline)
                            waiting.start_soon(
                                _watch_input, terminal, pgid, capture, feed, asked, waiting, typed
                            )
                        await _wait_for_exit(process)
                        waiting.cancel_scope.cancel()
                timed_out = deadline.cancelled_caught
                if not timed_out and not asked:
                    # Background leftovers hold the pipe open: read what is in flight, but
                    # don't wait for an EOF that only comes when they end.
                    with anyio.move_on_after(DRAIN_SECONDS):
                        await eof.wait()
            finally:
                # Also on cancellation: shielded, so the grace period can run its course
                # before the cancellation propagates.
                with anyio.CancelScope(shield=True):
                    await _stop_group(process, grace)
                    stopped = True
            # The group is gone: what it wrote last is still in the pipe (or a process that
            # left the group holds it, hence the bound).
            with anyio.move_on_after(DRAIN_SECONDS):
                await eof.wait()
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if not stopped:  # on_start failed: nothing above ran
                await _stop_group(process, grace)
            await process.aclose()
            if terminal is not None:
                await anyio.to_thread.run_sync(_drain_into, terminal, feed, 0.0)
                terminal.close()

    output, truncated = capture.finish()
    return CommandOutcome(
        exit_code=None if timed_out or asked else _exit_code(process.returncode),
        output=output,
        timed_out=timed_out,
        truncated_chars=truncated,
        duration=time.monotonic() - started,
        asked=asked_line(capture.recent()) if asked else None,
        answered=tuple(answered),
    )


def _drain_into(terminal: InputTerminal, feed: Callable[[bytes], None], wait: float) -> None:
    """Add what the command wrote to its terminal to its output (blocking)."""
    while data := terminal.drain(wait):
        feed(data)
        wait = 0.0


@dataclass(frozen=True, slots=True)
class _Typed:
    """Who answers a command's questions, and what was answered."""

    answer: AnswersInput | None
    answered: list[bool]
    """Each answer typed in: whether its typing was hidden."""
    deadline: anyio.CancelScope
    """The command's timeout: the time the user takes to answer is not counted."""

    async def ask(
        self, terminal: InputTerminal, recent: str, feed: Callable[[bytes], None]
    ) -> bool:
        """Ask the user what the command asked at the end of its ``recent`` output and type
        their answer in, its echo into the output (``feed``) where it was typed; False: no
        answer (dismissed, no one to ask) or the command could not be typed into."""
        if self.answer is None:
            return False
        hidden = await anyio.to_thread.run_sync(terminal.hides_typing)
        left = self.deadline.deadline - anyio.current_time()
        self.deadline.deadline = math.inf
        try:
            reply = await self.answer(recent, hidden)
        finally:
            self.deadline.deadline = anyio.current_time() + left
        if reply is None:
            return False

        def typing() -> bool:
            _drain_into(terminal, feed, 0.0)  # what it wrote to its terminal comes first
            return terminal.type(reply.text + "\n", reply.secret, feed)

        typed = await anyio.to_thread.run_sync(typing)
        if typed:
            self.answered.append(reply.secret)
        return typed


async def _watch_input(
    terminal: InputTerminal,
    root: int,
    capture: _OutputCapture,
    feed: Callable[[bytes], None],
    asked: list[str],
    waiting: anyio.abc.TaskGroup,
    typed: _Typed,
) -> None:
    """Every ``CHECK_SECONDS``, keep the terminal read and, while the command prints
    nothing, look whether it waits for input; once it has for ``INPUT_WAIT_SECONDS``,
    have ``typed`` ask the user and type the answer in, or else say so in ``asked`` and
    stop the waiting for its exit."""
    since: float | None = None
    seen = -1
    while True:
        await anyio.sleep(CHECK_SECONDS)
        await anyio.to_thread.run_sync(_drain_into, terminal, feed, 0.0)
        if capture.total != seen:
            seen, since = capture.total, None
            continue
        if not await anyio.to_thread.run_sync(terminal.asking, root):
            since = None
            continue
        now = anyio.current_time()
        if since is None:
            since = now
        elif now - since >= INPUT_WAIT_SECONDS:
            if await typed.ask(terminal, capture.recent()[-QUESTION_CHARS:], feed):
                seen, since = -1, None
                continue
            asked.append("yes")
            waiting.cancel_scope.cancel()
            return


def _exit_code(returncode: int | None) -> int | None:
    if returncode is None:
        return None
    # Popen reports a death by signal N as -N; a shell (and so the model's intuition) as 128+N.
    return 128 - returncode if returncode < 0 else returncode


async def _wait_for_exit(process: anyio.abc.Process) -> None:
    """Return once bash itself has exited, whoever still holds its output pipe.

    Recent anyio's ``Process.wait`` does exactly that; older versions on asyncio also wait
    for the pipes to close, which a background grandchild prevents. ``returncode`` is set
    at exit either way, so re-checking it every 50 ms covers those versions.
    """
    while process.returncode is None:
        with anyio.move_on_after(0.05):
            await process.wait()


async def _pump(
    stream: anyio.abc.ByteReceiveStream,
    capture: _OutputCapture,
    eof: anyio.Event,
    watch: OutputWatch | None = None,
    on_output: Callable[[bytes], None] | None = None,
) -> None:
    """Feed the merged output into ``capture`` (and ``watch``, ``on_output``) until the
    pipe ends."""
    try:
        async for chunk in stream:
            capture.feed(chunk)
            if watch is not None:
                watch.feed(chunk)
            if on_output is not None:
                on_output(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        eof.set()


async def _stop_group(process: anyio.abc.Process, grace: float) -> None:
    """SIGTERM the process group (bash, and the trampoline that ends every descendant
    within its own grace); when anything of it lives on after ``grace`` seconds, SIGKILL
    the whole tree — the descendants of the command's first process, those that left the
    group too — then the group; return when it is gone. The group kill comes after the
    tree: once the trampoline is gone, what it was still holding would be out of reach."""
    pgid = process.pid  # it leads its group (``start_new_session``)
    if not _signal_group(pgid, signal.SIGTERM):
        return
    # A stopped process (Ctrl-Z'd, or SIGSTOP) only acts on SIGTERM once continued.
    _signal_group(pgid, signal.SIGCONT)
    if await _wait_group_gone(pgid, grace):
        return
    if process.returncode is None:  # not reaped: its pid cannot be another process's
        await anyio.to_thread.run_sync(kill_tree, pgid)
    if _signal_group(pgid, signal.SIGKILL):
        await _wait_group_gone(pgid, KILL_WAIT_SECONDS)


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed user (setuid); the others got the signal
        pass
    return True


async def _wait_group_gone(pgid: int, within: float) -> bool:
    """Poll until no live process is left in the group; False if ``within`` runs out."""
    deadline = anyio.current_time() + within
    delay = 0.005
    while True:
        remaining = deadline - anyio.current_time()
        if remaining <= 0:
            return False
        await anyio.sleep(min(delay, remaining))
        if not await anyio.to_thread.run_sync(_group_alive, pgid):
            return True
        delay = min(delay * 2, 0.05)


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs (blocking: reads /proc on Linux).

    ``killpg(pgid, 0)`` also succeeds while only zombies are left: killed orphans wait for
    init to reap them, which some container inits do only every second or two. Zombies run
    nothing, so on Linux they are ignored here by reading each process's state.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:  # no procfs (macOS): zombies there are reaped promptly by launchd
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # exited meanwhile
            continue
        # "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


class _OutputCapture:
    """Decoded output with bounded memory: the first and the last characters, and counts."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head: list[str] = []
        self._head_len = 0
        # Holds at least _tail_limit + 1 characters once there are that many, so that the
        # character before the kept tail tells whether the tail starts at a line start.
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self._total = 0
        self._newlines = 0

    def feed(self, data: bytes) -> None:
        """Add bytes as read from the pipe (multi-byte characters may span calls)."""
        self._add(self._decoder.decode(data))

    def _add(self, text: str) -> None:
        if not text:
            return
        self._total += len(text)
        self._newlines += text.count("\n")
        room = self._head_limit - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += min(room, len(text))
            text = text[room:]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            while self._tail_len - len(self._tail[0]) > self._tail_limit:
                self._tail_len -= len(self._tail.popleft())

    @property
    def total(self) -> int:
        """How many characters were fed so far."""
        return self._total

    def recent(self) -> str:
        """The end of the output so far (at most its kept tail)."""
        return "".join(self._tail) if self._tail else "".join(self._head)

    def finish(self) -> tuple[str, int]:
        """The capped output and how many characters were cut from its middle."""
        self._add(self._decoder.decode(b"", final=True))
        head = "".join(self._head)
        rest = "".join(self._tail)
        if self._total <= self._limit:
            return head + rest, 0
        # Cut whole lines when the line ends are near enough, so both sides stay readable.
        tail = rest[len(rest) - self._tail_limit :]
        before_tail = rest[len(rest) - self._tail_limit - 1]
        if before_tail != "\n":
            nl = tail.find("\n")
            if 0 <= nl < len(tail) // 2:
                tail = tail[nl + 1 :]
        nl = head.rfind("\n")
        if nl >= len(head) // 2:
            head = head[: nl + 1]
        cut = self._total - len(head) - len(tail)
        cut_lines = self._newlines - head.count("\n") - tail.count("\n")
        lines = "" if cut_lines == 0 else f" ({_plural(cut_lines, 'line')})"
        marker = f"… [{_plural(cut, 'character')}{lines} cut] …\n"
        if head and not head.endswith("\n"):
            marker = "\n" + marker  # the marker gets a line of its own
        return head + marker + tail, cut


def waited_for_input(asked: str) -> str:
    """How a command that was ended for waiting for input is described."""
    if not asked.strip():
        return "the command waited for input (it printed no question)"
    return f"the command waited for input: `{asked}`"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _terminal(deps: ToolDeps, sandbox: Sandbox | None, builtin: bool) -> RunsCommands | None:
    """The editor's terminal for an allowed command, when the editor has one: never for a
    command of the sandbox (only Tether's runner has its walls) or one the built-in
    read-only rules allowed (it runs with git's program-running settings off)."""
    editor = deps.editor
    if sandbox is not None or builtin or not isinstance(editor, RunsCommands):
        return None
    return editor if editor.has_terminal() else None


async def _in_terminal(
    terminal: RunsCommands, command: str, cwd: Path, seconds: float
) -> CommandOutcome:
    started = time.monotonic()
    done = await terminal.run_in_terminal(command, cwd, seconds, DEFAULT_OUTPUT_LIMIT)
    return CommandOutcome(
        exit_code=None if done.timed_out else done.exit_code,
        output=done.output,
        timed_out=done.timed_out,
        truncated_chars=0,
        duration=time.monotonic() - started,
    )


class BashArgs(ToolArgs):
    """Arguments of ``bash``."""

    command: str = Field(
        min_length=1,
        description=(
            "The command line, run with `bash -c` in the workspace root. Use && or ; to "
            "chain commands and cd within the command to run elsewhere."
        ),
    )
    timeout_seconds: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT_SECONDS,
        description=(
            f"Kill the command after this many seconds; default {DEFAULT_TIMEOUT_SECONDS:g}, "
            f"at most {MAX_TIMEOUT_SECONDS:g}. Raise it for long builds or test suites."
        ),
    )

    background: bool = Field(
        default=False,
        description=(
            "Start the command as a background job and return at once with its id (job-1, "
            "…) and its first output; it keeps running (a dev server, a watcher, a long "
            "build) until it ends, job_stop ends it, or the session ends. Read its output "
            "with job_output (which can wait until a pattern shows up). timeout_seconds does "
            "not apply to it."
        ),
    )

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the command is empty")
        return value


def _first_line(command: str) -> str:
    """The command's first line, shortened: the approval's title."""
    lines = command.strip().splitlines()
    first = lines[0] if lines else ""
    if len(first) > SUMMARY_CHARS:
        return first[: SUMMARY_CHARS - 1] + "…"
    return first + " …" if len(lines) > 1 else first


class Bash(Tool[BashArgs]):
    """Runs a shell command in the workspace root, after the user allows it."""

    name: ClassVar[str] = "bash"
    kind: ClassVar[str] = "execute"

    def title(self, arguments: dict[str, Any]) -> str:
        command = one_line(arguments.get("command", ""), 200)
        if arguments.get("background") is True:
            return f"Run in the background {command}"
        return f"Run {command}"

    description: ClassVar[str] = (
        "Run a shell command with bash in the workspace root and get its exit code and "
        "output (stdout and stderr merged). It runs non-interactively: no one types into "
        "it and there is no pager; a command that stops to ask for input is ended and the "
        "result says what it asked (where the user chose to answer such questions, the "
        "question goes to them instead), so prefer flags that make it ask nothing. Use it "
        "to build, run tests, use git and other command-line tools; use read_file, "
        "list_files and search to read files, and edit_file and write_file to change them. "
        "Output longer than "
        f"{DEFAULT_OUTPUT_LIMIT} characters is cut in the middle. The command is killed "
        f"after timeout_seconds (default {DEFAULT_TIMEOUT_SECONDS:g}), and every process it "
        "started ends when it finishes (background jobs, nohup, setsid and daemons "
        "included); to keep a server or a watcher running, start it with background: true. "
        "The user may be asked to allow each command first; with the "
        "sandbox on, commands run inside it (only the workspace writable, no network, no "
        "unix sockets, $HOME hidden) and one the sandbox stopped may be asked to run "
        "outside."
    )
    args_model: ClassVar[type[ToolArgs]] = BashArgs
    needs_approval: ClassVar[bool] = True
    effect: ClassVar[Effect] = "command"

    async def propose(self, args: BashArgs, deps: ToolDeps) -> Proposal:
        """The command and the folder it would run in, for the user to allow."""
        preview = CommandPreview(command=args.command, cwd=str(deps.workspace.root))
        if args.background:
            title = f"Run in the background (it keeps running): {_first_line(args.command)}"
            return Proposal(title, preview)
        return Proposal(f"Run {_first_line(args.command)}", preview)

    async def perform(self, args: BashArgs, proposal: Proposal, deps: ToolDeps) -> ToolResult:
        """Run the allowed command (in the sandbox it was given, if any; a built-in
        read-only command with git's program-running settings off)."""
        return await self.run(args, deps, proposal.sandbox, builtin=proposal.builtin)

    async def run(
        self,
        args: BashArgs,
        deps: ToolDeps,
        sandbox: Sandbox | None = None,
        *,
        builtin: bool = False,
    ) -> ToolResult:
        """Run the command and report its exit code and (capped) output; in ``sandbox``,
        a failure for lack of reach is ``blocked`` with the reason. ``builtin``: the
        built-in read-only rules allowed it, so git runs no program its repository's
        config names (``git_guard``), or the command does not run at all."""
        if builtin and "git" in args.command:
            base = command_environment()
            refused = await anyio.to_thread.run_sync(
                refused_settings, deps.workspace.root, {**base, **git_environment(base)}
            )
            if refused:
                return ToolResult.failure(refusal(refused))
        if deps.editor is not None:
            # The command must see on disk what the editor shows (protocol: saveDocuments).
            unsaved = deps.editor.unsaved_edits()
            if unsaved:
                await deps.editor.save_documents(unsaved)
        if args.background:
            return await _start_job(args, deps, sandbox, builtin)
        timeout = args.timeout_seconds or DEFAULT_TIMEOUT_SECONDS
        buffers = await before_command(deps.workspace)
        answerer = input_answerer(deps, args.command)
        try:
            terminal = _terminal(deps, sandbox, builtin)
            if terminal is not None:
                outcome = await _in_terminal(terminal, args.command, deps.workspace.root, timeout)
            else:
                outcome = await run_command(
                    args.command,
                    deps.workspace.root,
                    timeout,
                    sandbox=sandbox,
                    extra_env=git_environment if builtin else None,
                    progress=deps.progress,
                    answer=answerer,
                )
        except OSError as exc:
            raise ToolError(f"could not start bash: {exc}") from exc
        notes = [
            answered_note(outcome.answered),
            unsaved_note(deps.workspace, buffers),
            await after_command(deps.workspace, buffers),
        ]
        output = outcome.output if outcome.output else "(no output)\n"
        error: str | None
        if outcome.asked is not None:
            error = waited_for_input(outcome.asked)
            status = (
                f"stopped: {error}. Nothing types into a command: give it its answer another "
                "way (a flag such as --yes, `yes |`, a here-string) or run it without asking"
            )
            if answerer is not None:
                status = f"stopped: {error}. {NOT_ANSWERED}"
        elif outcome.timed_out:
            status = (
                f"killed after timeout of {_seconds(timeout)} (set timeout_seconds, at most "
                f"{_seconds(MAX_TIMEOUT_SECONDS)}, if it needs longer)"
            )
            error = f"the command timed out after {_seconds(timeout)}"
        else:
            status = f"exit code: {outcome.exit_code}"
            error = None if outcome.exit_code == 0 else f"exit code {outcome.exit_code}"
        blocked = None
        if sandbox is not None:
            status += f" (in the {sandbox.backend} sandbox: {SANDBOX_WALLS})"
            blocked = blocked_reason(sandbox.backend, outcome.exit_code, outcome.output)
        body = "\n".join([output.removesuffix("\n"), *(n for n in notes if n)])
        return ToolResult(
            ok=outcome.exit_code == 0, output=f"{status}\n{body}", error=error, blocked=blocked
        )


async def _start_job(
    args: BashArgs, deps: ToolDeps, sandbox: Sandbox | None, builtin: bool
) -> ToolResult:
    """Start the allowed command as a background job of the session (``tools/jobs.py``)."""
    if deps.jobs is None:
        raise ToolError("background jobs are not available here: run it without background")
    output = await deps.jobs.launch(
        args.command,
        deps.workspace.root,
        sandbox=sandbox,
        extra_env=git_environment if builtin else None,
    )
    if sandbox is not None:
        output += f"\n(in the {sandbox.backend} sandbox: {SANDBOX_WALLS})"
    return ToolResult(ok=True, output=output)
