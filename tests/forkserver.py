"""A test worker's fork server: ``tether serve`` and ``tether acp`` forked from a process that
has already imported them, in place of a new interpreter per test.

Half of the suite's CPU went to starting real servers (~700 of them, 0.8 s each, most of it
imports). The product's daemon forks ``tether run`` and its server the same way
(``tether.daemon``); here each pytest worker starts one fork server (``start``) that imports
what the two commands import, then forks one process per test. A test still starts a
command (``command``): a small launcher (``forklaunch.py``, no site, no imports to speak of)
hands the fork server its stdin, stdout and stderr, arguments, environment and folder, and
waits: signals sent to it reach the server, and it exits with the server's status. So the
test talks to a real server over its real stdio, and only the interpreter's start is shared.

In a fork, ``tether run`` and the chat fork their server too, as the daemon's runs do. The
tests of the start itself (the lean start, ``-I``, what is imported, process isolation, exit
and clean-up of the process tree, the daemon) start a real interpreter (``SERVE`` in
``e2e/conftest.py``, ``TETHER_EXEC`` in ``e2e/cli.py``). ``TETHER_TEST_FORK=0`` turns the
fork server off for a whole run.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import selectors
import shlex
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

LAUNCHER = Path(__file__).with_name("forklaunch.py")
ENABLED = os.environ.get("TETHER_TEST_FORK", "1") != "0"
_HEADER = struct.Struct("!I")


def _runtime() -> Path:
    """The suite's runtime folder (``tests/conftest.py``)."""
    return Path(os.environ.get("XDG_RUNTIME_DIR", "/tmp"))


def socket_path() -> Path:
    """This worker's fork server's socket."""
    return _runtime() / f"fork-{os.getpid()}.sock"


def _noted(launcher: int) -> Path:
    return _runtime() / "forks" / str(launcher)


def tether_pid(pid: int) -> int:
    """The pid of the Tether process a test started as ``pid`` (its fork, when forked)."""
    return served_pid(pid) or pid


def served_pid(pid: int) -> int | None:
    """The fork serving the launcher ``pid`` while it runs (None: ``pid`` is no launcher, or
    its fork has ended): a test that looks at a server's process tree starts from it."""
    try:
        return int(_noted(pid).read_text())
    except (FileNotFoundError, ValueError):
        return None


def command(*args: str) -> list[str]:
    """``tether`` ``args`` through this worker's fork server."""
    if not ENABLED:
        return [sys.executable, "-m", "tether", *args]
    return [sys.executable, "-I", "-S", str(LAUNCHER), str(socket_path()), *args]


def program(installed: Path) -> Path:
    """A ``tether`` program for an editor to start (``installed`` when forks are off): a
    script that runs ``command``."""
    if not ENABLED:
        return installed
    script = socket_path().with_suffix(".sh")
    if not script.exists():
        temp = script.with_name(script.name + ".new")
        temp.write_text(f'#!/bin/sh\nexec {shlex.join(command())} "$@"\n')
        temp.chmod(0o700)
        temp.replace(script)
    return script


def start() -> subprocess.Popen[bytes] | None:
    """Start this worker's fork server. Its socket listens from now on (a launcher that
    connects while it imports is answered once it is done); it ends when its stdin closes:
    with the worker."""
    if not ENABLED:
        return None
    path = socket_path()
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen(64)
        return subprocess.Popen(
            [sys.executable, str(Path(__file__)), str(path), str(listener.fileno())],
            stdin=subprocess.PIPE,
            cwd="/",
            pass_fds=(listener.fileno(),),
        )


def stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None:
        return
    assert process.stdin is not None
    process.stdin.close()  # it kills its forks and ends
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
    with contextlib.suppress(FileNotFoundError):
        socket_path().unlink()


# The fork server itself (run as a script by ``start``).


def _preload() -> None:
    """What ``tether serve``, ``tether acp`` and their providers import."""
    import anthropic  # noqa: F401
    import openai  # noqa: F401

    import tether.acp.server
    import tether.cli.serve  # noqa: F401
    from tether.cli.daemon import preload

    preload()


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    """A launcher's request: JSON after its length, and its three descriptors."""
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < _HEADER.size or len(data) < _HEADER.size + _HEADER.unpack_from(data)[0]:
        more = conn.recv(1 << 16)
        if not more:
            raise EOFError("the launcher went away mid-request")
        data += more
    (size,) = _HEADER.unpack_from(data)
    request = json.loads(data[_HEADER.size : _HEADER.size + size])
    if len(fds) != 3:
        raise EOFError("the launcher sent no stdio")
    return request, fds


