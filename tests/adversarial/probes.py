"""Probes of the sandbox from outside it: listeners a sandboxed command must not reach,
and the processes a command must not leave behind. Shared by the adversarial tests."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

OUTSIDE = "/var/tmp"
"""A folder outside the workspace that every backend leaves visible (``/tmp`` is
private in the sandbox, so a socket there would prove nothing)."""


@dataclass
class Listener:
    """A unix socket outside the workspace, listening; ``address`` is what a client
    connects to (a path, or ``\\0name`` in the abstract namespace)."""

    sock: socket.socket
    address: str
    kind: str

    def reached(self) -> bool:
        """Whether anything connected or sent data (non-blocking: what is queued now)."""
        try:
            if self.sock.type == socket.SOCK_STREAM:
                conn, _ = self.sock.accept()
                conn.close()
            else:
                self.sock.recv(64)
        except BlockingIOError:
            return False
        return True


@contextlib.contextmanager
def unix_listener(kind: str) -> Iterator[Listener]:
    """``stream`` or ``dgram`` on a path outside the workspace (the Docker socket, the
    D-Bus bus, syslog), or ``abstract`` (a name in the abstract namespace, as the X11
    and some D-Bus buses use)."""
    with tempfile.TemporaryDirectory(dir=OUTSIDE, prefix="tether-sock-") as folder:
        stype = socket.SOCK_DGRAM if kind == "dgram" else socket.SOCK_STREAM
        sock = socket.socket(socket.AF_UNIX, stype)
        try:
            if kind == "abstract":
                address = f"\0tether-test-{uuid.uuid4().hex}"
            else:
                address = str(Path(folder) / "listener.sock")
            sock.bind(address)
            if stype == socket.SOCK_STREAM:
                sock.listen(8)
            sock.setblocking(False)
            yield Listener(sock, address, kind)
        finally:
            sock.close()


def client_command(listener: Listener) -> str:
    """A command that connects to ``listener`` and sends ``leak``; exit 0 only if it did."""
    address = repr(listener.address)
    if listener.kind == "dgram":
        body = (
            "import socket\n"
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
            f"s.sendto(b'leak', {address})\n"
        )
    else:
        body = (
            "import socket\n"
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            f"s.connect({address})\n"
            "s.sendall(b'leak')\n"
        )
    return f"python3 -c {shlex_quote(body)}"


def pair_sendto_command(listener: Listener) -> str:
    """A datagram ``socketpair`` (created without an address) that ``sendto``s a path."""
    body = (
        "import socket\n"
        "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
        f"a.sendto(b'leak', {listener.address!r})\n"
    )
    return f"python3 -c {shlex_quote(body)}"


def shlex_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def mark() -> str:
    """A ``sleep`` duration no other test uses, to find the processes by command line."""
    return f"300.{uuid.uuid4().int % 10**9:09d}"


def processes_with(marker: str) -> list[int]:
    """Live (not zombie) processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def kill_all_with(marker: str) -> None:
    """The safety net: kill what a failed test left running."""
    for pid in processes_with(marker):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
