"""The trampoline a command starts through when no PID namespace holds it (Landlock, or
no sandbox): ``python -I -S trampoline.py SPEC_JSON PROGRAM ARGS…``.

It makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``) and forks; the child walls
itself in as SPEC says — Landlock rules, then a seccomp filter — and ``exec``s PROGRAM;
the parent waits. A process the command started that leaves its process group (``setsid``,
a double fork, ``nohup … &``) is still a descendant of the trampoline, since orphans are
reparented to it rather than to init. When PROGRAM exits, or the trampoline is told to
stop (SIGTERM, SIGINT, SIGHUP: a timeout, a cancel, or the server's death through
``PR_SET_PDEATHSIG``), every descendant gets SIGTERM, then SIGKILL after SPEC's
``grace`` seconds; the trampoline returns once none is left, with PROGRAM's status
(128 + N for a death by signal N, as a shell reports it). So every process a command
started ends with the call. The trampoline keeps those signals and SIGCHLD blocked and
takes them one at a time (``sigwaitinfo``): no handler runs in the middle of the
cleanup, so signals that come together — a killed server's death signal and its
terminal's hang-up — cannot cut it short.

Standard library only, nothing of Tether but its sibling ``landlock.py``: it runs isolated
(``-I -S``), before anything of the command is loaded. The trampoline itself is never
restricted: it must see ``/proc`` to find the descendants.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

try:
    from . import landlock
except ImportError:  # run as a script: -I keeps the script's folder off sys.path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    landlock = importlib.import_module("landlock")

PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
SECCOMP_MODE_FILTER = 2
DEFAULT_GRACE_SECONDS = 2.0
"""Between SIGTERM and SIGKILL for the descendants, unless SPEC says."""
POLL_SECONDS = 0.01
EXIT_FAILED = landlock.EXIT_SANDBOX_FAILED
FAILED_PREFIX = landlock.FAILED_PREFIX
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
WAITED = {signal.SIGCHLD, *STOP_SIGNALS}
"""Blocked in the trampoline and taken with ``sigwaitinfo``: a child ended, or stop."""


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def install_seccomp(program: bytes) -> None:
    """Install a classic-BPF seccomp filter on this process (for good)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS)")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(SET_SECCOMP): {os.strerror(err)}")


def _wall_in(spec: dict[str, Any]) -> None:
    """In the child: the Landlock rules, then the seccomp filter, as ``spec`` says."""
    policy = spec.get("landlock")
    if policy is not None:
        rules = [(str(path), str(kind)) for path, kind in policy["rules"]]
        landlock.restrict_self(int(policy["abi"]), rules, bool(policy.get("network", False)))
    if spec.get("seccomp"):
        install_seccomp(bytes.fromhex(spec["seccomp"]))


def descendants(root: int) -> list[int]:
    """Every live process below ``root``, from ``/proc`` (zombies left out)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 2 and fields[0] not in (b"Z", b"X"):
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def end_all(me: int, statuses: dict[int, int], grace: float) -> None:
    """SIGTERM every descendant, SIGKILL what lives on after ``grace`` seconds; reap them
    all (their statuses into ``statuses``). Returns once no child is left."""
    deadline = time.monotonic() + grace
    signalled: set[int] = set()
    while True:
        _reap(statuses)
        alive = descendants(me)
        if not alive and not _has_children(statuses):
            return
        late = time.monotonic() > deadline
        for pid in alive:
            try:
                if late:
                    os.kill(pid, signal.SIGKILL)
                elif pid not in signalled:
                    os.kill(pid, signal.SIGTERM)
                    os.kill(pid, signal.SIGCONT)  # a stopped process acts on it once continued
                    signalled.add(pid)
            except (ProcessLookupError, PermissionError):
                continue
        time.sleep(POLL_SECONDS)


def _reap(statuses: dict[int, int]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        statuses[pid] = status


def _has_children(statuses: dict[int, int]) -> bool:
    try:
        pid, status = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return False
    if pid != 0:
        statuses[pid] = status
    return True


def _shell_status(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else EXIT_FAILED


def main(argv: list[str]) -> int:
    """``SPEC_JSON PROGRAM ARGS…``: run PROGRAM walled in as SPEC says, and end every
    process it started before returning its status."""
    if len(argv) < 2:
        sys.stderr.write(f"{FAILED_PREFIX}usage: trampoline.py SPEC PROGRAM [ARGS…]\n")
        return EXIT_FAILED
    # Blocked before the death signal is asked for: from here on it waits, pending.
    unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)
    try:
        spec = json.loads(argv[0])
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(CHILD_SUBREAPER)")
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, ValueError, TypeError) as exc:
        sys.stderr.write(f"{FAILED_PREFIX}could not start: {exc}\n")
        return EXIT_FAILED
    if os.getppid() != spec.get("parent", os.getppid()):
        return EXIT_FAILED  # the server died before the death signal was set
    me = os.getpid()
    statuses: dict[int, int] = {}
    command = -1
    try:
        command = os.fork()
        if command == 0:
            _child(spec, argv[1:], unblocked)
        while command not in statuses:
            if signal.sigwaitinfo(WAITED).si_signo != signal.SIGCHLD:
                break  # told to stop
            _reap(statuses)
    except ChildProcessError:
        pass
    finally:
        end_all(me, statuses, float(spec.get("grace", DEFAULT_GRACE_SECONDS)))
    return _shell_status(statuses[command]) if command in statuses else 128 + signal.SIGTERM


def _child(spec: dict[str, Any], program: list[str], unblocked: Iterable[int]) -> None:
    """Wall in and exec PROGRAM, with the signal mask the trampoline started with; never
    returns."""
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, unblocked)
        _wall_in(spec)
        os.execv(program[0], program)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        # Fail closed: the command does not run unrestricted.
        try:
            sys.stderr.write(f"{FAILED_PREFIX}could not start the sandbox: {exc}\n")
            sys.stderr.flush()
        finally:
            os._exit(EXIT_FAILED)
    except BaseException:
        os._exit(EXIT_FAILED)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
