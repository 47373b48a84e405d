"""``/rewind``: list a session's checkpoints, or go back to before one — the session command
every front offers (``commands.py``), acting through ``agent/checkpoints`` and
``agent/rewind`` (``RunManager.checkpoints``, ``RunManager.rewind``)."""

from __future__ import annotations

from tether_protocol import Checkpoint, CommandResult, RewindParams, RewindResult

from ..host import Editor
from ..text.display import shown
from ..workspace.folders import Workspace, path_from_uri
from .manager import InvalidRun, RunManager

USAGE = "/rewind ID [files|conversation|both] [force]"
WHATS = ("files", "conversation", "both")
MAX_FILES_SHOWN = 4


def checkpoint_line(checkpoint: Checkpoint) -> str:
    """One checkpoint on one line: id, time, run and step, the call and what it changed."""
    files = checkpoint.files
    changed = ", ".join(f"{shown(f.path)} {f.change}" for f in files[:MAX_FILES_SHOWN])
    if len(files) > MAX_FILES_SHOWN:
        changed += f", and {len(files) - MAX_FILES_SHOWN} more"
    changed = changed or "no file changed"
    if checkpoint.incomplete:
        changed += f"; not captured: {shown(checkpoint.incomplete)}"
    call = shown(f"{checkpoint.tool}: {checkpoint.title}")
    if len(call) > 80:
        call = call[:79] + "…"
    return (
        f"{checkpoint.id}  {checkpoint.time}  {checkpoint.run_id} step {checkpoint.step}  "
        f"{call}  ({changed})"
    )


def result_lines(result: RewindResult, workspace: Workspace) -> list[str]:
    """What a rewind did, a line each (files as the user knows them)."""

    def named(uri: str) -> str:
        path = path_from_uri(uri)
        return shown(uri if path is None else workspace.display(path))

    lines = [f"restored: {named(u)}" for u in result.restored]
    lines += [f"left alone (changed since): {named(u)}" for u in result.conflicts]
    lines += [f"not restorable (not kept): {named(u)}" for u in result.not_restorable]
    lines += [f"could not be written: {named(u)}" for u in result.failed]
    if result.note:
        lines.append(shown(result.note))
    return lines


async def rewind_command(
    runs: RunManager,
    workspace: Workspace,
    editor: Editor,
    session_id: str | None,
    argument: str | None,
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
    result = await runs.rewind(params, workspace, editor)
    lines = [f"rewound to before {words[0]} ({what})"]
    lines += [f"  {line}" for line in result_lines(result, workspace)]
    if result.conversation:
        lines.append("  the conversation continues from before that step")
    return CommandResult(message="\n".join(lines), files=list(result.restored))
