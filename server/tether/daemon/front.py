"""``tether run`` through the daemon: connect, hand over the terminal, wait for the exit
status. When no daemon runs, the run goes in-process and leaves one starting for the next
(``Cold``); when one is starting, the front waits for it.

Standard library only (and ``wire``): the front pays the interpreter's start and nothing
else. The run itself happens in the daemon's process for this connection, with this
process's cwd, environment and file descriptors 0–2 (passed with ``SCM_RIGHTS``), and our
controlling terminal when stdin is not it (a piped prompt): what the run prints goes straight
to our terminal, and an approval is answered on our terminal.
Ctrl-C reaches us (the terminal's foreground process) and is passed on as a message.

A daemon is started from a fixed context, not the starting run's: isolated (``-I``), in
the neutral folder, with ``daemon_environment`` — so no run chooses what the daemon imports
or keeps for the runs after it (each run's cwd and environment reach only its own fork).
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
from subprocess import Popen
from typing import IO, Any

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


DAEMON_VARIABLES = frozenset({"HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR"})
DAEMON_PREFIXES = ("LC_", "XDG_")
"""The variables a daemon is started with (with ``wire.IDLE_VARIABLE``): who and where the
user is (``HOME`` and ``XDG_*`` place the socket, as they did for the front), the locale
(the daemon's file-name encoding) and the temporary folder."""


def daemon_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """What a daemon starts with, whichever run starts it: the allow-listed variables and
    ``PATH`` the system's default (the daemon runs no program; each run brings its own
    ``PATH``). Nothing else of the starting run — not its ``PYTHONPATH`` or
    ``PYTHONSTARTUP`` (``-I`` ignores them anyway), not its settings, keys or proxies."""
    kept = {
        name: value
        for name, value in environ.items()
        if name in DAEMON_VARIABLES or name.startswith(DAEMON_PREFIXES)
    }
    if wire.IDLE_VARIABLE in environ:
        kept[wire.IDLE_VARIABLE] = environ[wire.IDLE_VARIABLE]
    return kept | {"PATH": os.defpath}


def daemon_command(path: Path, provider: str = "", lock_fd: int | None = None) -> list[str]:
    """How a daemon is started: Tether's own interpreter, isolated (``provider``: whose SDK
    it imports before it listens; ``lock_fd``: the start lock it holds until it listens)."""
    from ..client.spawn import own_python  # only when a daemon is started

    command = [*own_python(), "-m", "tether", "daemon", "serve", "--socket", str(path)]
    command += ["--preload", provider] if provider else []
    return [*command, "--lock-fd", str(lock_fd)] if lock_fd is not None else command


def start_lock(folder: Path) -> IO[str]:
    """The folder's start lock, opened: whoever holds it (``fcntl.flock``) is starting a
    daemon, and the daemon it starts holds it until it listens."""
    return open(_private(folder / "start.lock"), "a")


def _private(path: Path) -> int:
    """``path`` opened to append; made the user's alone (0600) when it is created."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)


def spawn(path: Path, environ: Mapping[str, str], provider: str, lock: IO[str]) -> Popen[bytes]:
    """A daemon for ``path``, in a session of its own, handed ``lock`` (held by the caller):
    from ``daemon_environment(environ)``, in the neutral folder."""
    from ..client.spawn import NEUTRAL_FOLDER

    log = open(_private(path.parent / "daemon.log"), "ab")  # noqa: SIM115 - handed to the child
    with log:
        return subprocess.Popen(
            daemon_command(path, provider, lock.fileno()),
            env=daemon_environment(environ),
            cwd=NEUTRAL_FOLDER,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,  # not in the terminal's process group: no Ctrl-C
            close_fds=True,
            pass_fds=(lock.fileno(),),
        )


def locked(lock: IO[str]) -> bool:
    """Take ``lock`` if nobody holds it (True: ours until the file is closed)."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def starting(folder: Path) -> bool:
    """Whether a daemon is starting here (its start lock is held)."""
    with start_lock(folder) as lock:
        return not locked(lock)  # closing the file releases it


def start(path: Path, environ: Mapping[str, str], provider: str = "") -> socket.socket:
    """Start a daemon at ``path`` (unless another front just did) and connect to it once it
    listens; ``DaemonError`` when it does not come up (``tether daemon start``)."""
    with start_lock(path.parent) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one front starts it; the others find it
        sock = connect(path)
        if sock is not None:
            return sock
        process = spawn(path, environ, provider, lock)
    return wait_for_start(path, process)


def wait_for_start(path: Path, process: Popen[bytes] | None = None) -> socket.socket:
    """A connection to the daemon starting at ``path`` (``process``, when we started it),
    once it listens; ``DaemonError`` when it exits first or does not come up in time."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        sock = connect(path)
        if sock is not None:
            return sock
        ended = process.poll() is not None if process else not starting(path.parent)
        if ended:
            sock = connect(path)  # it may have started listening just before it let go
            if sock is not None:
                return sock
            status = f" with status {process.returncode}" if process else ""
            raise DaemonError(f"the daemon exited{status}: {last_line(path.parent / 'daemon.log')}")
        time.sleep(0.01)  # waiting for another process's socket: nothing to wait on
    if process is not None:
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
        sock = start(path, environ, provider or wire.provider_of([], environ))
    return sock


class Cold:
    """No daemon runs or is starting: this run goes in-process, as without the daemon (a
    cold daemon would make it wait for every import in one process, where in-process the
    client and its server import side by side), and ``start`` leaves one starting for the
    next run, after this one (``tether run``) or while the user types (the chat)."""

    def __init__(self, path: Path, environ: Mapping[str, str], provider: str) -> None:
        self.path, self.environ, self.provider = path, environ, provider

    def start(self) -> None:
        """Spawn a daemon, without waiting for it; nothing when one listens or is starting."""
        with contextlib.suppress(OSError), start_lock(self.path.parent) as lock:
            if not locked(lock):
                return  # another front or daemon is starting one
            sock = connect(self.path)
            if sock is not None:
                sock.close()
                return
            spawn(self.path, self.environ, self.provider, lock)


def streams() -> list[list[str]]:
    """Our stdin, stdout and stderr's encoding and error handler, for the daemon's copies."""
    return [
        [getattr(s, "encoding", None) or "utf-8", getattr(s, "errors", None) or "strict"]
        for s in (sys.stdin, sys.stdout, sys.stderr)
    ]


def controlling_terminal() -> int | None:
    """Our controlling terminal, opened (``O_NOCTTY``), to hand the run when our stdin is
    not a terminal (a piped prompt): the run asks there, as in-process ``open_terminal``
    opens ``/dev/tty``. None: stdin is one (the run asks on it) or we have none."""
    with contextlib.suppress(OSError, ValueError):
        if sys.stdin.isatty():
            return None
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    if not os.isatty(fd):
        os.close(fd)
        return None
    return fd


def forward(argv: Sequence[str], environ: Mapping[str, str]) -> int | Cold | None:
    """Run ``tether`` ``argv`` in the daemon: its exit status; ``Cold`` when none runs or
    is starting (the caller runs in-process and starts one); None (after one line on stderr)
    when the daemon cannot be used, so the caller runs in-process instead."""
    provider = wire.provider_of(list(argv), environ)
    try:
        path = wire.socket_path(wire.socket_dir(environ), wire.fingerprint())
        sock = connect(path)
        if sock is None:
            if not starting(path.parent):
                return Cold(path, environ, provider)
            sock = wait_for_start(path)  # another run started one: it is nearly there
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
    terminal = controlling_terminal()
    handed = [0, 1, 2] if terminal is None else [0, 1, 2, terminal]
    with sock:
        try:
            frame = wire.encode(request)
            socket.send_fds(sock, [frame[: wire.HEADER.size]], handed)
            sock.sendall(frame[wire.HEADER.size :])
            answer = wire.receive(sock)
        except (DaemonError, OSError) as exc:
            print(f"tether: the daemon cannot be used ({exc}); running in-process", file=sys.stderr)
            return None
        finally:
            if terminal is not None:
                os.close(terminal)  # the run has its own copy
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
