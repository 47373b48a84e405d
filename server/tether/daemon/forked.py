"""A ``tether serve`` forked from a daemon's run process instead of a new interpreter.

Forked before the run's event loop starts (``cli.run.run``), in ``client.spawn``'s neutral
folder and a process session of its own as ``client.spawn`` starts one (the workspace comes
in ``initialize``); stdin/stdout are one end of a socket pair, stderr another (held back as
``spawn_server(hold_stderr=True)`` holds it). Its import path is the daemon's: isolated.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Sequence

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process, SocketStream

from ..client.spawn import NEUTRAL_FOLDER, SERVER_LOG_LEVEL, serve_environment

ServeMain = Callable[[str], int]
"""``tether serve`` at a log level, in this process (``cli.serve.serve``, handed in)."""


class ForkedServer(Process):
    """``anyio.abc.Process`` over a forked server's pid and socket pairs."""

    def __init__(self, pid: int, stdio: SocketStream, stderr: SocketStream) -> None:
        self._pid = pid
        self._stdio = stdio
        self._stderr = stderr
        self._returncode: int | None = None

    def _reaped(self, status: int) -> int:
        self._returncode = os.waitstatus_to_exitcode(status)
        return self._returncode

    async def wait(self) -> int:
        if self._returncode is not None:
            return self._returncode
        try:
            _, status = await anyio.to_thread.run_sync(
                os.waitpid, self._pid, 0, abandon_on_cancel=True
            )
        except ChildProcessError:  # reaped by the ``returncode`` check meanwhile
            return self._returncode if self._returncode is not None else -1
        return self._reaped(status)

    def send_signal(self, signal: int) -> None:
        if self._returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        if self._returncode is None:
            with contextlib.suppress(ChildProcessError):
                done, status = os.waitpid(self._pid, os.WNOHANG)
                if done:
                    self._reaped(status)
        return self._returncode

    @property
    def stdin(self) -> ByteSendStream | None:
        return self._stdio

    @property
    def stdout(self) -> ByteReceiveStream | None:
        return self._stdio

    @property
    def stderr(self) -> ByteReceiveStream | None:
        return self._stderr

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._stdio.aclose()
            await self._stderr.aclose()
            await self.wait()


def standard_streams() -> None:
    """``sys.stdin``, ``sys.stdout`` and ``sys.stderr`` anew over descriptors 0–2, in a fork
    that has just put its own there (its parent's objects buffer for the parent's files)."""
    sys.stdin = io.TextIOWrapper(open(0, "rb", closefd=False))  # noqa: SIM115
    sys.stdout = io.TextIOWrapper(open(1, "wb", closefd=False), write_through=True)  # noqa: SIM115
    sys.stderr = io.TextIOWrapper(
        open(2, "wb", closefd=False),  # noqa: SIM115
        errors="backslashreplace",
        write_through=True,
    )


def fork_server(serve_main: ServeMain, closes: Sequence[int]) -> Callable[[], Awaitable[Process]]:
    """Fork the server now; the returned coroutine function wraps it once a loop runs."""
    ours, theirs = socket.socketpair()
    err_ours, err_theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.setsid()
            os.environ.update(serve_environment(os.environ))  # before the run's folder is left
            os.chdir(NEUTRAL_FOLDER)
            os.dup2(theirs.fileno(), 0)
            os.dup2(theirs.fileno(), 1)
            os.dup2(err_theirs.fileno(), 2)
            for sock in (ours, theirs, err_ours, err_theirs):
                sock.close()
            for fd in closes:
                with contextlib.suppress(OSError):
                    os.close(fd)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            standard_streams()
            status = serve_main(SERVER_LOG_LEVEL["level"])
        finally:
            os._exit(status)
    theirs.close()
    err_theirs.close()

    async def wrap() -> Process:
        stdio = await SocketStream.from_socket(ours)
        stderr = await SocketStream.from_socket(err_ours)
        return ForkedServer(pid, stdio, stderr)

    return wrap


def install(serve_main: ServeMain, closes: Sequence[int]) -> None:
    """In a run's process: ``client.spawn`` forks its server with ``serve_main``."""
    from ..client import spawn

    def prefork() -> Callable[[], Awaitable[Process]]:
        return fork_server(serve_main, closes)

    spawn.FORK_SERVER = prefork
