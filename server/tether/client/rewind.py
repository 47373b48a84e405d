"""``tether rewind``: a session's checkpoints listed, or its files and conversation put back
to before one of them, through a fresh server (``agent/checkpoints``, ``agent/rewind``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tether_protocol import (
    AGENT_CHECKPOINTS_METHOD,
    AGENT_REWIND_METHOD,
    CheckpointsResult,
    RewindResult,
)

from ..session.rewind_lines import checkpoint_line, result_lines
from ..workspace.folders import path_from_uri
from .connection import ServerError
from .headless import connect
from .terminal_run import EXIT_NOT_DONE, EXIT_OK, EXIT_USAGE, _server_error, terminal_message


def _named(root: Path) -> Any:
    def named(uri: str) -> str:
        path = path_from_uri(uri)
        if path is None:
            return uri
        try:
            return str(path.relative_to(root))
        except ValueError:
            return str(path)

    return named


async def rewind_in_terminal(
    root: Path,
    session_id: str,
    checkpoint_id: str | None,
    options: dict[str, Any],
    *,
    restore: str = "both",
    force: bool = False,
    as_json: bool = False,
) -> int:
    """List session ``session_id``'s checkpoints (``checkpoint_id`` None), or rewind it to
    before one: 0 when every file went back, 1 when some did not, 2 for an error."""
    try:
        async with connect(root, options, events=False) as client:
            params: dict[str, Any]
            if checkpoint_id is None:
                params = {"sessionId": session_id}
                answer = await client.request(AGENT_CHECKPOINTS_METHOD, params)
            else:
                params = {
                    "sessionId": session_id,
                    "checkpointId": checkpoint_id,
                    "restore": restore,
                    "force": force,
                }
                answer = await client.request(AGENT_REWIND_METHOD, params)
    except (ServerError, BaseExceptionGroup) as exc:
        error = _server_error(exc)
        if error is None:
            raise
        print(f"tether: {terminal_message(error)}", file=sys.stderr)
        return EXIT_USAGE
    if as_json:
        print(json.dumps(answer, indent=2))
    if checkpoint_id is None:
        listed = CheckpointsResult.model_validate(answer)
        if not as_json:
            for checkpoint in listed.checkpoints:
                print(checkpoint_line(checkpoint))
            if not listed.checkpoints:
                print(f"session {session_id}: no checkpoints (no step changed files)")
        return EXIT_OK
    result = RewindResult.model_validate(answer)
    if not as_json:
        print(f"rewound session {session_id} to before {checkpoint_id} ({restore})")
        for line in result_lines(result, _named(root)):
            print(line)
    left = result.conflicts or result.not_restorable or result.failed
    return EXIT_NOT_DONE if left else EXIT_OK
