"""What a process blocked in an event loop's wait waits to read: ``epoll``, ``poll``,
``select``.

``tools/input_wait.py`` sees a command ask when one of its processes is blocked reading its
terminal. A program with an event loop (Node's ``readline``, Python's ``asyncio``, a
``select`` on stdin) does not block in a ``read``: it waits for its descriptors to become
readable, then reads. This module tells, from ``/proc`` alone, which descriptors such a wait
is for:

- ``epoll_wait``, ``epoll_pwait``, ``epoll_pwait2``: the epoll descriptor is the call's first
  argument (``/proc/PID/task/TID/syscall``), and its interest set is listed in
  ``/proc/PID/fdinfo/EPFD``, a ``tfd:`` line per descriptor with the events it waits for;
- ``poll``, ``ppoll``: the ``pollfd`` array the call was given, read from
  ``/proc/PID/mem`` (readable where the call itself is: the same ptrace permission);
- ``select``, ``pselect6``: its read set, the same way.

Only descriptors waited on for reading count. Such a wait while a process of the command
holds a listening socket (``/proc/PID/net/tcp``, ``tcp6``, ``unix``) is a server's: a dev
server that takes keys on its input (Vite's ``h + enter``), a watcher whose child serves
(nodemon's ``rs``) serve, they are not asking. Memory is read only from a
process of the command's own tree, only the few bytes the call names, never written.
"""

from __future__ import annotations

import contextlib
import os
import platform
import struct
from functools import cache

__all__ = ["event_wait_fds", "serving"]

_EPOLL = {"x86_64": frozenset({232, 281, 441}), "aarch64": frozenset({22, 441})}
_POLL = {"x86_64": frozenset({7, 271}), "aarch64": frozenset({73})}
_SELECT = {"x86_64": frozenset({23, 270}), "aarch64": frozenset({72})}
_EPOLLIN = 0x001
_POLLIN = 0x001
MAX_FDS = 4096
"""The most descriptors of one ``poll`` or ``select`` looked at (what is read of its memory
stays a few kilobytes)."""
_LISTEN_TCP = "0A"
_ACCEPTING_UNIX = 0x00010000  # __SO_ACCEPTCON


@cache
def _calls() -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
    machine = platform.machine()
    empty: frozenset[int] = frozenset()
    return _EPOLL.get(machine, empty), _POLL.get(machine, empty), _SELECT.get(machine, empty)


def event_wait_fds(pid: int, number: int, args: list[int]) -> list[int] | None:
    """The descriptors a task of ``pid`` blocked in system call ``number`` (with its
    arguments ``args``) waits to read; None when the call is no event loop's wait or
    what it waits on cannot be read."""
    epoll, poll, select = _calls()
    try:
        if number in epoll:
            return _epoll_fds(pid, args[0])
        if number in poll:
            return _poll_fds(pid, args[0], args[1])
        if number in select:
            return _select_fds(pid, args[0], args[1])
    except (OSError, ValueError, IndexError, struct.error):
        return None
    return None


def _epoll_fds(pid: int, epfd: int) -> list[int]:
    """The descriptors in the interest set of ``pid``'s epoll ``epfd`` waited on to read."""
    with open(f"/proc/{pid}/fdinfo/{epfd}") as f:
        lines = f.read().splitlines()
    fds = []
    for line in lines:
        parts = line.split()  # tfd: N events: HEX data: HEX pos:N ino:HEX sdev:HEX
        tfd = len(parts) >= 4 and parts[0] == "tfd:" and parts[2] == "events:"
        if tfd and int(parts[3], 16) & _EPOLLIN:
            fds.append(int(parts[1]))
    return fds


def _memory(pid: int, address: int, size: int) -> bytes:
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as f:
        f.seek(address)
        data = f.read(size)
    if len(data) != size:
        raise ValueError("short read")
    return data


def _poll_fds(pid: int, address: int, count: int) -> list[int]:
    """The descriptors of a ``pollfd`` array of ``count`` entries waited on to read."""
    count = min(count, MAX_FDS)
    if count <= 0 or address == 0:
        return []
    data = _memory(pid, address, count * 8)
    return [
        fd for fd, events, _ in struct.iter_unpack("=ihh", data) if fd >= 0 and events & _POLLIN
    ]


def _select_fds(pid: int, nfds: int, readfds: int) -> list[int]:
    """The descriptors of a ``select`` read set for ``nfds`` descriptors."""
    nfds = min(nfds, MAX_FDS)
    if nfds <= 0 or readfds == 0:
        return []
    data = _memory(pid, readfds, (nfds + 63) // 64 * 8)  # an fd_set: bits in longs
    bits = int.from_bytes(data, "little")
    return [fd for fd in range(nfds) if bits >> fd & 1]


def serving(pids: list[int]) -> bool:
    """Whether one of the processes ``pids`` holds a listening socket."""
    listening: dict[str, set[str]] = {}  # by network namespace
    for pid in pids:
        sockets = set()
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith("socket:["):
                        sockets.add(target[8:-1])
        if not sockets:
            continue
        try:
            namespace = os.readlink(f"/proc/{pid}/ns/net")
        except OSError:
            namespace = str(pid)
        if namespace not in listening:
            listening[namespace] = _listening(pid)
        if sockets & listening[namespace]:
            return True
    return False


def _listening(pid: int) -> set[str]:
    """The inodes of the listening sockets in ``pid``'s network namespace."""
    found: set[str] = set()
    for name in ("tcp", "tcp6"):
        for fields in _table(pid, name):
            if len(fields) > 9 and fields[3] == _LISTEN_TCP:
                found.add(fields[9])
    for fields in _table(pid, "unix"):
        with contextlib.suppress(ValueError, IndexError):
            if int(fields[3], 16) & _ACCEPTING_UNIX:
                found.add(fields[6])
    return found


def _table(pid: int, name: str) -> list[list[str]]:
    try:
        with open(f"/proc/{pid}/net/{name}") as f:
            return [line.split() for line in f.read().splitlines()[1:]]
    except OSError:
        return []
