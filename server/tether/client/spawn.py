"""Starting ``tether serve`` for a terminal command, importing nothing heavy.

``tether run`` spawns its server before importing the client (pydantic models, the
protocol): the two interpreters then start up side by side instead of one after the other.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import anyio
from anyio.abc import Process

DRAIN_SECONDS = 2.0
"""How long an exited server's last stderr lines are waited for."""


FORK_SERVER: Callable[[Path], Callable[[], Awaitable[Process]]] | None = None
"""In a daemon's run process (``daemon.forked``): forks the server in a folder (the imports
are done) instead of starting a new interpreter; None elsewhere."""
_forked: Callable[[], Awaitable[Process]] | None = None


def prefork(root: Path) -> None:
    """In a daemon's run process, fork the server for ``root`` now, before any event loop
    or thread of the run starts (the next ``spawn_server(root, hold_stderr=True)`` uses it)."""
    global _forked
    if FORK_SERVER is not None and _forked is None:
        _forked = FORK_SERVER(root)


SERVER_LOG_LEVEL = {"level": "ERROR"}
"""The log level of a server started for the terminal: its warnings (a retried model call)
are not printed over the run; ``tether --log-level LEVEL`` sets it."""


def serve_command() -> list[str]:
    """How the server is started: this interpreter's ``tether serve``."""
    return [sys.executable, "-m", "tether", "--log-level", SERVER_LOG_LEVEL["level"], "serve"]


def serve_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: ours, with Python's output unbuffered."""
    return {**environ, "PYTHONUNBUFFERED": "1"}


async def spawn_server(
    root: Path,
    command: list[str] | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    hold_stderr: bool = False,
) -> Process:
    """Start ``tether serve`` in ``root``; its stderr is ours, or with ``hold_stderr`` a
    pipe that ``relay_stderr`` copies to ours once the server is known to be wanted (a
    server started before the settings were checked must not add its own error to ours).

    Its own process session: Ctrl-C in the terminal reaches the client, which cancels the run and
    shuts the server down in order, instead of killing the server mid-reply.
    """
    global _forked
    if _forked is not None and command is None and environ is None and hold_stderr:
        forked, _forked = _forked, None
        return await forked()
    return await anyio.open_process(
        command or serve_command(),
        env=serve_environment(os.environ if environ is None else environ),
        cwd=str(root),
        stderr=subprocess.PIPE if hold_stderr else None,
        start_new_session=True,
    )


async def relay_stderr(process: Process) -> None:
    """Copy the server's held stderr to ours until it closes it."""
    if process.stderr is None:
        return
    out = sys.stderr
    with contextlib.suppress(
        anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError
    ):
        while True:
            chunk = await process.stderr.receive()
            with contextlib.suppress(OSError, ValueError):  # our stderr closed: drop it
                out.flush()
                out.buffer.write(chunk)
                out.buffer.flush()


async def discard(process: Process) -> None:
    """Stop a server that will not be used (the settings turned out unusable)."""
    if process.returncode is None:
        process.kill()
    with anyio.CancelScope(shield=True):
        await process.wait()
    await process.aclose()
