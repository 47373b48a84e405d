"""The daemon: accept a connection from this user, fork, and run ``tether run`` in the fork
exactly as the front would have run it in-process.

The daemon process only imports (the client, the server, the configured provider's SDK)
and accepts; it keeps no settings, approvals or environment. Each connection gets a process
of its own (a fork: the imports are already done) that takes the connection's cwd,
environment and terminal (file descriptors 0–2, passed with ``SCM_RIGHTS``, and the front's
controlling terminal as a fourth when its stdin is not one: a piped prompt) and calls the
same ``cli`` code a ``tether run`` calls; its ``tether serve`` is a fork too, started by
``client.spawn`` in place of a new interpreter. So nothing crosses between connections: what
one run sets or approves dies with its processes, and commands run through ``tools/shell.py``
with the client's environment and cwd.

Connections are read side by side (``inbox``): a request is handled once it is whole, and a
client that sends it slowly holds up no other. Refused, with the daemon serving on: a peer
of another uid (``SO_PEERCRED``), a message over ``wire.MAX_FRAME_BYTES``, one that is not
JSON or not of a known shape, one not whole within ``inbox.MESSAGE_SECONDS``.

The daemon itself is started isolated, in the neutral folder, with an allow-listed
environment (``front.spawn``): what it imports and keeps is the same whichever run started
it.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import logging
import os
import selectors
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from . import wire
from .inbox import Incoming, Refused, answer
from .wire import DaemonError

logger = logging.getLogger(__name__)

WAITING_CONNECTIONS = 64
"""The most connections whose request is still arriving; one more is closed unanswered."""
ORPHAN_SECONDS = 5.0
"""How long a run whose front went away has to stop before its process is ended."""
OPS = frozenset({"run", "status", "stop"})
RUN_KEYS = frozenset({"op", "argv", "cwd", "env", "streams"})

ServeMain = Callable[[str], int]
"""``tether serve`` at a log level, in this process (``cli.serve.serve``, handed in)."""
RunMain = Callable[[list[str]], int]
"""``tether`` with these arguments, in this process (``cli.daemon_main``, handed in)."""


def peer_uid(conn: socket.socket) -> int:
    """The connected process's uid (``SO_PEERCRED``: set by the kernel, not the peer)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


def check_run(message: Mapping[str, Any]) -> tuple[list[str], str, dict[str, str], list[list[str]]]:
    """A run request's parts; ``DaemonError`` naming what is wrong."""
    unknown = set(message) - RUN_KEYS
    if unknown:
        raise DaemonError(f"unknown field(s): {', '.join(sorted(unknown))}")
    argv, cwd, env, streams = (message.get(k) for k in ("argv", "cwd", "env", "streams"))
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise DaemonError("argv: expected a list of strings")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise DaemonError("cwd: expected an absolute path")
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and "=" not in k and "\0" not in k + v
        for k, v in env.items()
    ):
        raise DaemonError("env: expected an object of strings")
    if (
        not isinstance(streams, list)
        or len(streams) != wire.STREAMS
        or not all(
            isinstance(s, list) and len(s) == 2 and all(isinstance(p, str) for p in s)
            for s in streams
        )
    ):
        raise DaemonError("streams: expected three [encoding, errors] pairs")
    for encoding, errors in streams:
        try:
            codecs.lookup(encoding)
            codecs.lookup_error(errors)
        except LookupError:
            raise DaemonError(f"streams: unknown encoding {encoding!r} or {errors!r}") from None
    return argv, cwd, env, streams


