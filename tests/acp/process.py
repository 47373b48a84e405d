"""An agent subprocess in its own process group: spawned, watched, and never left behind.

The agent runs as the leader of a new session (``start_new_session``), so everything it
starts shares its process group unless it leaves on purpose; ``descendants`` also follows
the parent links in ``/proc``, which catches a child that started its own group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..forkserver import served_pid
from ..waiting import wait_until

STREAM_LIMIT = 1 << 24
"""Bytes one ndjson line may hold (an agent may send a whole file in one message)."""


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return text.rsplit(")", 1)[1].split()


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def descendants(root: int) -> set[int]:
    """Every live process below ``root`` (by parent links) or in its process group; when
    ``root`` is a fork server's launcher (``tests/forkserver.py``), below its fork too."""
    roots = {root}
    if (fork := served_pid(root)) is not None:
        roots.add(fork)
    parents: dict[int, int] = {}
    group: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields is None or fields[0] == "Z":
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        if int(fields[2]) in roots and pid not in roots:
            group.add(pid)
    found = {pid for pid in roots - {root} if pid in parents}
    frontier = list(roots)
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in found]
        found.update(children)
        frontier += children
    return found | group


@dataclass(frozen=True)
class ExitCheck:
    """What happened after the agent's stdin was closed."""

    exited: bool
    """The agent process itself exited within the time allowed."""
    seconds: float
    """Until it exited (or until the time allowed ran out)."""
    left_behind: frozenset[int]
    """Processes it had started that were still alive at the deadline."""
    returncode: int | None

    @property
    def clean(self) -> bool:
        """The agent and everything it started were gone in time."""
        return self.exited and not self.left_behind


@dataclass
class AgentProcess:
    """A spawned agent command with piped stdio (stderr to a file, stdout is protocol)."""

    process: asyncio.subprocess.Process
    argv: tuple[str, ...]
    started_ns: int
    stderr_path: Path | None

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        stderr_path: Path | None = None,
    ) -> AgentProcess:
        """Start ``argv``; ``started_ns`` is taken just before the spawn."""
        stderr = stderr_path.open("wb") if stderr_path else None
        try:
            started = time.monotonic_ns()
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr if stderr is not None else asyncio.subprocess.DEVNULL,
                env=dict(env) if env is not None else None,
                cwd=str(cwd) if cwd else None,
                start_new_session=True,
                limit=STREAM_LIMIT,
            )
        finally:
            if stderr is not None:
                stderr.close()
        return cls(process, tuple(argv), started, stderr_path)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stderr_tail(self, limit: int = 4000) -> str:
        """The end of what the agent logged (for failure messages)."""
        if self.stderr_path is None or not self.stderr_path.exists():
            return ""
        return self.stderr_path.read_bytes()[-limit:].decode(errors="replace")

    async def close_stdin(self) -> None:
        """End of input, as an editor that quits gives it."""
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            with contextlib.suppress(OSError, RuntimeError):
                stdin.write_eof()
            stdin.close()
            with contextlib.suppress(OSError, ConnectionError):
                await stdin.wait_closed()

    async def exit_after_eof(self, within: float = 2.0) -> ExitCheck:
        """Close stdin and wait up to ``within`` s for the agent and its children to go."""
        children = descendants(self.pid)
        began = time.monotonic()
        await self.close_stdin()
        exited = True
        try:
            await asyncio.wait_for(self.process.wait(), within)
        except TimeoutError:
            exited = False
        seconds = time.monotonic() - began
        deadline = began + within
        remaining = max(0.0, deadline - time.monotonic())
        with contextlib.suppress(AssertionError):
            await wait_until(
                lambda: not any(alive(pid) for pid in children), "children gone", remaining
            )
        left = {pid for pid in children if alive(pid)}
        return ExitCheck(exited, seconds, frozenset(left), self.process.returncode)

    async def kill(self) -> None:
        """Kill the whole group and every descendant found, then reap the agent."""
        for pid in descendants(self.pid) | {self.pid}:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        if self.process.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), 5)
