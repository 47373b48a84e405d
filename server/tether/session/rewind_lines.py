"""A session's checkpoints and a rewind's result in lines a person reads: ``/rewind`` in
every chat and ``tether rewind`` say them alike. Every string from outside (a command, a
file name) goes through the display sanitiser."""

from __future__ import annotations

from collections.abc import Callable

from tether_protocol import Checkpoint, RewindResult

from ..text.display import shown

USAGE = "/rewind ID [files|conversation|both] [force]"
MAX_FILES_SHOWN = 4
MAX_CALL_CHARS = 80


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
    if len(call) > MAX_CALL_CHARS:
        call = call[: MAX_CALL_CHARS - 1] + "…"
    return (
        f"{checkpoint.id}  {checkpoint.time}  {checkpoint.run_id} step {checkpoint.step}  "
        f"{call}  ({changed})"
    )


def result_lines(result: RewindResult, named: Callable[[str], str]) -> list[str]:
    """What a rewind did, a line each (``named``: a URI as the reader knows the file)."""

    def file(uri: str) -> str:
        return shown(named(uri))

    lines = [f"restored: {file(u)}" for u in result.restored]
    lines += [
        f"left alone (changed since; force puts it back): {file(u)}" for u in result.conflicts
    ]
    lines += [f"not restorable (not kept): {file(u)}" for u in result.not_restorable]
    lines += [f"could not be written: {file(u)}" for u in result.failed]
    if result.note:
        lines.append(shown(result.note))
    if result.conversation:
        lines.append("the conversation continues from before that step")
    return lines
