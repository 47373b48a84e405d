"""Project instructions: the ``AGENTS.md`` files of the workspace and the folders above it,
up to the repository's root.

``AGENTS.md`` is the cross-tool convention (Codex, Cursor, Aider, ...) for telling coding
agents how to work in a repository. Tether reads the one at the workspace root and those in
the folders above it up to the repository's root (the nearest folder at or above the
workspace with a ``.git``, never a folder above it, nor above the user's home folder when
the workspace lies inside it); outside a repository, only the workspace's own. Outermost
first, so the closest file is read last. The text is the repository's, so it is handed to
the model as text only: it cannot change settings or approvals.

A file another local user could have written is not read: one owned by anyone but the user
(or root), writable by others, or in a folder others may write to (a sticky ``/tmp``-like
folder included; a group-writable folder only when the group is the user's own private
group). It is skipped with one log line, and ``tether config`` lists it with the reason.
"""

from __future__ import annotations

import grp
import logging
import os
import pwd
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import anyio

from ..host import Buffers
from ..workspace.folders import decode_text

log = logging.getLogger(__name__)

INSTRUCTIONS_FILE = "AGENTS.md"
MAX_INSTRUCTIONS_BYTES = 16 * 1024
"""All instruction files together are cut to this many bytes of UTF-8."""


@dataclass(frozen=True, slots=True)
class Instructions:
    """One instruction file as the model sees it."""

    path: Path
    text: str
    size: int
    """The whole file's size in bytes (the text may be cut)."""
    cut: bool


@dataclass(frozen=True, slots=True)
class Skipped:
    """An ``AGENTS.md`` not read, and why (in the user's words)."""

    path: Path
    reason: str


@dataclass(slots=True)
class Found:
    """The ``AGENTS.md`` files to read (outermost first) and those skipped."""

    paths: list[Path] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def home_folder(environ: Mapping[str, str] | None = None) -> Path | None:
    """The user's home folder (``$HOME``), resolved, if known."""
    env = os.environ if environ is None else environ
    home = env.get("HOME")
    return Path(home).resolve() if home else None


