"""Bounded waits on an observable condition: the one place where tests poll.

A test that needs something to have happened (a log line written by the server's writer
thread, a pid file, a process gone) waits for exactly that, and fails with a message that
says what it was waiting for. A fixed sleep that hopes the thing happened meanwhile is not
allowed in tests (``tests/unit/test_static.py`` checks it).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

POLL_SECONDS = 0.01
DEFAULT_TIMEOUT = 10.0  # generous: a loaded 2-core CI machine, never a timing assertion


def _failed(what: str, within: float) -> AssertionError:
    return AssertionError(f"timed out after {within:g} s waiting for {what}")


async def wait_until(condition: Callable[[], T], what: str, within: float = DEFAULT_TIMEOUT) -> T:
    """Poll ``condition`` until it returns something truthy (returned), or fail after
    ``within`` seconds naming ``what`` was awaited."""
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise _failed(what, within)
        await asyncio.sleep(POLL_SECONDS)


def wait_until_sync(condition: Callable[[], T], what: str, within: float = DEFAULT_TIMEOUT) -> T:
    """``wait_until`` for synchronous tests (no event loop running)."""
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise _failed(what, within)
        time.sleep(POLL_SECONDS)


def logged_lines(log: Path) -> list[dict[str, object]]:
    """The complete JSON object lines of a session log (a line still being written, or a
    torn one, is left out)."""
    try:
        raw = log.read_bytes()
    except FileNotFoundError:
        return []
    lines: list[dict[str, object]] = []
    for line in raw.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            lines.append(value)
    return lines


def run_finished_logged(log: Path, run_id: str) -> bool:
    """The log holds the run's ``run-finished`` event: the writer appends in order, so
    everything the run logged before it is on disk too."""
    return any(
        line.get("runId") == run_id and line.get("kind") == "run-finished"
        for line in logged_lines(log)
    )


async def wait_for_run_logged(log: Path, run_id: str, within: float = DEFAULT_TIMEOUT) -> None:
    """Wait until the server's log writer has flushed run ``run_id`` up to its end."""
    await wait_until(
        lambda: run_finished_logged(log, run_id), f"run {run_id!r} to end in {log}", within
    )


def pid_written(pid_file: Path) -> int | None:
    """The pid a shell command wrote to ``pid_file`` once the line is complete, else None."""
    try:
        text = pid_file.read_text()
    except FileNotFoundError:
        return None
    return int(text) if text.endswith("\n") and text.strip().isdigit() else None


def alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"