class Daemon:
    """The accept loop (one thread, no event loop: it forks)."""

    def __init__(self, path: Path, idle: float, run_main: RunMain, serve_main: ServeMain) -> None:
        self.path = path
        self.idle = idle
        self.run_main = run_main
        self.serve_main = serve_main
        self.children: set[int] = set()
        self.accepting = True
        self.started = time.time()
        self.served = 0
        """Runs forked since the daemon started."""
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.inode = 0
        self.waiting: dict[socket.socket, Incoming | Refused] = {}
        """Connections whose request is still arriving, or refused and draining."""
        self.selector: selectors.BaseSelector = selectors.DefaultSelector()
        self.wake: tuple[int, ...] = ()

    def bind(self) -> None:
        """Listen at ``path`` (its folder was checked private by the front; checked again).

        Bound and listening under a temporary name first, then renamed into place: a front
        that finds the socket refusing connections takes it for a dead daemon's."""
        wire.check_private(self.path.parent, os.lstat(self.path.parent))
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        old = os.umask(0o177)
        try:
            self.listener.bind(str(temporary))
        finally:
            os.umask(old)
        self.listener.listen(16)
        self.inode = os.stat(temporary).st_ino
        os.rename(temporary, self.path)  # replaces a dead daemon's socket, if any

    def retire_others(self) -> None:
        """Ask the daemons of other installations here to exit once their runs end."""
        for other in self.path.parent.glob(f"{wire.SOCKET_PREFIX}*.sock"):
            if other == self.path:
                continue
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(2.0)
            try:
                sock.connect(str(other))
                wire.send(sock, {"op": "stop"})
                wire.receive(sock)
            except ConnectionRefusedError:
                with contextlib.suppress(OSError):
                    other.unlink()
            except (OSError, DaemonError):
                pass
            finally:
                sock.close()

    def stop_accepting(self) -> None:
        if not self.accepting:
            return
        self.accepting = False
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self.inode:  # not a newer daemon's socket
                os.unlink(self.path)
        self.listener.close()

    def reap(self) -> None:
        for pid in list(self.children):
            with contextlib.suppress(ChildProcessError):
                done, _ = os.waitpid(pid, os.WNOHANG)
                if done == 0:
                    continue
            self.children.discard(pid)

    def serve(self) -> int:
        """Accept until stopped, or idle for ``idle`` seconds; then wait for the runs."""
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        self.wake = (wake_r, wake_w)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: self.stop_accepting())
        selector = self.selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ, "accept")
        selector.register(wake_r, selectors.EVENT_READ, "wake")
        last = time.monotonic()
        while True:
            self.reap()
            if not self.accepting and not self.children and not self.waiting:
                break  # stopped, and the last run in flight has ended
            if self.children or self.waiting:
                last = time.monotonic()
            timeout = self.idle - (time.monotonic() - last)
            if self.accepting and not self.children and timeout <= 0:
                break
            if self.waiting:  # the next deadline of a request still arriving
                soonest = min(w.deadline for w in self.waiting.values()) - time.monotonic()
                timeout = min(timeout, soonest)
            for key, _ in selector.select(max(timeout, 0.0)):
                if key.data == "wake":
                    with contextlib.suppress(BlockingIOError):
                        os.read(wake_r, 512)
                elif key.data == "accept":
                    if self.accepting:
                        with contextlib.suppress(OSError):
                            conn, _ = self.listener.accept()
                            self.accept(conn)
                        last = time.monotonic()
                elif isinstance(key.fileobj, socket.socket):
                    self.progress(key.fileobj)
            self.expire()
            if not self.accepting:
                with contextlib.suppress(KeyError, ValueError):
                    selector.unregister(self.listener)
        self.stop_accepting()
        return 0

    def accept(self, conn: socket.socket) -> None:
        """A new connection: refused unanswered if of another uid, else read as it comes."""
        if peer_uid(conn) != os.getuid():
            logger.warning("refused a connection from uid %s", peer_uid(conn))
            conn.close()  # not even an answer
            return
        if len(self.waiting) >= WAITING_CONNECTIONS:
            logger.warning("refused a connection: %d are still sending", WAITING_CONNECTIONS)
            conn.close()
            return
        self.waiting[conn] = Incoming(conn, time.monotonic())
        self.selector.register(conn, selectors.EVENT_READ, "conn")

    def progress(self, conn: socket.socket) -> None:
        """Read what a waiting connection sent; handle its request once it is whole."""
        waiting = self.waiting.get(conn)
        if isinstance(waiting, Refused):
            if waiting.read():
                self.drop(conn)
            return
        if waiting is None:
            return
        try:
            message = waiting.read()
        except (DaemonError, OSError, ValueError) as exc:
            self.refuse(conn, str(exc))
            return
        if message is not None:
            self.drop(conn, close=False)
            self.handle(conn, message, waiting.fds)

    def expire(self) -> None:
        """Refuse the requests not whole by their deadline; close refused connections whose
        draining time is over."""
        now = time.monotonic()
        for conn, waiting in list(self.waiting.items()):
            if waiting.deadline > now:
                continue
            if isinstance(waiting, Refused):
                self.drop(conn)
            else:
                waiting.close_fds()
                self.refuse(conn, waiting.late())

    def refuse(self, conn: socket.socket, why: str) -> None:
        """Say why, then drop what the client still sends (briefly) before closing."""
        self.waiting[conn] = Refused(conn, why, time.monotonic())
        with contextlib.suppress(KeyError, ValueError):  # KeyError: registered already
            self.selector.register(conn, selectors.EVENT_READ, "conn")

    def drop(self, conn: socket.socket, *, close: bool = True) -> None:
        """Forget a waiting connection (closed unless ``close`` is False)."""
        self.waiting.pop(conn, None)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(conn)
        if close:
            conn.close()

    def handle(self, conn: socket.socket, message: dict[str, Any], fds: list[int]) -> None:
        """A whole request: refused, answered, or forked off to run."""
        try:
            op = message.get("op")
            if op not in OPS:
                raise DaemonError(f"unknown op {str(op)[:50]!r}")
            if op != "run":
                if fds:
                    raise DaemonError(f"{op}: no file descriptors expected")
                if set(message) != {"op"}:
                    raise DaemonError(f"{op}: no other field expected")
                with conn, contextlib.suppress(OSError, DaemonError):
                    answer(conn, self.answer(op))
                return
            if len(fds) not in (wire.STREAMS, wire.MAX_DESCRIPTORS):
                raise DaemonError(
                    "run: expected stdin, stdout and stderr, and optionally the terminal"
                )
            if len(fds) == wire.MAX_DESCRIPTORS and not os.isatty(fds[wire.STREAMS]):
                raise DaemonError("run: the fourth file descriptor is not a terminal")
            request = check_run(message)
        except DaemonError as exc:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self.refuse(conn, str(exc))
            return
        with conn:
            pid = os.fork()
            if pid == 0:  # the run's own process: never returns
                status = 1
                try:
                    status = self.child(conn, fds, *request)
                finally:
                    os._exit(status)
            self.children.add(pid)
            self.served += 1
            for fd in fds:
                os.close(fd)
        # A provider whose SDK is not loaded yet: primed now (after the fork, so this run
        # does not wait for it; the requests arriving meanwhile wait, once), for the runs
        # after it.
        preload_sdk(wire.provider_of(request[0], request[2]))

    def forget_the_daemon(self, conn: socket.socket) -> None:
        """In a run's process: close what belongs to the daemon (its socket, its loop, the
        other connections), so that none stays open because this process holds a copy."""
        with contextlib.suppress(OSError):
            self.listener.close()
        for fd in self.wake:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.selector.close()  # closes the loop's descriptor, changes nothing of the daemon's
        for other, waiting in list(self.waiting.items()):
            if other is not conn:
                other.close()
                if isinstance(waiting, Incoming):
                    waiting.close_fds()  # another run's streams and terminal: not ours
        self.waiting.clear()

    def answer(self, op: str) -> dict[str, Any]:
        if op == "stop":
            self.stop_accepting()
            return {"stopping": True, "runs": len(self.children)}
        return {
            "pid": os.getpid(),
            "socket": str(self.path),
            "runs": len(self.children),
            "served": self.served,
            "since": self.started,
            "idleSeconds": self.idle,
        }

    def child(
        self,
        conn: socket.socket,
        fds: list[int],
        argv: list[str],
        cwd: str,
        env: dict[str, str],
        streams: list[list[str]],
    ) -> int:
        """The run's process: take the connection's world (its streams become 0–2; a
        fourth descriptor, the front's terminal, is where ``client.terminal.open_terminal``
        asks in this process only), run, report the status."""
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.forget_the_daemon(conn)
        conn.settimeout(None)
        try:
            os.chdir(cwd)
        except OSError as exc:
            wire.send(conn, {"error": f"cwd {cwd}: {exc.strerror or exc}"})
            return 2
        os.environ.clear()
        os.environ.update(env)
        for target, fd in enumerate(fds[: wire.STREAMS]):
            os.dup2(fd, target)
            os.close(fd)
        handed = fds[wire.STREAMS :]  # the front's terminal, when it handed one
        for fd in handed:
            os.set_inheritable(fd, False)  # for the approvals here, no command's
            from ..client import terminal

            terminal.HANDED = fd
        sys.stdin, sys.stdout, sys.stderr = (
            io.TextIOWrapper(
                open(n, "rb" if n == 0 else "wb", closefd=False),  # noqa: SIM115
                encoding=encoding,
                errors=errors,
                line_buffering=os.isatty(n),
                write_through=n == 2,
            )
            for n, (encoding, errors) in enumerate(streams)
        )
        from .forked import install

        install(self.serve_main, [conn.fileno(), *handed])
        wire.send(conn, {"started": os.getpid()})
        threading.Thread(target=watch, args=(conn,), daemon=True).start()
        try:
            status = self.run_main(argv)
        except SystemExit as exc:  # argparse
            status = exc.code if isinstance(exc.code, int) else 2
        except KeyboardInterrupt:
            status = 130
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        with contextlib.suppress(OSError):
            wire.send(conn, {"exit": status})
        return status


