"""``/rewind``: list a session's checkpoints, or go back to before one — the session command
every front offers (``commands.py``), acting through ``agent/checkpoints`` and
``agent/rewind`` (``RunManager.checkpoints``, ``RunManager.rewind``)."""

from __future__ import annotations

from tether_protocol import CommandResult, RewindParams

from ..host import Editor
from ..session.rewind_lines import USAGE, checkpoint_line, result_lines
from ..workspace.folders import Workspace, path_from_uri
from .manager import InvalidRun, RunManager

__all__ = ["USAGE", "rewind_command"]

WHATS = ("files", "conversation", "both")


async def rewind_command(
    runs: RunManager,
    workspace: Workspace,
    editor: Editor,
    session_id: str | None,
    argument: str | None,
    cap: int,
) -> CommandResult:
    """``/rewind`` (a list), or ``/rewind ID [files|conversation|both] [force]``;
    ``InvalidRun`` naming why it cannot."""
    if session_id is None:
        return CommandResult(message="nothing to rewind: no run yet")
    words = (argument or "").split()
    if not words:
        found = await runs.checkpoints(session_id, workspace)
        if not found:
            return CommandResult(message="no checkpoints: no step of this session changed files")
        lines = [checkpoint_line(c) for c in found]
        lines.append(f"{USAGE} goes back to before one (default: both)")
        return CommandResult(message="\n".join(lines), choices=[c.id for c in found])
    what = words[1] if len(words) > 1 else "both"
    force = words[2:] == ["force"]
    if what not in WHATS or len(words) > 3 or (len(words) == 3 and not force):
        raise InvalidRun(f"argument: expected {USAGE}: files, conversation or both")
    params = RewindParams(
        session_id=session_id,
        checkpoint_id=words[0],
        restore=what,  # type: ignore[arg-type]
        force=force,
    )
    result = await runs.rewind(params, workspace, editor, cap)

    def named(uri: str) -> str:
        path = path_from_uri(uri)
        return uri if path is None else workspace.display(path)

    lines = [f"rewound to before {words[0]} ({what})"]
    lines += [f"  {line}" for line in result_lines(result, named)]
    return CommandResult(message="\n".join(lines), files=list(result.restored))
