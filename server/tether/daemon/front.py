"""``tether run`` through the daemon: connect (starting the daemon when absent), hand over
the terminal, wait for the exit status.

Standard library only (and ``wire``): the front pays the interpreter's start and nothing
else. The run itself happens in the daemon's process for this connection, with this
process's cwd, environment and file descriptors 0–2 (passed with ``SCM_RIGHTS``): what the
run prints goes straight to our terminal, and an approval is answered on our terminal.
Ctrl-C reaches us (the terminal's foreground process) and is passed on as a message.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import wire
from .wire import DaemonError

START_SECONDS = 30.0
"""How long a front waits for a daemon it started to accept connections."""
CONNECT_SECONDS = 5.0


def connect(path: Path) -> socket.socket | None:
    """A connection to the daemon at ``path``; None when none listens there (a socket left
    by a daemon that died is removed)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_SECONDS)
    try:
        sock.connect(str(path))
    except FileNotFoundError:
        sock.close()
        return None
    except ConnectionRefusedError:  # a dead daemon's socket
        sock.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return None
    except OSError:
        sock.close()
        raise
    sock.settimeout(None)
    return sock


def daemon_command(path: Path, provider: str = "") -> list[str]:
    """How a daemon is started (``provider``: whose SDK it imports before it listens)."""
    command = [sys.executable, "-m", "tether", "daemon", "serve", "--socket", str(path)]
    return [*command, "--preload", provider] if provider else command


def start(path: Path, environ: Mapping[str, str], provider: str = "") -> socket.socket:
    """Start a daemon at ``path`` (unless another front just did) and connect to it;
    ``DaemonError`` when it does not come up."""
    folder = path.parent
    with open(folder / "start.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one front starts it; the others find it
        sock = connect(path)
        if sock is not None:
            return sock
        log = open(folder / "daemon.log", "ab")  # noqa: SIM115 - handed to the child
        with log:
            process = subprocess.Popen(
                daemon_command(path, provider),
                env=dict(environ),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,  # not in the terminal's process group: no Ctrl-C
                close_fds=True,
            )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            sock = connect(path)
            if sock is not None:
                return sock
            if process.poll() is not None:
                raise DaemonError(
                    f"the daemon exited with status {process.returncode}: "
                    f"{last_line(folder / 'daemon.log')}"
                )
            time.sleep(0.01)  # waiting for another process's socket: nothing to wait on
        process.kill()
        raise DaemonError(f"the daemon did not start within {START_SECONDS:.0f} s")


def last_line(log: Path) -> str:
    """The last thing a daemon wrote to its log (why it exited)."""
    try:
        with log.open("rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - 2000))
            lines = handle.read().decode(errors="replace").strip().splitlines()
    except OSError:
        lines = []
    return lines[-1] if lines else f"see {log}"


def open_daemon(
    environ: Mapping[str, str], *, autostart: bool = True, provider: str = ""
) -> socket.socket | None:
    """A connection to this installation's daemon (started when absent and ``autostart``)."""
    path = wire.socket_path(wire.socket_dir(environ), wire.fingerprint())
    sock = connect(path)
    if sock is None and autostart:
        sock = start(path, environ, provider)
    return sock


def streams() -> list[list[str]]:
    """Our stdin, stdout and stderr's encoding and error handler, for the daemon's copies."""
    return [
        [getattr(s, "encoding", None) or "utf-8", getattr(s, "errors", None) or "strict"]
        for s in (sys.stdin, sys.stdout, sys.stderr)
    ]


def forward(argv: Sequence[str], environ: Mapping[str, str]) -> int | None:
    """Run ``tether`` ``argv`` in the daemon; its exit status, or None (after one line on
    stderr) when the daemon cannot be used, so the caller runs in-process instead."""
    try:
        sock = open_daemon(environ, provider=wire.provider_of(list(argv), environ))
        assert sock is not None
    except (DaemonError, OSError) as exc:
        print(f"tether: the daemon cannot be used ({exc}); running in-process", file=sys.stderr)
        return None
    request: dict[str, Any] = {
        "op": "run",
        "argv": list(argv),
        "cwd": os.getcwd(),
        "env": dict(environ),
        "streams": streams(),
    }
    with sock:
        try:
            frame = wire.encode(request)
            socket.send_fds(sock, [frame[: wire.HEADER.size]], [0, 1, 2])
            sock.sendall(frame[wire.HEADER.size :])
            answer = wire.receive(sock)
        except (DaemonError, OSError) as exc:
            print(f"tether: the daemon cannot be used ({exc}); running in-process", file=sys.stderr)
            return None
        if answer is None or "error" in answer:
            why = answer.get("error") if answer else "it closed the connection"
            print(
                f"tether: the daemon refused the run ({why}); running in-process", file=sys.stderr
            )
            return None
        return relay(sock)


RELAYED = {signal.SIGINT: "INT", signal.SIGWINCH: "WINCH"}
"""What the terminal signals to us (its foreground process), passed on to the run: Ctrl-C,
and a change of the window's size (the chat redraws its input line for it)."""


def relay(sock: socket.socket) -> int:
    """Pass Ctrl-C and window-size changes on until the run's exit status arrives."""

    def passed_on(signum: int, frame: object) -> None:
        with contextlib.suppress(OSError):
            wire.send(sock, {"signal": RELAYED[signal.Signals(signum)]})

    previous = {signum: signal.signal(signum, passed_on) for signum in RELAYED}
    try:
        while True:
            try:
                message = wire.receive(sock)
            except (DaemonError, OSError) as exc:
                if isinstance(exc, OSError) and exc.errno == errno.EINTR:
                    continue
                message = None
            if message is None:
                print("tether: the daemon's run ended without an exit status", file=sys.stderr)
                return 1
            status = message.get("exit")
            if isinstance(status, int):
                return status
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def control(op: str, environ: Mapping[str, str]) -> dict[str, Any] | None:
    """Ask this installation's daemon ``op`` (``status``, ``stop``); None: none runs."""
    sock = open_daemon(environ, autostart=False)
    if sock is None:
        return None
    with sock:
        sock.settimeout(CONNECT_SECONDS)
        wire.send(sock, {"op": op})
        return wire.receive(sock)
