"""Telling that a command stopped to ask for input, and what it asked.

A command's standard input is a terminal no one types into (a pseudo-terminal whose other
end Tether holds and writes to only the user's answer to a question the command asked, with
``commandInput: "ask"``: ``tools/command_input.py``), not its controlling terminal. So a program
that asks (``read -p``, ``input()``, a ``[y/N]``, a REPL's ``>>>``) prints its question as
it would for a person, then waits; a program that only reads input when it is not a
terminal (``jq``, a formatter's stdin mode) sees a terminal and reads none.

While the command runs quietly, ``InputTerminal.asking`` looks in ``/proc`` (Linux) for a
process of the command's tree blocked in a ``read`` of that terminal: the kernel's own
answer (``/proc/PID/syscall``, the descriptor it reads, and what that descriptor is), so a
shell waiting for a ``$(…)`` or ``cat`` reading a pipe is never taken for one that asks.
The runner ends such a command once it has waited ``INPUT_WAIT_SECONDS`` and says what it
asked: the line of output it left unfinished. Where ``/proc/PID/syscall`` cannot be read
(not Linux, a restricted ``/proc``), commands get ``/dev/null``: an empty input that ends
at once, the question unnamed. A program that waits in an event loop (``epoll``, ``poll``,
``select``: Node's ``readline``, Python's ``asyncio``) with the terminal among what it waits
to read is seen too (``input_polling``), unless a process of the command listens for
connections (a dev server or a watcher taking keys on its input serves, it does not ask).
"""

from __future__ import annotations

import contextlib
import os
import platform
import select
import subprocess
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from .input_polling import event_wait_fds, serving

__all__ = [
    "INPUT_WAIT_SECONDS",
    "InputTerminal",
    "asked_line",
    "open_input_terminal",
]

INPUT_WAIT_SECONDS = 1.0
"""How long a command must have waited for input, printing nothing, before it is ended."""
CHECK_SECONDS = 0.25
"""How often a quiet command's processes are looked at."""
PROMPT_CHARS = 200

# read, pread64, readv, preadv, preadv2: the calls a program waits in for typed input.
_READS = {
    "x86_64": frozenset({0, 17, 19, 295, 327}),
    "aarch64": frozenset({63, 65, 67, 69, 286}),
}
_DEV_TTY = os.makedev(5, 0)


