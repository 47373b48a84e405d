"""The client's ``terminal/*`` methods, for real: each terminal is a subprocess.

A terminal runs ``command`` with ``args`` (through ``/bin/sh -c`` when there are no args and
the command is not a program on ``PATH``: editors run agent commands in a shell), its
stdout and stderr merged as a terminal shows them, in its own process group so that
``terminal/kill`` and ``release`` stop everything it started. Output beyond
``outputByteLimit`` is dropped from the *start*, at a character boundary (the spec's rule).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shutil
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def keep_tail(data: bytes, limit: int | None) -> tuple[bytes, bool]:
    """The last ``limit`` bytes of ``data`` starting at a UTF-8 character boundary."""
    if limit is None or len(data) <= limit:
        return data, False
    start = len(data) - limit
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1  # a continuation byte: the character began before the cut
    return data[start:], True


@dataclass
class Terminal:
    """One ``terminal/create``: its process and what it printed."""

    terminal_id: str
    command: str
    args: list[str]
    cwd: str | None
    limit: int | None
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None
    released: bool = False

    def exit_status(self) -> dict[str, Any] | None:
        """``{exitCode, signal}`` once the process has exited."""
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        return {"exitCode": code, "signal": None}

    def text(self) -> str:
        return bytes(self.output).decode(errors="replace")


class Terminals:
    """The terminals of one client; ``close`` kills whatever the agent left running."""

    def __init__(self) -> None:
        self._terminals: dict[str, Terminal] = {}
        self._ids = itertools.count(1)
        self.created: list[Terminal] = []

    async def create(
        self,
        command: str,
        args: Sequence[str] | None,
        env: Mapping[str, str],
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> Terminal:
        """Start the command; the terminal collects its output until it exits."""
        argv = [command, *(args or [])]
        if not args and shutil.which(command) is None:
            argv = ["/bin/sh", "-c", command]
        if cwd is not None and not Path(cwd).is_dir():
            raise FileNotFoundError(f"terminal cwd {cwd} is not a folder")
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, **env},
            cwd=cwd,
            start_new_session=True,
        )
        terminal = Terminal(
            f"term-{next(self._ids)}", command, list(args or []), cwd, output_byte_limit, process
        )
        terminal.reader = asyncio.create_task(self._collect(terminal))
        self._terminals[terminal.terminal_id] = terminal
        self.created.append(terminal)
        return terminal

    async def _collect(self, terminal: Terminal) -> None:
        stream = terminal.process.stdout
        assert stream is not None
        while chunk := await stream.read(65536):
            data, cut = keep_tail(bytes(terminal.output) + chunk, terminal.limit)
            terminal.output[:] = data
            terminal.truncated = terminal.truncated or cut
        await terminal.process.wait()

    def get(self, terminal_id: str) -> Terminal:
        """The live terminal with this id (``KeyError`` once released or never made)."""
        terminal = self._terminals.get(terminal_id)
        if terminal is None or terminal.released:
            raise KeyError(terminal_id)
        return terminal

    async def wait_for_exit(self, terminal_id: str) -> dict[str, Any]:
        """Until the command has exited and its output is all read."""
        terminal = self.get(terminal_id)
        assert terminal.reader is not None
        await asyncio.shield(terminal.reader)
        status = terminal.exit_status()
        assert status is not None
        return status

    def kill(self, terminal_id: str) -> None:
        """Kill the command's process group (the terminal stays readable)."""
        _kill_group(self.get(terminal_id).process)

    async def release(self, terminal_id: str) -> None:
        """Kill the command if it still runs and forget the terminal."""
        terminal = self.get(terminal_id)
        _kill_group(terminal.process)
        terminal.released = True
        await _reap(terminal)

    async def close(self) -> None:
        """Kill every terminal's process group (the session is over)."""
        for terminal in self._terminals.values():
            _kill_group(terminal.process)
            await _reap(terminal)

    @property
    def unreleased(self) -> list[Terminal]:
        """Terminals the agent created and never released (the spec says it MUST)."""
        return [t for t in self.created if not t.released]


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _reap(terminal: Terminal) -> None:
    if terminal.reader is not None:
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(terminal.reader), 5)
