"""Running a command inside the sandbox (or outside it), and telling when it failed for
lack of reach.

``prepare`` turns ``bash -c COMMAND`` into the command line that runs it:
``bwrap --seccomp FD … -- bash -c COMMAND`` (its PID namespace ends every process of the
command with it), else ``python -I -S trampoline.py SPEC bash -c COMMAND`` — the
trampoline, a child subreaper, forks; the child walls itself in (Landlock, seccomp) and
``exec``s bash, so the server never is restricted; every process left over is ended
when bash exits. Without a sandbox the same trampoline runs bash with no walls.
``blocked_reason`` reads a failed command's output for the sandbox's refusals.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import landlock, seccomp, trampoline
from .detect import BWRAP_NAMESPACES, Backend, SandboxStatus, availability
from .walls import Walls, bwrap_mounts, landlock_rules, sandbox_environment, walls_for

TRAMPOLINE = Path(trampoline.__file__).resolve()
REAPS = sys.platform.startswith("linux")
"""Whether the trampoline can end a command's processes here (a Linux subreaper)."""
KILL_GRACE_SECONDS = trampoline.DEFAULT_GRACE_SECONDS
"""Between SIGTERM and SIGKILL, for every process of a command."""
MAX_KILL_PASSES = 20
"""How many times ``kill_tree`` looks again for what was orphaned while it killed."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A command line ready to start, its environment, the descriptors it inherits, and
    what to remove after it."""

    argv: list[str]
    env: dict[str, str]
    tmp: Path | None = None
    pass_fds: tuple[int, ...] = ()
    reaped: bool = False
    """Started through the trampoline, which ends every process of the command itself
    (within ``KILL_GRACE_SECONDS`` of a SIGTERM)."""

    def cleanup(self) -> None:
        """Close the passed descriptors, remove the private temp folder (blocking: call
        from a worker thread)."""
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


def through_trampoline(argv: Sequence[str], spec: Mapping[str, object]) -> list[str]:
    """``argv`` started through the trampoline with ``spec`` (-I -S: it imports nothing
    from the environment or site-packages)."""
    full = {**spec, "parent": os.getpid(), "grace": KILL_GRACE_SECONDS}
    return [sys.executable, "-I", "-S", str(TRAMPOLINE), json.dumps(full), *argv]


def unsandboxed(argv: Sequence[str], env: Mapping[str, str]) -> Prepared:
    """``argv`` without walls, its leftover processes still ended with it (on Linux)."""
    if not REAPS:
        return Prepared(list(argv), dict(env))
    return Prepared(through_trampoline(argv, {}), dict(env), reaped=True)


def kill_tree(root: int) -> None:
    """SIGKILL every live descendant of ``root`` — those that left its process group or
    session too (blocking: reads ``/proc``; nothing without it). The last hammer of a
    cleanup, once the trampoline (or bubblewrap) had its grace and did not finish: while
    ``root`` lives, it is the subreaper of everything below it, so what is orphaned
    meanwhile is found again on the next pass. ``root`` must not have been reaped yet (its
    pid could be another process's); ``root`` itself is left to its caller."""
    for _ in range(MAX_KILL_PASSES):
        try:
            found = trampoline.descendants(root)
        except OSError:  # no /proc (and so no trampoline): the group is all there is
            return
        if not found:
            return
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _filter_fd(program: bytes) -> int:
    """A descriptor holding ``program`` from its start, for ``bwrap --seccomp``."""
    fd = os.memfd_create("tether-seccomp", 0)  # no CLOEXEC: the child inherits it
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


