"""Keeping the screens a test checks, as text captures for the docs and the evidence.

``TETHER_NVIM_CHAT_SCREEN=path`` (Neovim) and ``TETHER_CHAT_SCREEN=path`` (Emacs) name the
file the screen with an approval waiting goes to; the screen after it was answered goes next
to it, "approval" in the name replaced by "after" (``nvim-approval.txt`` →
``nvim-after.txt``), or ``-after`` added (``chat.txt`` → ``chat-after.txt``).
"""

from __future__ import annotations

import os
from pathlib import Path


def screen_path(variable: str, moment: str) -> Path | None:
    """Where to keep the screen of ``moment`` ("approval" or "after"), if ``variable`` is set."""
    value = os.environ.get(variable)
    if not value:
        return None
    path = Path(value)
    if moment == "approval":
        return path
    if "approval" in path.name:
        return path.with_name(path.name.replace("approval", moment))
    return path.with_name(f"{path.stem}-{moment}{path.suffix}")


def keep_screen(variable: str, moment: str, screen: str) -> None:
    """Writes ``screen`` where ``variable`` says (nothing when it is not set)."""
    path = screen_path(variable, moment)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(screen)