def repository_root(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` holding a ``.git`` (a folder, or the file
    of a worktree or submodule); None outside a repository."""
    for level in (folder, *folder.parents):
        if os.path.lexists(level / ".git"):
            return level
    return None


def instruction_folders(root: Path, home: Path | None) -> list[Path]:
    """The folders whose ``AGENTS.md`` count, outermost first: from the repository's root
    (not above ``home`` when ``root`` is inside it) down to ``root``; ``root`` alone outside
    a repository. Blocking."""
    root = root.resolve()
    top = repository_root(root)
    folders = [root]
    if top is not None:
        inside_home = home is not None and root.is_relative_to(home)
        for parent in root.parents:
            if not parent.is_relative_to(top):
                break
            if inside_home and home is not None and not parent.is_relative_to(home):
                break
            folders.append(parent)
    return list(reversed(folders))


@lru_cache(maxsize=64)
def _own_private_group(gid: int) -> bool:
    """``gid`` is the user's own private group (named as the user, with no other member)."""
    if gid != os.getegid():
        return False
    try:
        name = pwd.getpwuid(os.geteuid()).pw_name
        group = grp.getgrgid(gid)
    except (KeyError, OSError):
        return False
    return group.gr_name == name and set(group.gr_mem) <= {name}


def _others_may_write(info: os.stat_result) -> bool:
    mode = stat.S_IMODE(info.st_mode)
    return bool(mode & stat.S_IWOTH) or bool(
        mode & stat.S_IWGRP and not _own_private_group(info.st_gid)
    )


def _owner(uid: int) -> str:
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def distrust(path: Path, info: os.stat_result) -> str | None:
    """Why the instruction file ``path`` (``info``: its status, links followed) could be
    another user's words, or None when only the user or root could have written it: its
    owner, its mode, and the folders holding its name and, for a link, its target."""
    if info.st_uid not in (os.geteuid(), 0):
        return f"owned by {_owner(info.st_uid)}, not you or root"
    if _others_may_write(info):
        return f"others may write to it (mode {stat.S_IMODE(info.st_mode):o})"
    folders = {path.parent, Path(os.path.realpath(path)).parent}
    for folder in sorted(folders):
        try:
            held = os.stat(folder)
        except OSError:
            return f"its folder {folder} cannot be read"
        if _others_may_write(held):
            mode = stat.S_IMODE(held.st_mode)
            return f"others may write to its folder {folder} (mode {mode:o})"
        if held.st_uid not in (os.geteuid(), 0):
            return f"its folder {folder} is owned by {_owner(held.st_uid)}, not you or root"
    return None


_warned: set[tuple[Path, str]] = set()


def _skip(found: Found, path: Path, reason: str, warn: bool) -> None:
    found.skipped.append(Skipped(path, reason))
    if warn and (path, reason) not in _warned:  # once a process, not at every run
        _warned.add((path, reason))
        log.warning("%s was not read as project instructions: %s", path, reason)


def find_instructions(root: Path, home: Path | None, *, warn: bool = True) -> Found:
    """The ``AGENTS.md`` files of ``root`` that may be read, and those skipped (another
    user's, or in a folder others may write to; each logged once a process when ``warn``).
    Blocking: call it from a worker thread on the server."""
    found = Found()
    for folder in instruction_folders(root, home):
        path = folder / INSTRUCTIONS_FILE
        try:
            info = os.stat(path)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        reason = distrust(path, info)
        if reason is None:
            found.paths.append(path)
        else:
            _skip(found, path, reason, warn)
    return found


def instruction_paths(root: Path, home: Path | None) -> list[Path]:
    """The ``AGENTS.md`` files of ``root`` that may be read, outermost first (blocking)."""
    return find_instructions(root, home).paths


def _read_file(path: Path) -> bytes | None:
    """The file's first bytes, when it still is a file only the user or root could have
    written (checked on the file opened: a swap after ``find_instructions`` is seen)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or distrust(path, info) is not None:
            return None
        try:
            # One byte more than the cap tells that the file was longer.
            return handle.read(MAX_INSTRUCTIONS_BYTES + 1)
        except OSError:
            return None


def _size(path: Path, data: bytes) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return len(data)


def cap(files: Sequence[tuple[Path, str, int]]) -> list[Instructions]:
    """Fit ``(path, text, size)`` files into the byte budget, cutting the last that fits."""
    budget = MAX_INSTRUCTIONS_BYTES
    kept: list[Instructions] = []
    # The closest file matters most, so the budget goes to it first.
    for path, text, size in reversed(files):
        if budget <= 0:
            kept.append(Instructions(path, "", size, cut=True))
            continue
        data = text.encode("utf-8")
        # A text shorter than its file was already cut when it was read.
        cut = len(data) > budget or size > len(data)
        if len(data) > budget:
            text = data[:budget].decode("utf-8", errors="ignore")
        budget -= min(len(data), budget)
        kept.append(Instructions(path, text, max(size, len(data)), cut=cut))
    return list(reversed(kept))


def load_sync(root: Path, home: Path | None) -> list[Instructions]:
    """The instruction files of ``root`` read from disk (blocking)."""
    files: list[tuple[Path, str, int]] = []
    for path in instruction_paths(root, home):
        data = _read_file(path)
        if data is not None and len(data) > MAX_INSTRUCTIONS_BYTES:
            # Drop a character cut in half at the limit, so a long file is still text.
            data = data[:MAX_INSTRUCTIONS_BYTES].decode("utf-8", "ignore").encode("utf-8")
        text = decode_text(data) if data is not None else None
        if text is not None and data is not None:
            files.append((path, text, _size(path, data)))
    return cap(files)


async def load(root: Path, buffers: Buffers, home: Path | None) -> list[Instructions]:
    """The instruction files of ``root``: an open buffer's text, else the disk's."""
    on_disk = await anyio.to_thread.run_sync(load_sync, root, home)
    files: list[tuple[Path, str, int]] = []
    for item in on_disk:
        buffer = buffers.get(item.path)
        if buffer is not None:
            files.append((item.path, buffer.text, len(buffer.text.encode("utf-8"))))
        else:
            files.append((item.path, item.text, item.size))
    return cap(files)