@dataclass(frozen=True, slots=True)
class Sandbox:
    """One backend with the walls of one workspace (see ``walls_for``)."""

    backend: Backend
    roots: tuple[Path, ...]
    environ: Mapping[str, str]
    """Where ``$HOME`` is."""
    config_dir: Path
    state_dir: Path
    bwrap: str = "bwrap"
    landlock_abi: int = 0
    env_names: tuple[str, ...] = ()
    """Variables passed in besides the standard ones (the ``sandboxEnv`` setting)."""

    def walls(self) -> Walls:
        """The walls (blocking: paths are resolved)."""
        return walls_for(self.roots, self.environ, self.config_dir, self.state_dir)

    def prepare(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Prepared:
        """``argv`` walled in (blocking: Landlock's rules list a few folders). Raises
        ``ValueError`` on a machine the seccomp filter does not know (fails closed)."""
        walls = self.walls()
        if self.backend == "bwrap":
            fd = _filter_fd(seccomp.socket_filter(udp=True))
            command = [
                self.bwrap,
                *BWRAP_NAMESPACES,
                "--seccomp",
                str(fd),
                *bwrap_mounts(walls),
                "--chdir",
                str(cwd),
                "--",
                *argv,
            ]
            env_in = sandbox_environment(env, "/tmp", self.env_names)
            return Prepared(command, env_in, pass_fds=(fd,))
        program = seccomp.socket_filter(udp=False)  # Landlock refuses TCP, not UDP
        tmp = Path(tempfile.mkdtemp(prefix="tether-sandbox-"))
        policy = {"abi": self.landlock_abi, "rules": landlock_rules(walls, tmp)}
        command = through_trampoline(argv, {"landlock": policy, "seccomp": program.hex()})
        env_in = sandbox_environment(env, str(tmp), self.env_names)
        return Prepared(command, env_in, tmp, reaped=True)


def sandbox_maker(
    status: SandboxStatus,
    environ: Mapping[str, str],
    config_dir: Path,
    state_dir: Path,
    env_names: Sequence[str] = (),
) -> Callable[[Sequence[Path]], Sandbox] | None:
    """What makes the sandbox of a workspace, or None when ``status`` has no backend;
    ``env_names``: the variables the user lets in (``sandboxEnv``)."""
    backend = status.backend
    if backend is None:
        return None
    found = availability()
    home = dict(environ)

    def make(roots: Sequence[Path]) -> Sandbox:
        return Sandbox(
            backend,
            tuple(roots),
            home,
            config_dir,
            state_dir,
            bwrap=found.bwrap or "bwrap",
            landlock_abi=found.landlock_abi,
            env_names=tuple(env_names),
        )

    return make


WRITING = "writing outside the workspace, or a file the sandbox keeps read-only"
LANDLOCK_DENIED = (
    "access outside the workspace, to a file the sandbox keeps read-only, or to the network"
)
_BLOCKED = (
    (re.compile(r"read-only file system|EROFS", re.I), WRITING),
    (
        re.compile(
            r"network is unreachable|ENETUNREACH|temporary failure in name resolution|"
            r"could not resolve host|name or service not known|EAI_AGAIN|ENOTFOUND|"
            r"getaddrinfo failed|connection refused|ECONNREFUSED",
            re.I,
        ),
        "the network",
    ),
    (
        re.compile(r"address family not supported|EAFNOSUPPORT", re.I),
        "a socket of a kind the sandbox refuses (unix sockets reach programs outside it)",
    ),
    (re.compile(r"^(bwrap: |" + re.escape(landlock.FAILED_PREFIX) + ")", re.M), "the sandbox"),
)
_DENIED = re.compile(r"permission denied|EACCES|operation not permitted|EPERM", re.I)
_BUSY = re.compile(r"device or resource busy|EBUSY", re.I)
"""bubblewrap's answer to removing or renaming what it keeps read-only (a mount point)."""
MAX_SHOWN = 200


def blocked_reason(backend: Backend, exit_code: int | None, output: str) -> str | None:
    """Why a command failed in the sandbox, if its output shows the sandbox refusing it
    something: a write outside the workspace or to a place it keeps read-only, the
    network, or the sandbox not starting.

    Conservative: only a failed exit, and only messages the walls produce. Under Landlock
    a refusal is "Permission denied" (for files and TCP alike), so that counts there too.
    """
    if exit_code in (None, 0):
        return None
    patterns = list(_BLOCKED)
    if backend == "landlock":
        patterns.append((_DENIED, LANDLOCK_DENIED))
    else:
        patterns.append((_BUSY, WRITING))
    for line in output.splitlines():
        for pattern, what in patterns:
            if pattern.search(line):
                shown = line.strip()
                if len(shown) > MAX_SHOWN:
                    shown = shown[: MAX_SHOWN - 1] + "…"
                return f"it needs {what} ({shown})"
    return None
