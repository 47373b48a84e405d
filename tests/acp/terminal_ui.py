"""A terminal program in a pseudo-terminal, its screen emulated by pyte, read as text.

For driving a real ACP client UI (acpx, Toad) as a person would: start it, wait for
text to appear on the screen (event-driven: every read of the terminal wakes the
waiters), type, press keys, and capture the screen. The program runs in its own session
with the pty as its controlling terminal; at the end its whole process group is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import signal
import struct
import termios
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path

import pyte

from ..waiting import wait_until
from .process import alive, descendants

KEYS = {
    "enter": "\r",
    "tab": "\t",
    "escape": "\x1b",
    "up": "\x1b[A",
    "down": "\x1b[B",
    "right": "\x1b[C",
    "left": "\x1b[D",
    "ctrl-c": "\x03",
    "ctrl-d": "\x04",
    "backspace": "\x7f",
}


class PtyScreen:
    """A spawned program on a ``columns`` × ``rows`` terminal."""

    def __init__(
        self, process: asyncio.subprocess.Process, master: int, columns: int, rows: int
    ) -> None:
        self.process = process
        self.master = master
        self.screen = pyte.HistoryScreen(columns, rows, history=5000)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()
        """Everything the program wrote, escape sequences included."""
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[bool]]] = []
        self._closed = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().add_reader(master, self._read)

    @classmethod
    @contextlib.asynccontextmanager
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        columns: int = 120,
        rows: int = 40,
    ) -> AsyncIterator[PtyScreen]:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        environment = {**(env or os.environ), "TERM": "xterm-256color"}
        environment.update(COLUMNS=str(columns), LINES=str(rows))
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                env=environment,
                cwd=str(cwd) if cwd else None,
                start_new_session=True,  # the pty becomes its controlling terminal
            )
        finally:
            os.close(slave)
        screen = cls(process, master, columns, rows)
        try:
            yield screen
        finally:
            await screen.close()

    def _read(self) -> None:
        try:
            data = os.read(self.master, 65536)
        except OSError:
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self.master)
            if not self._closed.done():
                self._closed.set_result(None)
        else:
            self.raw += data
            self.stream.feed(data)
        for condition, future in list(self._waiters):
            if future.done():
                self._waiters.remove((condition, future))
            elif condition():
                future.set_result(True)
                self._waiters.remove((condition, future))
            elif self._closed.done():
                future.set_result(False)
                self._waiters.remove((condition, future))

    # --- reading ---------------------------------------------------------------------------
    def lines(self) -> list[str]:
        """The scrolled-off lines and the visible ones, right-trimmed."""
        history = [
            "".join(line[x].data for x in range(self.screen.columns)).rstrip()
            for line in self.screen.history.top
        ]
        return history + [line.rstrip() for line in self.screen.display]

    def text(self) -> str:
        """The whole screen (with what scrolled off) as text, trailing blank lines dropped."""
        lines = self.lines()
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    def visible(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip()

    async def wait_until(
        self, condition: Callable[[], bool], what: str, within: float = 30.0
    ) -> None:
        """Until ``condition()`` holds, checked at every output of the program. It held once
        is enough: the output after it may already have changed the screen again (a spinner
        line erased before the answer is printed whole) by the time the caller runs."""
        if condition():
            return
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append((condition, future))
        try:
            held = await asyncio.wait_for(future, within)
        except TimeoutError:
            raise AssertionError(
                f"timed out after {within:g} s waiting for {what} on the screen:\n{self.text()}"
            ) from None
        if not held:
            # What was written last, escapes included, and how the program ended.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), 5)
            tail = bytes(self.raw[-2000:])
            raise AssertionError(
                f"the program ended (exit {self.process.returncode}) before {what}:\n"
                f"{self.text()}\nits last output: {tail!r}"
            )

    async def wait_for(self, pattern: str, within: float = 30.0) -> re.Match[str]:
        """Until ``pattern`` (a regular expression) matches the screen text; the match, as
        the screen was when it first did."""
        compiled = re.compile(pattern)
        found: list[re.Match[str]] = []

        def matches() -> bool:
            match = compiled.search(self.text())
            if match is not None:
                found.append(match)
            return match is not None

        await self.wait_until(matches, repr(pattern), within)
        return found[-1]

    async def wait_for_exit(self, within: float = 30.0) -> int:
        """Until the program exits; its exit status."""
        return await asyncio.wait_for(self.process.wait(), within)

    # --- typing ----------------------------------------------------------------------------
    def type(self, text: str) -> None:
        """Type ``text`` (no Enter)."""
        os.write(self.master, text.encode())

    def press(self, *keys: str) -> None:
        """Press named keys (``enter``, ``down``…) or single characters."""
        for key in keys:
            self.type(KEYS.get(key, key))

    async def close(self) -> None:
        """Kill the program's group and everything it started; close the terminal."""
        pids = descendants(self.process.pid) | {self.process.pid}
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), 5)
        # A SIGKILL is delivered, not instant: a grandchild is still running for a moment
        # after the call returns. Closed means gone (dead or a zombie), so wait for that.
        await wait_until(
            lambda: not any(alive(pid) for pid in pids), f"the killed processes {sorted(pids)}"
        )
        with contextlib.suppress(ValueError, OSError):
            asyncio.get_running_loop().remove_reader(self.master)
        with contextlib.suppress(OSError):
            os.close(self.master)


def stamp() -> str:
    """A wall-clock stamp for a captured screen's caption."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
