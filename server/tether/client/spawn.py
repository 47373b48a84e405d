"""Starting ``tether serve`` for a terminal command, importing nothing heavy; how Tether
starts an interpreter of its own.

``tether run`` spawns its server before importing the client (pydantic models, the
protocol): the two interpreters then start up side by side instead of one after the other.

Every interpreter Tether starts for its own code (this server, the daemon) is
``own_python()``: isolated (``-I``), in ``NEUTRAL_FOLDER``. The workspace is data — the
``rootUri`` and workspace folders of ``initialize`` — never the folder the process runs in
nor a place it imports from: ``python -m`` started in a cloned repository would otherwise
put that folder first on the import path, and its ``pygls.py`` would run.
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


FORK_SERVER: Callable[[], Callable[[], Awaitable[Process]]] | None = None
"""In a daemon's run process (``daemon.forked``): forks the server (the imports are done)
instead of starting a new interpreter; None elsewhere."""
_forked: Callable[[], Awaitable[Process]] | None = None


def prefork(root: Path) -> None:
    """In a daemon's run process, fork the server for the run in ``root`` now, before any
    event loop or thread of the run starts (the next ``spawn_server(root,
    hold_stderr=True)`` uses it); like a spawned one, it starts in ``NEUTRAL_FOLDER``."""
    global _forked
    if FORK_SERVER is not None and _forked is None:
        _forked = FORK_SERVER()


SERVER_LOG_LEVEL = {"level": "ERROR"}
"""The log level of a server started for the terminal: its warnings (a retried model call)
are not printed over the run; ``tether --log-level LEVEL`` sets it."""


NEUTRAL_FOLDER = "/"
"""The folder Tether's own processes start in: no project's (whatever a relative path there
names, a project did not put it there)."""


def own_python() -> list[str]:
    """This interpreter, isolated, for Tether's own code: ``-I`` puts neither the current
    folder nor the script's on the import path and ignores every ``PYTHON*`` variable
    (``PYTHONPATH``, ``PYTHONSTARTUP``, ``PYTHONHOME``…) and the user's site-packages, so it
    imports only from the installation (an editable install's ``.pth`` included), whatever
    folder or environment it is started from. (``-I`` is not too strict here: Tether runs
    from an installation; a checkout is installed editable.)"""
    return [sys.executable, "-I"]


def serve_command() -> list[str]:
    """How the server is started: this interpreter's ``tether serve``, isolated, its
    output unbuffered (``-u``)."""
    level = SERVER_LOG_LEVEL["level"]
    return [*own_python(), "-u", "-m", "tether", "--log-level", level, "serve"]


RELATIVE_TO_US = ("TETHER_STATE_DIR",)
"""Variables naming a folder, which the server, started elsewhere, must read as we do."""


def serve_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: ours, a relative folder in it made absolute from our
    current folder (the server runs in ``NEUTRAL_FOLDER``, where it would name another)."""
    env = dict(environ)
    for name in RELATIVE_TO_US:
        value = env.get(name)
        if value and not value.startswith("~") and not os.path.isabs(value):
            env[name] = os.path.abspath(value)
    return env


async def spawn_server(
    root: Path,
    command: list[str] | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    hold_stderr: bool = False,
) -> Process:
    """Start ``tether serve`` for the workspace ``root`` (the client gives it ``root`` in
    ``initialize``; the process starts in ``NEUTRAL_FOLDER``); its stderr is ours, or with
    ``hold_stderr`` a pipe that ``relay_stderr`` copies to ours once the server is known to
    be wanted (a server started before the settings were checked must not add its own error
    to ours).

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
        cwd=NEUTRAL_FOLDER,
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
