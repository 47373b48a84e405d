"""``tether undo``: put back the files a finished run edited, through a fresh server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tether_protocol import AGENT_UNDO_METHOD

from ..session.undo import hunks_note
from ..workspace.folders import path_from_uri
from .connection import ServerError
from .headless import connect
from .terminal_run import EXIT_NOT_DONE, EXIT_OK, EXIT_USAGE, _server_error, terminal_message

LISTS = (
    ("reverted", "put back"),
    ("conflicts", "left alone: changed since the run"),
    ("notFound", "left alone: neither before nor after the run's edit"),
    ("refused", "refused: outside the folder"),
)


def _shown(uri: str, root: Path) -> str:
    path = path_from_uri(uri)
    if path is None:
        return uri
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


async def undo_in_terminal(root: Path, run_id: str, options: dict[str, Any]) -> int:
    """Undo run ``run_id`` in ``root``; 0 when every file went back (a file changed since:
    every hunk of the run's), 1 when some did not."""
    try:
        async with connect(root, options) as client:
            result = await client.request(AGENT_UNDO_METHOD, {"runId": run_id})
    except (ServerError, BaseExceptionGroup) as exc:
        error = _server_error(exc)
        if error is None:
            raise
        print(f"tether: {terminal_message(error)}", file=sys.stderr)
        return EXIT_USAGE
    if result.get("note"):
        print(f"{run_id}: {result['note']}")
    for key, label in LISTS:
        for uri in result.get(key) or []:
            print(f"{label}: {_shown(uri, root)}")
        if key == "reverted":
            for partial in result.get("partial") or []:
                counts = partial.get("revertedHunks", 0), partial.get("keptHunks", 0)
                print(f"partly put back: {_shown(partial['uri'], root)} ({hunks_note(*counts)})")
    left = any(result.get(key) for key, _ in LISTS[1:]) or any(
        p.get("keptHunks") for p in result.get("partial") or []
    )
    return EXIT_NOT_DONE if left else EXIT_OK