def _child(request: dict[str, object], fds: list[int], note: Path) -> Callable[[], int]:
    """In the fork: become the launcher's process (its stdio, folder, environment, process
    group, or a session of its own when the launcher leads one: ``start_new_session``),
    then note its pid (``served_pid``: a test that finds the fork finds it set up); the
    command, to run once the fork server's frames are left."""
    signal.set_wakeup_fd(-1)
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    pgid = request.get("pgid")
    if request.get("leader"):
        os.setsid()
    elif isinstance(pgid, int):
        with contextlib.suppress(OSError):
            os.setpgid(0, pgid)
    note.parent.mkdir(exist_ok=True)
    note.write_text(str(os.getpid()))
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    os.chdir(str(request["cwd"]))
    env, args = request["env"], request["args"]
    assert isinstance(env, dict) and isinstance(args, list)
    os.environ.clear()
    os.environ.update(env)
    import tether

    sys.argv = [str(Path(tether.__file__).with_name("__main__.py")), *args]

    def run() -> int:
        from tether.cli import main
        from tether.cli.serve import serve
        from tether.daemon.forked import install, standard_streams

        standard_streams()
        # ``tether run`` forks its server too (as the daemon's runs do: ``daemon.forked``)
        # instead of starting an interpreter for it.
        install(serve, ())
        return main(args)

    return run


def _kill(pid: int) -> None:
    """A fork and, when it leads its own process group, the group (what it started)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def peer_pid(conn: socket.socket) -> int:
    """The connected launcher's pid (``SO_PEERCRED``)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[0])


class _Forks:
    """The accept loop: one fork per launcher; a fork's status goes back to its launcher,
    and a launcher that goes away takes its fork with it."""

    def __init__(self, path: Path, listener: int) -> None:
        self.path = path
        self.listener = socket.socket(fileno=listener)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "parent")
        wake_read, wake_write = socket.socketpair()
        wake_read.setblocking(False)
        wake_write.setblocking(False)
        self.wake = (wake_read, wake_write)
        signal.set_wakeup_fd(wake_write.fileno())
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: None)
        self.selector.register(wake_read, selectors.EVENT_READ, "wake")
        self.forks: dict[int, tuple[socket.socket, Path]] = {}
        """Live forks: their launchers' connections and where their pid is noted."""
        self.launchers: dict[socket.socket, int] = {}

    def serve(self) -> Callable[[], int]:
        """Loop until the worker goes away (then end every fork); in a fork, its command."""
        while True:
            for key, _ in self.selector.select():
                what = key.data
                if what == "accept":
                    found = self._accept()
                    if found is not None:
                        return found
                elif what == "wake":
                    with contextlib.suppress(BlockingIOError):
                        data = self.wake[0].recv(4096)
                        if signal.SIGTERM in data:
                            self._end()
                    self._reap()
                elif what == "parent":
                    if not os.read(sys.stdin.fileno(), 4096):
                        self._end()
                else:  # a launcher's connection: it only ever closes
                    assert isinstance(key.fileobj, socket.socket)
                    self._gone(key.fileobj)

    def _accept(self) -> Callable[[], int] | None:
        conn, _ = self.listener.accept()
        try:
            launcher = peer_pid(conn)
            request, fds = _receive(conn)
        except (OSError, EOFError, ValueError) as exc:
            print(f"fork server: a bad request: {exc}", file=sys.stderr)
            conn.close()
            return None
        note = _noted(launcher)
        pid = os.fork()
        if pid == 0:
            self._forget(conn)
            return _child(request, fds, note)
        for fd in fds:
            os.close(fd)
        self.forks[pid] = (conn, note)
        self.launchers[conn] = pid
        try:
            conn.sendall(_HEADER.pack(pid))
        except OSError:
            self._gone(conn)
            return None
        self.selector.register(conn, selectors.EVENT_READ, "launcher")
        return None

    def _forget(self, conn: socket.socket) -> None:
        """In a fork: let go of the fork server's sockets without closing them here (the
        fork closes every descriptor it does not need; a socket object collected later
        would close whatever file took its number)."""
        self.selector.close()
        for sock in (self.listener, *self.wake, *self.launchers, conn):
            sock.detach()
        self.forks.clear()
        self.launchers.clear()

    def _reap(self) -> None:
        while self.forks:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            found = self.forks.pop(pid, None)
            if found is None:
                continue
            conn, note = found
            with contextlib.suppress(FileNotFoundError):
                note.unlink()
            self.launchers.pop(conn, None)
            with contextlib.suppress(OSError):
                conn.sendall(_HEADER.pack(status))
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(conn)
            conn.close()

    def _gone(self, conn: socket.socket) -> None:
        """The launcher was killed: so is its fork (its status is reaped as usual)."""
        pid = self.launchers.pop(conn, None)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(conn)
        if pid is not None:
            _kill(pid)

    def _end(self) -> None:
        for pid in list(self.forks):
            _kill(pid)
        for pid in list(self.forks):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        os._exit(0)


def main(path: str, listener: str) -> int:
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent]
    _preload()
    gc.collect()
    gc.freeze()  # the forks share the imports' pages instead of copying them on a collection
    command = _Forks(Path(path), int(listener)).serve()
    return command()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2]))
