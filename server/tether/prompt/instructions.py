"""Project instructions: the ``AGENTS.md`` files of the workspace and the folders above it.

``AGENTS.md`` is the cross-tool convention (Codex, Cursor, Aider, ...) for telling coding
agents how to work in a repository. Tether reads the one at the workspace root and those in
the folders above it, up to the user's home folder when the workspace lies inside it (else
up to the filesystem root), outermost first so the closest file is read last. The text is
the repository's, so it is handed to the model as text only: it cannot change settings or
approvals.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from ..host import Buffers
from ..workspace.folders import decode_text

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


def home_folder(environ: Mapping[str, str] | None = None) -> Path | None:
    """The user's home folder (``$HOME``), resolved, if known."""
    env = os.environ if environ is None else environ
    home = env.get("HOME")
    return Path(home).resolve() if home else None


def instruction_paths(root: Path, home: Path | None) -> list[Path]:
    """The existing ``AGENTS.md`` files from the top folder down to ``root``.

    The walk goes up from ``root`` to ``home`` (included) when ``root`` is inside it, else
    to the filesystem root. Blocking: call it from a worker thread on the server.
    """
    root = root.resolve()
    folders = [root]
    for parent in root.parents:
        if home is not None and root.is_relative_to(home) and not parent.is_relative_to(home):
            break
        folders.append(parent)
    return [f / INSTRUCTIONS_FILE for f in reversed(folders) if (f / INSTRUCTIONS_FILE).is_file()]


def _read_file(path: Path) -> bytes | None:
    try:
        with path.open("rb") as handle:
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
