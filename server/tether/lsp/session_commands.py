"""``agent/commands`` and ``agent/command``: the session commands of ``run/commands.py``
(defined once, for every front) over LSP."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from tether_protocol import AGENT_COMMAND_METHOD, CommandParams, CommandsResult

from ..run.commands import COMMANDS, CommandRefused
from ..run.commands import run_command as run_session_command
from ..text.echo import clip
from .server import TetherServer


async def list_commands(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/commands``."""
    return CommandsResult(commands=[command for command, _ in COMMANDS.values()]).to_wire()


async def run_command(ls: TetherServer, params: CommandParams) -> dict[str, Any]:
    """``agent/command`` (params validated)."""
    try:
        result = await run_session_command(ls, params)
    except CommandRefused as exc:
        raise JsonRpcInvalidParams(f"{AGENT_COMMAND_METHOD}: {clip(str(exc))}") from exc
    return result.to_wire()
