"""``@file`` mentions in a prompt: the mentioned files' text goes with the user's message.

A mention is ``@`` at the start of the prompt or after whitespace, followed by a path
relative to the workspace (``@src/app.py``, ``@README.md,``: trailing punctuation is not
part of it); ``me@example.com`` is no mention. An existing file inside the workspace is
attached — the open buffer's text first (what the user sees, unsaved), else the disk's — up
to a cap per file and a number of files. A sensitive file (``sensitive.py``: keys, secrets,
settings that run code) or one outside the workspace is not attached, and the message says
why; a mention that names no file is left as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import anyio.to_thread

from ..errors import ToolError
from ..workspace.folders import Workspace
from ..workspace.sensitive import reason_for_path
from .frames import ATTACHED_FILE, framed, inline, quote

MENTION = re.compile(r"(?:^|(?<=\s))@([^\s@]+)")
TRAILING = ".,;:!?)]}'\"`"
"""Punctuation that ends a sentence around a mention rather than its path."""
MAX_FILES = 5
"""Files attached at most; later mentions are named in a note."""
MAX_MENTIONS = 50
"""Mentions looked at at most (each costs a look at the disk); later ones stay as text."""
MAX_FILE_CHARS = 32 * 1024
"""Characters of one file attached at most (the model can read the rest)."""


def mentioned(prompt: str) -> list[str]:
    """The paths mentioned with ``@``, in order, each once, trailing punctuation dropped."""
    found: list[str] = []
    for match in MENTION.finditer(prompt):
        name = match.group(1).rstrip(TRAILING)
        if name and name not in found:
            found.append(name)
    return found


@dataclass(slots=True)
class Attachments:
    """What the mentions of a prompt came to."""

    files: list[tuple[str, str, bool]] = field(default_factory=list)
    """(shown path, text, cut) of each attached file."""
    notes: list[str] = field(default_factory=list)
    """Why a mentioned file was not attached."""


def _outside(workspace: Workspace, name: str) -> bool:
    """``name`` names an existing file outside the workspace (blocking)."""
    given = Path(name).expanduser()
    candidate = given if given.is_absolute() else workspace.root / given
    try:
        return candidate.resolve().is_file()
    except (OSError, RuntimeError):
        return False


async def _attach(workspace: Workspace, name: str, found: Attachments) -> None:
    try:
        path = workspace.resolve(name)
    except ToolError:
        if await anyio.to_thread.run_sync(_outside, workspace, name):
            found.notes.append(f"{quote(name)} was not attached: it is outside the workspace.")
        return
    shown = workspace.display(path)
    if workspace.buffers.get(path) is None and not await anyio.to_thread.run_sync(path.is_file):
        return  # not a file: the mention stays plain text
    reason = reason_for_path(path, workspace.roots)
    if reason is not None:
        found.notes.append(f"{quote(shown)} was not attached: it is a sensitive file ({reason}).")
        return
    if len(found.files) >= MAX_FILES:
        found.notes.append(f"{quote(shown)} was not attached: at most {MAX_FILES} files are.")
        return
    try:
        snapshot = await workspace.read_text(path)
    except ToolError as exc:
        found.notes.append(f"{quote(shown)} was not attached: {inline(str(exc))}.")
        return
    text = snapshot.text
    cut = len(text) > MAX_FILE_CHARS
    found.files.append((shown, text[:MAX_FILE_CHARS] if cut else text, cut))


async def attachments(prompt: str, workspace: Workspace) -> Attachments:
    """The files the prompt mentions, read, and the notes about those left out."""
    found = Attachments()
    for name in mentioned(prompt)[:MAX_MENTIONS]:
        await _attach(workspace, name, found)
    return found


def with_attachments(prompt: str, found: Attachments) -> str:
    """The user's message: the prompt, then each attached file framed as the user's data,
    then the notes (each file's path quoted: no name can add a line or close a frame)."""
    if not found.files and not found.notes:
        return prompt
    parts = [prompt, ""]
    for shown, text, cut in found.files:
        note = f"[only the first {MAX_FILE_CHARS} characters; read the file for more]"
        body = text.rstrip("\n")
        parts.append(framed(ATTACHED_FILE, {"path": shown}, body, [note] if cut else []))
    parts.extend(found.notes)
    return "\n".join(parts)


async def expand_mentions(prompt: str, workspace: Workspace) -> str:
    """The prompt with its ``@file`` mentions attached (the prompt itself when none)."""
    if "@" not in prompt:
        return prompt
    return with_attachments(prompt, await attachments(prompt, workspace))
