"""The model's tool calls, as a scripted provider's turns name them."""

from __future__ import annotations

from typing import Any


def bash(command: str) -> dict[str, Any]:
    """The model's call of the ``bash`` tool with ``command``."""
    return {"name": "bash", "arguments": {"command": command}}


def edit(old: str, new: str, path: str = "src/app.py", **extra: Any) -> dict[str, Any]:
    """The model's call of ``edit_file``: ``old`` becomes ``new`` in ``path``."""
    return {
        "name": "edit_file",
        "arguments": {"path": path, "old_text": old, "new_text": new, **extra},
    }


def one_call_a_turn(*calls: dict[str, Any]) -> dict[str, Any]:
    """A scripted-provider script whose model makes ``calls`` in order, one per turn."""
    return {"turns": [{"toolCalls": [call]} for call in calls]}
