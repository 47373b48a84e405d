"""Running a command inside the sandbox, and telling when it failed for lack of reach.

``Sandbox.prepare`` turns ``bash -c COMMAND`` into the command line that runs it walled in:
``bwrap … -- bash -c COMMAND`` or ``python -I -S landlock.py POLICY bash -c COMMAND`` (the
trampoline restricts itself between fork and the ``exec`` of bash, so the server never is,
and bash keeps the pid, hence the process group, that cancellation kills).
``blocked_reason`` reads a failed command's output for the sandbox's refusals.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import landlock
from .detect import BWRAP_NAMESPACES, Backend, SandboxStatus, availability
from .walls import Walls, bwrap_mounts, landlock_rules, sandbox_environment, walls_for

TRAMPOLINE = Path(landlock.__file__).resolve()


@dataclass(frozen=True, slots=True)
class Prepared:
    """A command line ready to start, its environment, and the temp folder to remove."""

    argv: list[str]
    env: dict[str, str]
    tmp: Path | None = None

    def cleanup(self) -> None:
        """Remove the private temp folder (blocking: call from a worker thread)."""
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


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

    def walls(self) -> Walls:
        """The walls (blocking: paths are resolved)."""
        return walls_for(self.roots, self.environ, self.config_dir, self.state_dir)

    def prepare(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Prepared:
        """``argv`` walled in (blocking: Landlock's rules list a few folders)."""
        walls = self.walls()
        if self.backend == "bwrap":
            command = [
                self.bwrap,
                *BWRAP_NAMESPACES,
                *bwrap_mounts(walls),
                "--chdir",
                str(cwd),
                "--",
                *argv,
            ]
            return Prepared(command, sandbox_environment(env, "/tmp"))
        tmp = Path(tempfile.mkdtemp(prefix="tether-sandbox-"))
        policy = {"abi": self.landlock_abi, "rules": landlock_rules(walls, tmp)}
        # -I -S: the trampoline imports nothing from the environment or site-packages.
        command = [sys.executable, "-I", "-S", str(TRAMPOLINE), json.dumps(policy), *argv]
        return Prepared(command, sandbox_environment(env, str(tmp)), tmp)


def sandbox_maker(
    status: SandboxStatus, environ: Mapping[str, str], config_dir: Path, state_dir: Path
) -> Callable[[Sequence[Path]], Sandbox] | None:
    """What makes the sandbox of a workspace, or None when ``status`` has no backend."""
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
        )

    return make


_BLOCKED = (
    (re.compile(r"read-only file system|EROFS", re.I), "writing outside the workspace"),
    (
        re.compile(
            r"network is unreachable|ENETUNREACH|temporary failure in name resolution|"
            r"could not resolve host|name or service not known|EAI_AGAIN|ENOTFOUND|"
            r"getaddrinfo failed|connection refused|ECONNREFUSED",
            re.I,
        ),
        "the network",
    ),
    (re.compile(r"^(bwrap: |" + re.escape(landlock.FAILED_PREFIX) + ")", re.M), "the sandbox"),
)
_DENIED = re.compile(r"permission denied|EACCES|operation not permitted|EPERM", re.I)
MAX_SHOWN = 200


def blocked_reason(backend: Backend, exit_code: int | None, output: str) -> str | None:
    """Why a command failed in the sandbox, if its output shows the sandbox refusing it
    something: a write outside the workspace, the network, or the sandbox not starting.

    Conservative: only a failed exit, and only messages the walls produce. Under Landlock
    a refusal is "Permission denied" (for files and TCP alike), so that counts there too.
    """
    if exit_code in (None, 0):
        return None
    patterns = list(_BLOCKED)
    if backend == "landlock":
        patterns.append((_DENIED, "access outside the workspace or the network"))
    for line in output.splitlines():
        for pattern, what in patterns:
            if pattern.search(line):
                shown = line.strip()
                if len(shown) > MAX_SHOWN:
                    shown = shown[: MAX_SHOWN - 1] + "…"
                return f"it needs {what} ({shown})"
    return None