@cache
def _reads() -> frozenset[int] | None:
    """The read calls' numbers here, or None when this kernel's calls cannot be seen."""
    numbers = _READS.get(platform.machine())
    if numbers is None:
        return None
    # A child's calls must be readable too (Yama's ptrace_scope 2 forbids it): one that
    # waits reading its input, as a command's process would.
    try:
        child = subprocess.Popen(
            ["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    except OSError:
        return None
    try:
        seen = False
        for _ in range(200):  # until it waits in its read: at most about 2 s
            with open(f"/proc/{child.pid}/syscall") as f:
                parts = f.read().split()
            if parts and parts[0].isdigit() and int(parts[0]) in numbers:
                seen = True
                break
            time.sleep(0.01)
    except OSError:
        seen = False
    finally:
        child.kill()
        child.wait()
        if child.stdin is not None:
            child.stdin.close()
    return numbers if seen else None


@dataclass(slots=True)
class InputTerminal:
    """The pseudo-terminal a command reads its input from: ``slave`` goes to the command
    (closed here once it started), ``master`` stays with Tether, written to only with the
    user's answer (``type``)."""

    master: int
    slave: int
    device: int
    """The terminal's device number, to know its descriptors in other processes."""
    written: list[bytes] = field(default_factory=list)
    echo: bytes = b""
    """The terminal's echo of what ``type`` typed, still to come: already in the command's
    output where it was typed, so left out of what ``drain`` reads."""

    def started(self) -> None:
        """The command has its copy of the terminal: close ours."""
        if self.slave >= 0:
            with contextlib.suppress(OSError):
                os.close(self.slave)
            self.slave = -1

    def close(self) -> None:
        """Close both ends (after the command ended)."""
        self.started()
        if self.master >= 0:
            with contextlib.suppress(OSError):
                os.close(self.master)
            self.master = -1

    def drain(self, timeout: float) -> bytes:
        """What the command wrote to the terminal (a program writing its question to its
        input, or to ``/dev/tty`` when the terminal became its controlling one), waiting
        up to ``timeout`` seconds for some; blocking: call from a worker thread. Kept
        read so a writer never blocks on a full terminal."""
        while self.master >= 0:
            try:
                ready, _, _ = select.select([self.master], [], [], timeout)
                if not ready:
                    return b""
                data = os.read(self.master, 4096)
            except (OSError, ValueError):  # EIO: no process holds the terminal any more
                return b""
            if not data or (data := self._unechoed(data)):
                return data
            timeout = 0.0  # only the echo: read on
        return b""

    def _unechoed(self, data: bytes) -> bytes:
        """``data`` read from the terminal without the echo of what was typed (``echo``):
        the line discipline echoes it before the command can read it, so it comes first."""
        same = 0
        limit = min(len(data), len(self.echo))
        while same < limit and data[same] == self.echo[same]:
            same += 1
        self.echo = self.echo[same:] if same == len(data) else b""  # else: not (all) echoed
        return data[same:]

    def hides_typing(self) -> bool:
        """Whether what is typed into the terminal would not show: the command turned its
        echo off, as a password prompt does (``getpass``, ``read -s``, ``ssh``), or the
        terminal cannot tell (taken as hidden)."""
        if self.master < 0:
            return True
        try:  # a pseudo-terminal's master answers with its slave's modes (Linux)
            return not termios.tcgetattr(self.master)[3] & termios.ECHO
        except (termios.error, OSError):
            return True

    def type(
        self, text: str, hidden: bool = False, shown: Callable[[bytes], None] | None = None
    ) -> bool:
        """Type ``text`` into the terminal as a person would (blocking: call from a worker
        thread); False when it cannot be (the command is gone). ``hidden``: with the
        terminal's echo turned off first (and left off), so it does not show in the
        command's output. Else, when the terminal echoes, ``shown`` gets the echo at once,
        before the command can answer it (the terminal's own echo, read later, would land
        after what the command printed since, and end its next question's line)."""
        data = text.encode()
        try:
            attrs = termios.tcgetattr(self.master)
            if hidden and attrs[3] & termios.ECHO:
                attrs[3] &= ~(termios.ECHO | termios.ECHONL)
                termios.tcsetattr(self.master, termios.TCSANOW, attrs)
        except (termios.error, OSError):
            return False
        if not hidden and attrs[3] & termios.ECHO:
            self.echo += data
            if shown is not None:
                shown(data)
        try:
            while data and self.master >= 0:
                data = data[os.write(self.master, data) :]
        except OSError:
            return False
        return not data

    def asking(self, root: int) -> bool:
        """Whether a process of ``root``'s tree is blocked reading this terminal
        (blocking: reads ``/proc``)."""
        numbers = _reads()
        if numbers is None:
            return False
        tree = _tree(root)
        waits = [_reads_terminal(pid, numbers, self.device) for pid in tree]
        if "read" in waits:
            return True
        # An event loop waiting on the terminal among other things: a server's (a dev server
        # or a watcher taking keys) while a process of the command listens for connections.
        return "loop" in waits and not serving(tree)


def open_input_terminal() -> InputTerminal | None:
    """A fresh pseudo-terminal for a command's input, or None where waiting for input
    cannot be seen (then the command gets ``/dev/null``)."""
    if _reads() is None:
        return None
    try:
        master, slave = os.openpty()
    except OSError:
        return None
    try:
        os.fchmod(slave, 0o600)  # devpts makes it group-writable (tty): only ours to write
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.OPOST  # what reaches the master as written: no "\r\n"
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        os.set_inheritable(slave, False)
        device = os.fstat(slave).st_rdev
    except (OSError, termios.error):
        os.close(master)
        os.close(slave)
        return None
    return InputTerminal(master, slave, device)


def _tree(root: int) -> list[int]:
    """``root`` and its live descendants (one pass over ``/proc``)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return [root]
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 2:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _reads_terminal(pid: int, numbers: frozenset[int], device: int) -> str | None:
    """How a thread of ``pid`` is blocked reading the terminal ``device`` (directly, or as
    its controlling terminal through ``/dev/tty``): ``read``, in a read of it; ``loop``, in
    an event loop's wait that waits on it among others (``input_polling``); None: not."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    found = None
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/syscall") as f:
                parts = f.read().split()
            if len(parts) < 7 or not parts[0].isdigit():
                continue
            number, args = int(parts[0]), [int(a, 16) for a in parts[1:7]]
        except (OSError, ValueError):
            continue
        if number in numbers:
            if _is_terminal(pid, args[0], device):
                return "read"
            continue
        fds = event_wait_fds(pid, number, args)
        if fds and any(_is_terminal(pid, fd, device) for fd in fds):
            found = "loop"
    return found


def _is_terminal(pid: int, fd: int, device: int) -> bool:
    """Whether ``pid``'s descriptor ``fd`` is the terminal ``device`` (or ``/dev/tty``
    when that terminal is its controlling one)."""
    try:
        rdev = os.stat(f"/proc/{pid}/fd/{fd}").st_rdev
        if rdev == device:
            return True
        if rdev != _DEV_TTY:
            return False
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        tty = stat[stat.rfind(b")") + 2 :].split()[4]
        return int(tty) == device
    except (OSError, ValueError, IndexError):
        return False


def asked_line(output: str) -> str:
    """What a command that waited for input asked: the line it left unfinished (a question
    waits on its own line: ``Continue? ``, trailing spaces kept), at most ``PROMPT_CHARS``
    of its end; "" when its output ends with a full line (it asked nothing)."""
    line = output.rsplit("\n", 1)[-1]
    if "\r" in line and line.rsplit("\r", 1)[-1].strip():
        line = line.rsplit("\r", 1)[-1]  # what a terminal shows of the line
    return line[-PROMPT_CHARS:] if line.strip() else ""
