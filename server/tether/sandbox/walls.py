"""The sandbox's walls: what a sandboxed command may write, what it may not see at all.

The workspace folders are writable — except, under bubblewrap, the sensitive paths at
their top (``.git``, ``.tether``, ``.vscode``, …: a git hook planted there would run
unsandboxed on the user's next commit) — the rest of the filesystem is read-only; ``$HOME``
(keys, cloud credentials, keyrings, tokens), the Tether config folder and the state folder
are hidden, except a workspace folder (and the server's Python) lying inside them; ``/tmp``
is a fresh empty folder. The same walls are expressed for both backends: bubblewrap mounts
(``bwrap_mounts``) and Landlock's allow-list (``landlock_rules``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..workspace.sensitive import RULES as SENSITIVE

SECRETS_UNDER_HOME = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".config/gcloud",
    ".config/gh",
    ".config/tether",
    ".local/share/keyrings",
    ".password-store",
)
"""Hidden one by one where ``$HOME`` as a whole cannot be (a workspace is ``$HOME``)."""

PROTECTED_NAMES = tuple(r.pattern for r in SENSITIVE if r.kind in ("dir", "name", "path"))
"""Sensitive paths kept read-only at the top of a workspace folder (where they exist)."""

DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")
"""Devices commands write to (``> /dev/null``): writable under Landlock."""

PASSED_VARIABLES = frozenset(
    {
        *("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ"),
        *("PAGER", "GIT_PAGER", "NO_COLOR", "GIT_TERMINAL_PROMPT"),
    }
)
"""The environment a sandboxed command gets, besides ``LC_*`` and what the user lets in
(``sandboxEnv``): an allow-list, since a secret can have any name (``OPENAI_KEY``,
``GH_PAT``, a password inside ``DATABASE_URL``), and so can a way out (``SSH_AUTH_SOCK``,
``DBUS_SESSION_BUS_ADDRESS``). With no network the command could not use a secret, and
anything it prints goes to the model."""

PASSED_PREFIXES = ("LC_",)
VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class Walls:
    """Resolved absolute paths: writable folders, hidden paths, read-only exceptions."""

    writable: tuple[Path, ...]
    hidden: tuple[Path, ...]
    exposed: tuple[Path, ...] = ()
    """Read-only although inside a hidden path (the server's Python)."""
    protected: tuple[Path, ...] = ()
    """Read-only although inside a writable folder (bubblewrap only: Landlock can grant a
    folder only whole, and a folder's files cannot be written without a grant on it)."""


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def walls_for(
    roots: Sequence[Path], environ: Mapping[str, str], config_dir: Path, state_dir: Path
) -> Walls:
    """The walls for commands in the workspace ``roots``."""
    writable = tuple(dict.fromkeys(_real(r) for r in roots))
    home = _real(Path(environ.get("HOME") or Path.home()))
    hidden: list[Path] = [_real(config_dir), _real(state_dir)]
    if home == Path("/") or any(_inside(home, w) for w in writable):
        # $HOME itself is a workspace (or the root): hide what is known to hold secrets.
        hidden += [home / name for name in SECRETS_UNDER_HOME]
    else:
        hidden.append(home)
    hidden = [h for h in dict.fromkeys(hidden) if h != Path("/")]
    wanted = {_real(Path(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    wanted |= {_tools(Path(p), home) for p in environ.get("PATH", "").split(os.pathsep) if p}
    exposed = tuple(p for p in sorted(wanted) if any(_inside(p, h) for h in hidden))
    protected = tuple(
        root / name
        for root in writable
        for name in PROTECTED_NAMES
        if (root / name).exists() and not any(_inside(root / name, h) for h in hidden)
    )
    return Walls(writable, tuple(hidden), exposed, protected)


def _tools(entry: Path, home: Path) -> Path:
    """What of ``$HOME`` a ``PATH`` entry needs readable: its top folder (``~/.cargo``,
    ``~/.pyenv``, so the programs' own files come along), or only the entry itself when
    that folder holds secrets (``~/.local/bin``, not ``~/.local``)."""
    entry = _real(entry)
    if not entry.is_absolute() or home not in entry.parents:
        return entry
    top = home / entry.relative_to(home).parts[0]
    secrets = [home / name for name in SECRETS_UNDER_HOME]
    return entry if any(_inside(s, top) for s in secrets) else top


def passed(name: str, extra: Iterable[str] = ()) -> bool:
    """Whether a variable called ``name`` reaches a sandboxed command."""
    return name in PASSED_VARIABLES or name.startswith(PASSED_PREFIXES) or name in extra


def sandbox_environment(
    environ: Mapping[str, str], tmp: str, extra: Iterable[str] = ()
) -> dict[str, str]:
    """A sandboxed command's environment: only the allow-listed variables of ``environ``
    (and those named in ``extra``), temp files in ``tmp``."""
    names = frozenset(extra)
    env = {k: v for k, v in environ.items() if passed(k, names)}
    env.update(TMPDIR=tmp, TMP=tmp, TEMP=tmp)
    return env


def bwrap_mounts(walls: Walls) -> list[str]:
    """bubblewrap's arguments for the walls: everything read-only, then the exceptions.

    Mounts are laid parents first, so a workspace inside ``$HOME`` is bound onto the empty
    ``$HOME`` and a secret folder inside a workspace is hidden again on top of it; at the
    same depth hiding comes last, so it wins.
    """
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    mounts: list[tuple[Path, list[str]]] = []
    mounts += [(p, ["--ro-bind", str(p), str(p)]) for p in walls.exposed]
    mounts += [(p, ["--bind", str(p), str(p)]) for p in walls.writable]
    mounts += [(p, ["--ro-bind", str(p), str(p)]) for p in walls.protected]
    for path in walls.hidden:
        if path.is_dir():
            mounts.append((path, ["--tmpfs", str(path)]))
        elif path.exists():
            mounts.append((path, ["--ro-bind", "/dev/null", str(path)]))
    for _, mount in sorted(mounts, key=lambda m: len(m[0].parts)):
        args += mount
    return args


def _grants(top: Path, excluded: Sequence[Path], kind: str) -> Iterable[tuple[str, str]]:
    """``kind`` rules covering ``top`` except the ``excluded`` paths (blocking: lists
    the folders on the way to each excluded path)."""
    if any(top == e for e in excluded):
        return
    if not any(top in e.parents for e in excluded):
        yield str(top), kind
        return
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink():  # reached through its target, which is judged on its own
            continue
        yield from _grants(top / entry.name, excluded, kind)


def _proc_but_processes() -> list[tuple[str, str]]:
    """``/proc`` without the processes' folders (``/proc/PID/environ`` may hold API keys,
    and Landlock's ptrace rule does not stop root from reading it): a process started
    later gets a folder no rule covers."""
    try:
        entries = list(os.scandir("/proc"))
    except OSError:
        return []
    return [(e.path, "read") for e in entries if not e.name.isdigit() and not e.is_symlink()]


def landlock_rules(walls: Walls, tmp: Path) -> list[tuple[str, str]]:
    """Landlock's allow-list for the walls, with ``tmp`` as the private temp folder.

    Landlock can only grant, so "all but" is spelled out: every entry of a folder on the
    way to a hidden path is granted, except that path (``/tmp`` included: ``tmp`` stands
    in for it), and ``/proc`` has no process folders. Folders on the way are not granted
    themselves, so ``ls /`` is refused.
    """
    hidden = [*walls.hidden, Path("/tmp"), Path("/proc")]
    rules = list(_grants(Path("/"), hidden, "read"))
    rules += _proc_but_processes()
    rules += [(str(p), "read") for p in walls.exposed]
    for folder in walls.writable:
        rules += _grants(folder, walls.hidden, "write")
    rules += [(d, "device") for d in DEVICES]
    rules.append((str(tmp), "write"))
    return rules