def watch(conn: socket.socket) -> None:
    """The front's messages: Ctrl-C and window-size changes become ours; its end (killed,
    closed) cancels the run, and ends this process if the run does not stop in time."""
    while True:
        try:
            message = wire.receive(conn)
        except (DaemonError, OSError):
            message = None
        if message is None:
            os.kill(os.getpid(), signal.SIGINT)
            timer = threading.Timer(ORPHAN_SECONDS, os._exit, args=(130,))
            timer.daemon = True
            timer.start()
            return
        named = {"INT": signal.SIGINT, "WINCH": signal.SIGWINCH}.get(str(message.get("signal")))
        if named is not None:
            os.kill(os.getpid(), named)


def preload_sdk(provider: str) -> None:
    """Prime ``provider``'s SDK (``providers.prime``: imported, one canned request made in
    the process; nothing for an unknown name or the scripted one; once per provider). For
    ``openai``, both of its APIs: each run's own settings (``--base-url``, ``openaiApi``)
    choose one, and a run forked unprimed would build the Responses events anew."""
    from ..providers import RESPONSES, prime

    with contextlib.suppress(Exception):  # the run says what is wrong, as in-process
        prime(provider)
        if provider == "openai":
            prime(RESPONSES)


def serve_daemon(
    path: Path,
    environ: Mapping[str, str],
    run_main: RunMain,
    serve_main: ServeMain,
    preload: Callable[[], None],
    lock_fd: int | None = None,
) -> int:
    """``tether daemon serve``: load what a run needs (``preload``, the command line's, and
    the SDK of the provider ``environ`` names, primed), listen at ``path``, retire older
    daemons, serve. No run waits for the loading (``daemon.front.Cold``: the run that found
    no daemon went in-process) but one that arrives while the daemon starts.
    ``lock_fd``: the folder's start lock, held until then (fronts that find it held wait
    for this daemon instead of starting another; if it exits first, they find it free)."""
    try:
        idle = wire.idle_seconds(environ)
        preload()
        preload_sdk(environ.get("TETHER_PROVIDER", ""))
        daemon = Daemon(path, idle, run_main, serve_main)
        daemon.bind()
    except (DaemonError, OSError) as exc:
        print(f"tether: daemon: {exc}", file=sys.stderr)
        return 2
    daemon.retire_others()
    if lock_fd is not None:
        with contextlib.suppress(OSError):
            os.close(lock_fd)
    return daemon.serve()
