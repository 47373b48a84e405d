"""The sandbox's walls: what a sandboxed command may write, what it may not see at all.

The workspace folders are writable — except the user's own places the approval floor
always asks about (``floor.py``: shell start-up files, ``~/.config``, ``~/.local/bin``, …,
and every dot name at the top of the home folder when a workspace holds it: kept read-only,
and none can be made) and, under bubblewrap, the sensitive paths at their top (``.git``,
``.tether``, ``.vscode``, …: a git hook planted there would run unsandboxed on the user's
next commit) — the rest of the filesystem is read-only; ``$HOME`` (keys, cloud
credentials, keyrings, tokens), the Tether config folder and the state folder are hidden,
except a workspace folder (and the server's Python) lying inside them — empty and
read-only, but the home folder around a project, whose writes (caches) are gone with the
command; ``/tmp`` is a fresh empty folder. The same walls are expressed for both
backends: bubblewrap mounts (``bwrap_mounts``) and Landlock's allow-list
(``landlock_rules``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..workspace.places import user_places
from ..workspace.sensitive import RULES as SENSITIVE
from .floor import floor_in, hidden_over, inside

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
    kept: tuple[Path, ...] = ()
    """The floor's places inside a writable folder: read-only on both backends."""
    closed: tuple[Path, ...] = ()
    """Folders inside a writable folder where a place of the floor could be made: nothing
    is created, removed or renamed in them; what is in them keeps its own walls."""
    scratch: tuple[Path, ...] = ()
    """Hidden folders a command may still write in, what it wrote gone with it (the home
    folder when no workspace holds it: caches); every other hidden folder is read-only."""


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def walls_for(
    roots: Sequence[Path], environ: Mapping[str, str], config_dir: Path, state_dir: Path
) -> Walls:
    """The walls for commands in the workspace ``roots``."""
    writable = tuple(dict.fromkeys(_real(r) for r in roots))
    home = _real(Path(environ.get("HOME") or Path.home()))
    hidden: list[Path] = [_real(config_dir), _real(state_dir)]
    scratch: tuple[Path, ...] = ()
    if home == Path("/") or any(inside(home, w) for w in writable):
        # $HOME itself is a workspace (or the root): hide what is known to hold secrets.
        hidden += [home / name for name in SECRETS_UNDER_HOME]
    else:
        hidden.append(home)
        scratch = (home,)
    hidden = [h for h in dict.fromkeys(hidden) if h != Path("/")]
    wanted = {_real(Path(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    wanted |= {_tools(Path(p), home) for p in environ.get("PATH", "").split(os.pathsep) if p}
    exposed = tuple(p for p in sorted(wanted) if any(inside(p, h) for h in hidden))
    protected = tuple(
        root / name
        for root in writable
        for name in PROTECTED_NAMES
        if (root / name).exists() and not hidden_over(root / name, writable, hidden)
    )
    floor = floor_in(writable, user_places(environ), hidden)
    return Walls(writable, tuple(hidden), exposed, protected, floor.kept, floor.closed, scratch)


def _tools(entry: Path, home: Path) -> Path:
    """What of ``$HOME`` a ``PATH`` entry needs readable: its top folder (``~/.cargo``,
    ``~/.pyenv``, so the programs' own files come along), or only the entry itself when
    that folder holds secrets (``~/.local/bin``, not ``~/.local``)."""
    entry = _real(entry)
    if not entry.is_absolute() or home not in entry.parents:
        return entry
    top = home / entry.relative_to(home).parts[0]
    secrets = [home / name for name in SECRETS_UNDER_HOME]
    return entry if any(inside(s, top) for s in secrets) else top


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


SPECIAL = ((Path("/dev"), "--dev"), (Path("/proc"), "--proc"), (Path("/tmp"), "--tmpfs"))
"""The sandbox's own ``/dev`` (devices only), ``/proc`` (its processes only) and ``/tmp``
(empty), whatever folder is writable around them (``/`` as a workspace)."""

_SPECIAL, _EXPOSED, _WRITABLE, _REOPENED, _CLOSED, _READ_ONLY, _HIDDEN = range(7)
"""At the same depth, mounts are laid in this order: the last one wins."""


def bwrap_mounts(walls: Walls) -> list[str]:
    """bubblewrap's arguments for the walls: everything read-only, then the exceptions.

    Mounts are laid parents first, so a workspace inside ``$HOME`` is bound onto the empty
    ``$HOME`` and a secret folder inside a workspace is hidden again on top of it; at the
    same depth hiding comes last, so it wins. A closed folder is bound read-only and each
    of its entries bound writable again (but the floor's, the hidden and links), so
    nothing can be made, removed or renamed in it. Hidden folders are made read-only last
    (but the ``scratch`` ones), once what lies inside them is bound.
    """
    mounts: list[tuple[Path, int, list[str]]] = [
        (path, _SPECIAL, [flag, str(path)]) for path, flag in SPECIAL
    ]
    mounts += [(p, _EXPOSED, ["--ro-bind", str(p), str(p)]) for p in walls.exposed]
    mounts += [(p, _WRITABLE, ["--bind", str(p), str(p)]) for p in walls.writable]
    for folder in walls.closed:
        mounts.append((folder, _CLOSED, ["--ro-bind", str(folder), str(folder)]))
        mounts += [(p, _REOPENED, ["--bind", str(p), str(p)]) for p in _reopened(folder, walls)]
    own = {p for p, _ in SPECIAL}  # the sandbox's own already: never the machine's again
    read_only = [p for p in (*walls.protected, *walls.kept) if p not in own]
    mounts += [(p, _READ_ONLY, ["--ro-bind", str(p), str(p)]) for p in read_only]
    emptied: list[Path] = []
    for path in walls.hidden:
        if path.is_dir():
            mounts.append((path, _HIDDEN, ["--tmpfs", str(path)]))
            emptied.append(path)
        elif path.exists():
            mounts.append((path, _HIDDEN, ["--ro-bind", "/dev/null", str(path)]))
    args = ["--ro-bind", "/", "/"]
    for _, _, mount in sorted(mounts, key=lambda m: (len(m[0].parts), m[1])):
        args += mount
    for path in emptied:
        if path not in walls.scratch:
            args += ["--remount-ro", str(path)]
    return args


def _reopened(folder: Path, walls: Walls) -> list[Path]:
    """The entries of the closed ``folder`` that stay as writable as before: not a link
    (it stays what it is), not read-only or hidden, not the sandbox's own folders."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    skipped = {*walls.kept, *walls.protected, *walls.hidden, *(p for p, _ in SPECIAL)}
    return [
        folder / e.name
        for e in entries
        if (e.is_dir(follow_symlinks=False) or e.is_file(follow_symlinks=False))
        and folder / e.name not in skipped
    ]


def _grants(
    top: Path, excluded: Sequence[Path], kind: str, closed: Sequence[Path] = ()
) -> Iterable[tuple[str, str]]:
    """``kind`` rules covering ``top`` except the ``excluded`` paths, and except the
    ``closed`` folders themselves (their entries are covered); blocking: lists the folders
    on the way to each excluded path."""
    if any(top == e for e in excluded):
        return
    if top not in closed and not any(top in e.parents for e in excluded):
        yield str(top), kind
        return
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink():  # reached through its target, which is judged on its own
            continue
        yield from _grants(top / entry.name, excluded, kind, closed)


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
    themselves, so ``ls /`` is refused. The writable folders are granted the same way, but
    the floor's places, whose folders on the way (and the closed folders) are not granted
    writing: nothing is made, removed or renamed in them.
    """
    hidden = [*walls.hidden, Path("/tmp"), Path("/proc")]
    rules = list(_grants(Path("/"), hidden, "read"))
    rules += _proc_but_processes()
    rules += [(str(p), "read") for p in walls.exposed]
    unwritable = [*walls.hidden, *walls.kept]
    for folder in walls.writable:
        own = [p for p, _ in SPECIAL if p != folder]  # a workspace of `/`: still the walls'
        rules += _grants(folder, [*unwritable, *own], "write", walls.closed)
    rules += [(d, "device") for d in DEVICES]
    rules.append((str(tmp), "write"))
    return rules
