"""The session commands, defined once here and offered by every front: ``agent/commands``
lists them, ``agent/command`` runs one (the terminal chat's ``/undo``, an ACP client's
``available_commands``). Each acts through what the other requests use: ``/undo`` is
``agent/undo`` on the session's last run with edits, ``/cost`` reads the session log."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from tether_protocol import (
    AGENT_COMMAND_METHOD,
    CommandParams,
    CommandResult,
    CommandsResult,
    SessionCommand,
    UsageEvent,
    parse_event,
)

from ..session.store import stored_session
from ..session.undo import UnknownRun, undo_run
from .dispatch import clip
from .server import TetherServer

Action = Callable[[TetherServer, CommandParams], Awaitable[CommandResult]]


def _refused(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(f"{AGENT_COMMAND_METHOD}: {clip(message)}")


async def _undo(ls: TetherServer, params: CommandParams) -> CommandResult:
    if params.session_id is None:
        return CommandResult(message="nothing to undo: no run yet")
    data = await stored_session(ls.log_writer, params.session_id)
    if data is None:
        raise _refused(f"sessionId: unknown session {params.session_id!r}")
    edited = [e.run_id for e in data.edits if e.run_id not in data.undone]
    if not edited:
        return CommandResult(message="nothing to undo: no run of this session edited a file")
    run_id = edited[-1]
    if ls.runs.in_flight(run_id):
        raise _refused(f"run {run_id!r} is still in flight; cancel it first")
    try:
        result = await undo_run(ls.log_writer, run_id, ls.workspace_model(), ls.editor)
    except UnknownRun as exc:
        raise _refused(str(exc)) from exc
    lines = [f"undid run {run_id}"]
    lines += [f"  put back: {_shown(ls, uri)}" for uri in result.reverted]
    lines += [f"  left alone (changed since): {_shown(ls, uri)}" for uri in result.conflicts]
    lines += [f"  left alone (not found): {_shown(ls, uri)}" for uri in result.not_found]
    lines += [f"  refused (outside the folder): {_shown(ls, uri)}" for uri in result.refused]
    if result.note:
        lines.append(f"  {result.note}")
    return CommandResult(message="\n".join(lines), files=list(result.reverted))


def _shown(ls: TetherServer, uri: str) -> str:
    """A file as the user knows it: its path under the workspace folder."""
    for root in ls.workspace_model().roots:
        prefix = root.as_uri() + "/"
        if uri.startswith(prefix):
            from urllib.parse import unquote

            return unquote(uri[len(prefix) :])
    return uri


async def _new(ls: TetherServer, params: CommandParams) -> CommandResult:
    return CommandResult(message="a new session starts with the next message", new_session=True)


async def _model(ls: TetherServer, params: CommandParams) -> CommandResult:
    name = (params.argument or "").strip()
    if name:
        ls.chosen_model = name
        return CommandResult(message=f"model: {name} from the next message on")
    current = ls.chosen_model or ls.config.model
    provider = ls.config.provider or "no provider"
    shown = current or "the provider's default"
    return CommandResult(message=f"model: {shown} ({provider}); /model NAME changes it")


async def _cost(ls: TetherServer, params: CommandParams) -> CommandResult:
    if params.session_id is None:
        return CommandResult(message="no run yet: nothing spent")
    data = await stored_session(ls.log_writer, params.session_id)
    if data is None:
        raise _refused(f"sessionId: unknown session {params.session_id!r}")
    last: dict[str, UsageEvent] = {}  # usage is cumulative within a run: its last counts
    for raw in data.events:
        event = parse_event(raw)
        if isinstance(event, UsageEvent):
            last[event.run_id] = event
    tokens_in = sum(u.input_tokens for u in last.values())
    tokens_out = sum(u.output_tokens for u in last.values())
    costs = [u.cost_usd for u in last.values() if u.cost_usd is not None]
    cost = f" · ${sum(costs):.4f}" if costs else " · cost unknown (no prices for this model)"
    runs = len(last)
    return CommandResult(
        message=(
            f"session {params.session_id}: {runs} run{'s' if runs != 1 else ''} · "
            f"{tokens_in:,} in / {tokens_out:,} out tokens{cost}"
        )
    )


COMMANDS: dict[str, tuple[SessionCommand, Action]] = {
    "undo": (SessionCommand(name="undo", description="put back the last run's edits"), _undo),
    "new": (SessionCommand(name="new", description="start a new session"), _new),
    "model": (
        SessionCommand(name="model", description="show or change the model", argument="[NAME]"),
        _model,
    ),
    "cost": (SessionCommand(name="cost", description="tokens and cost of the session"), _cost),
}
"""The session commands, in the order fronts list them."""


async def list_commands(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/commands``."""
    return CommandsResult(commands=[command for command, _ in COMMANDS.values()]).to_wire()


async def run_command(ls: TetherServer, params: CommandParams) -> dict[str, Any]:
    """``agent/command`` (params validated)."""
    found = COMMANDS.get(params.name)
    if found is None:
        known = ", ".join(COMMANDS)
        raise _refused(f"name: no command {params.name!r}; the commands: {known}")
    _, action = found
    result = await action(ls, params)
    return result.to_wire()
