"""The session commands, defined once here and offered by every front: ``agent/commands``
lists them and ``agent/command`` runs one under ``tether serve`` (the terminal chat's
``/undo``), and ``tether acp`` offers them as ``available_commands`` (a prompt ``/undo``).
Each acts through what the other requests use: ``/undo`` is ``agent/undo`` on the session's
last run with edits, ``/compact`` is the compaction a run does, on the session's stored
conversation (``RunManager.compact``), ``/cost`` reads the session log."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, get_args

from tether_protocol import (
    CommandParams,
    CommandResult,
    SessionCommand,
    UsageEvent,
    parse_event,
)
from tether_protocol.config import ReasoningEffort

from ..config.layers import Config
from ..errors import ProviderError
from ..host import Editor
from ..providers.models import known_models
from ..session.store import stored_session
from ..session.undo import UnknownRun, undo_lines
from ..session.writer import SessionLogWriter
from ..text.display import shown
from ..workspace.folders import Workspace
from .effort_note import effort_ignored
from .jobs_command import USAGE as JOBS_USAGE
from .jobs_command import jobs_command
from .manager import InvalidRun, RunManager
from .rewind_command import USAGE, rewind_command


class CommandHost(Protocol):
    """What a command acts on: the front's session log, runs, folder, editor and model."""

    chosen_model: str | None
    """The model ``/model NAME`` picked for the next runs (None: the configured one)."""
    chosen_effort: str | None
    """The effort ``/effort VALUE`` picked for the next runs (None: ``reasoningEffort``)."""

    @property
    def log_writer(self) -> SessionLogWriter: ...

    @property
    def runs(self) -> RunManager: ...

    @property
    def editor(self) -> Editor: ...

    @property
    def config(self) -> Config: ...

    def workspace_model(self) -> Workspace: ...


Action = Callable[[CommandHost, CommandParams], Awaitable[CommandResult]]


class CommandRefused(ValueError):
    """A command that cannot run as asked (an unknown session, a run still in flight):
    each front answers it as its invalid-params error."""


def _refused(message: str) -> CommandRefused:
    return CommandRefused(message)


async def _undo(host: CommandHost, params: CommandParams) -> CommandResult:
    if params.session_id is None:
        return CommandResult(message="nothing to undo: no run yet")
    data = await stored_session(host.log_writer, params.session_id)
    if data is None:
        raise _refused(f"sessionId: unknown session {params.session_id!r}")
    edited = [e.run_id for e in data.edits if e.run_id not in data.undone]
    if not edited:
        return CommandResult(message="nothing to undo: no run of this session edited a file")
    run_id = edited[-1]
    if host.runs.in_flight(run_id):
        raise _refused(f"run {run_id!r} is still in flight; cancel it first")
    try:
        result = await host.runs.undo(run_id, host.workspace_model(), host.editor)
    except UnknownRun as exc:
        raise _refused(str(exc)) from exc
    lines = [f"undid run {run_id}"]
    lines += [f"  {line}" for line in undo_lines(result, lambda uri: _shown(host, uri))]
    if result.note:
        lines.append(f"  {result.note}")
    files = list(result.reverted) + [p.uri for p in result.partial]
    return CommandResult(message="\n".join(lines), files=files)


def _shown(host: CommandHost, uri: str) -> str:
    """A file as the user knows it: its path under the workspace folder."""
    for root in host.workspace_model().roots:
        prefix = root.as_uri() + "/"
        if uri.startswith(prefix):
            from urllib.parse import unquote

            return unquote(uri[len(prefix) :])
    return uri


async def _rewind(host: CommandHost, params: CommandParams) -> CommandResult:
    try:
        return await rewind_command(
            host.runs,
            host.workspace_model(),
            host.editor,
            params.session_id,
            params.argument,
            host.config.checkpoint_max_file_bytes,
        )
    except InvalidRun as exc:
        raise _refused(str(exc)) from exc


async def _new(host: CommandHost, params: CommandParams) -> CommandResult:
    return CommandResult(message="a new session starts with the next message", new_session=True)


async def _model(host: CommandHost, params: CommandParams) -> CommandResult:
    name = (params.argument or "").strip()
    if name:
        host.chosen_model = name
        return CommandResult(message=f"model: {name} from the next message on")
    current = host.chosen_model or host.config.model
    provider = host.config.provider or "no provider"
    shown = current or "the provider's default"
    # The table's models are those of the provider's own API, not of a server at baseUrl.
    known = [] if host.config.base_url is not None else known_models(host.config.provider)
    choices = list(dict.fromkeys([*([current] if current else []), *known]))
    message = f"model: {shown} ({provider}); /model NAME changes it"
    return CommandResult(message=message, choices=choices)


EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)
"""The values of ``reasoningEffort`` and ``/effort``."""


async def _effort(host: CommandHost, params: CommandParams) -> CommandResult:
    value = (params.argument or "").strip()
    shown = "|".join(EFFORTS)
    if value:
        if value.lower() not in EFFORTS:
            raise _refused(f"argument: no effort {value[:40]!r}; the efforts: {', '.join(EFFORTS)}")
        host.chosen_effort = value.lower()
        message = f"effort: {value.lower()} from the next message on"
        return CommandResult(message=_with_effort_note(host, message, value.lower()))
    current = host.chosen_effort or host.config.reasoning_effort
    return CommandResult(
        message=_with_effort_note(host, f"effort: {current}; /effort {shown} changes it", current),
        choices=list(EFFORTS),
    )


def _with_effort_note(host: CommandHost, message: str, effort: str) -> str:
    """``message``, saying why ``effort`` will reach no model when it will not."""
    ignored = None if effort == "off" else effort_ignored(host.config, _current_model(host))
    return message if ignored is None else f"{message}; {ignored}"


def _current_model(host: CommandHost) -> str | None:
    return host.chosen_model or host.config.model


async def _compact(host: CommandHost, params: CommandParams) -> CommandResult:
    if params.session_id is None:
        return CommandResult(message="nothing to compact: no session yet")
    try:
        done = await host.runs.compact(
            params.session_id,
            host.config,
            host.workspace_model(),
            host.editor,
            model=host.chosen_model,
        )
    except InvalidRun as exc:
        raise _refused(str(exc)) from exc
    except ProviderError as exc:
        return CommandResult(message=f"could not compact: {exc}")
    if done is None:
        return CommandResult(
            message="nothing to compact: no turn before the latest one to summarize"
        )
    before, after = done
    return CommandResult(
        message=f"compacted: {before:,} → {after:,} tokens (earlier turns summarized)"
    )


async def _cost(host: CommandHost, params: CommandParams) -> CommandResult:
    if params.session_id is None:
        return CommandResult(message="no run yet: nothing spent")
    data = await stored_session(host.log_writer, params.session_id)
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


async def _jobs(host: CommandHost, params: CommandParams) -> CommandResult:
    return await jobs_command(host.runs, params)


COMMANDS: dict[str, tuple[SessionCommand, Action]] = {
    "undo": (SessionCommand(name="undo", description="put back the last run's edits"), _undo),
    "rewind": (
        SessionCommand(
            name="rewind",
            description="list the checkpoints, or go back to before a step",
            argument=USAGE.removeprefix("/rewind "),
        ),
        _rewind,
    ),
    "new": (SessionCommand(name="new", description="start a new session"), _new),
    "model": (
        SessionCommand(name="model", description="show or change the model", argument="[NAME]"),
        _model,
    ),
    "effort": (
        SessionCommand(
            name="effort",
            description="show or change how hard the model thinks",
            argument="[" + "|".join(EFFORTS) + "]",
        ),
        _effort,
    ),
    "compact": (
        SessionCommand(name="compact", description="summarize the earlier turns of the session"),
        _compact,
    ),
    "cost": (SessionCommand(name="cost", description="tokens and cost of the session"), _cost),
    "jobs": (
        SessionCommand(
            name="jobs",
            description="list the background jobs, or stop one",
            argument=JOBS_USAGE.removeprefix("/jobs "),
        ),
        _jobs,
    ),
}
"""The session commands, in the order fronts list them."""


async def run_command(host: CommandHost, params: CommandParams) -> CommandResult:
    """Run the command ``params`` names; ``CommandRefused`` says why it cannot."""
    found = COMMANDS.get(params.name)
    if found is None:
        known = ", ".join(COMMANDS)
        raise _refused(f"name: no command {params.name!r}; the commands: {known}")
    _, action = found
    result = await action(host, params)
    # Shown as it is in every front: what came from outside in it (a provider's error,
    # a name the user typed) escaped once here (escaping again changes nothing).
    return result.model_copy(update={"message": shown(result.message, lines=True)})
