"""The server's methods: ``agent/*``, the ``tether.*`` commands and the LSP notifications,
each from its params (validated) to the run manager, the session log or the rules, and
back as an answer."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from lsprotocol import types
from pydantic import BaseModel
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidParams

from tether_protocol import (
    AGENT_CANCEL_METHOD,
    AGENT_CHECKPOINTS_METHOD,
    AGENT_COMMAND_METHOD,
    AGENT_COMMANDS_METHOD,
    AGENT_HISTORY_METHOD,
    AGENT_JOB_OUTPUT_METHOD,
    AGENT_JOB_STOP_METHOD,
    AGENT_JOBS_METHOD,
    AGENT_REWIND_METHOD,
    AGENT_RUN_METHOD,
    AGENT_SESSIONS_METHOD,
    AGENT_STEER_METHOD,
    AGENT_UNDO_METHOD,
    COMMAND_CANCEL,
    COMMAND_RUN,
    CancelParams,
    CheckpointsParams,
    CheckpointsResult,
    CommandParams,
    HistoryParams,
    HistoryResult,
    RewindParams,
    RunParams,
    SessionsParams,
    SessionsResult,
    SteerParams,
    UndoParams,
)

from ..config.layers import ConfigError
from ..host import EventSink
from ..policy.requests import RULES_PARAMS, RulesRequestError
from ..providers import primed_name, warm_up_thread
from ..run.front import serve_run
from ..run.manager import InvalidRun, Run, start_background
from ..sandbox.probe import sandbox_problem
from ..session.store import stored_session, stored_sessions
from ..session.undo import UnknownRun
from ..text.echo import clip
from ..text.params import ParamsError, validated
from ..tools.registry import ToolRegistry
from .host import NotifySink, ProgressSink, nul_free
from .jobs_requests import job_output_request, list_jobs, stop_job_request
from .plain import TranscriptSink, outcome_message, run_params_from_arguments
from .server import TetherServer
from .session_commands import list_commands
from .session_commands import run_command as run_command_named

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


def validate_params(model: type[M], params: Any, method: str) -> M:
    """Wire params → model, or JSON-RPC -32602 naming the first bad field."""
    try:
        return validated(model, params)
    except ParamsError as exc:
        raise JsonRpcInvalidParams(f"{method}: {exc}") from exc


def _read_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


# --- runs --------------------------------------------------------------------------------
async def start_progress(ls: TetherServer, run: Run) -> None:
    """Progress on the client's token, or on one the server creates if it may."""
    if run.progress_token is None:
        if not get_capability(ls.client_capabilities, "window.work_done_progress", False):
            return
        token = f"tether-{run.run_id}"
        try:
            request = ls.send_request(types.WINDOW_WORK_DONE_PROGRESS_CREATE, {"token": token})
            creating = asyncio.wrap_future(request)
            # A run cancelled meanwhile leaves the answer to nobody: read it, so that an
            # error answer is not logged as an unretrieved task exception.
            creating.add_done_callback(_read_outcome)
            await asyncio.shield(creating)
        except Exception:
            log.warning("the client refused progress token %s", token)
            return
        run.progress_token = token
    if run.loop is not None:
        sink = ProgressSink(ls, run.progress_token, run.prompt, run.loop.limits.max_steps)
        run.loop.events.add_sink(sink)


async def run_agent(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/run``: validate, run to the outcome, and return the result."""
    params = validate_params(RunParams, raw, "agent/run")
    if (problem := ls.usable_settings()) is not None:  # shown at initialize, and again here
        raise JsonRpcInvalidParams(f"agent/run: {problem}")
    if params.model is None and ls.chosen_model is not None:  # picked with /model
        params = params.model_copy(update={"model": ls.chosen_model})
    # A client without events has no plugin to show them: it gets the transcript as log
    # lines and the outcome as a message instead.
    events = ls.client_tether.events
    sinks: list[EventSink] = [NotifySink(ls) if events else TranscriptSink(ls)]
    try:
        config = ls.config
        if ls.chosen_effort is not None:  # picked with /effort
            config = replace(config, reasoning_effort=ls.chosen_effort)  # type: ignore[arg-type]
        run = await ls.runs.create(params, config, ls.workspace_model(), sinks, ls.editor)
    except InvalidRun as exc:
        raise JsonRpcInvalidParams(f"agent/run: {clip(str(exc))}") from exc

    result = await serve_run(ls.runs, run, start_progress(ls, run))
    if not events:
        ls.window_show_message(outcome_message(result))
    wire = result.to_wire()
    for key in ("answer", "error"):  # shown, as the events are (``NotifySink``)
        said = wire.get(key)
        if isinstance(said, str):
            wire[key] = nul_free(said)
    return wire


async def run_command(ls: TetherServer, arguments: list[Any]) -> dict[str, Any]:
    """``workspace/executeCommand tether.run``: the arguments editors send (a string,
    several, or the object); a refusal is also shown, since Helix only logs it."""
    try:
        params = run_params_from_arguments(arguments, ls.buffers.most_recent_uri())
        return await run_agent(ls, params)
    except JsonRpcInvalidParams as exc:
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=f"Tether: {exc.message}")
        )
        raise


def cancel_run(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/cancel`` and ``tether.cancel``."""
    params = validate_params(CancelParams, raw, "agent/cancel")
    return {"cancelled": ls.runs.cancel(params.run_id)}


def steer_run(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/steer``."""
    steer = validate_params(SteerParams, raw, AGENT_STEER_METHOD)
    return {"accepted": ls.runs.steer(steer.run_id, steer.message)}


# --- the session log ---------------------------------------------------------------------
async def undo(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/undo``."""
    params = validate_params(UndoParams, raw, "agent/undo")
    run_id = params.run_id
    if ls.runs.in_flight(run_id):
        message = f"runId: run {run_id!r} is still in flight; cancel it first"
        raise JsonRpcInvalidParams(f"agent/undo: {clip(message)}")
    try:
        result = await ls.runs.undo(run_id, ls.workspace_model(), ls.editor)
    except UnknownRun as exc:
        raise JsonRpcInvalidParams(f"agent/undo: {clip(str(exc))}") from exc
    return result.to_wire()


async def list_checkpoints(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/checkpoints``."""
    params = validate_params(CheckpointsParams, raw, AGENT_CHECKPOINTS_METHOD)
    try:
        found = await ls.runs.checkpoints(params.session_id, ls.workspace_model())
    except InvalidRun as exc:
        raise JsonRpcInvalidParams(f"{AGENT_CHECKPOINTS_METHOD}: {clip(str(exc))}") from exc
    return CheckpointsResult(session_id=params.session_id, checkpoints=found).to_wire()


async def rewind(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/rewind``."""
    params = validate_params(RewindParams, raw, AGENT_REWIND_METHOD)
    try:
        cap = ls.config.checkpoint_max_file_bytes
        result = await ls.runs.rewind(params, ls.workspace_model(), ls.editor, cap)
    except InvalidRun as exc:
        raise JsonRpcInvalidParams(f"{AGENT_REWIND_METHOD}: {clip(str(exc))}") from exc
    return result.to_wire()


async def list_sessions(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/sessions``."""
    params = validate_params(SessionsParams, raw, "agent/sessions")
    found = await stored_sessions(ls.log_writer, params.limit)
    return SessionsResult(sessions=found).to_wire()


async def session_history(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/history``."""
    params = validate_params(HistoryParams, raw, "agent/history")
    data = await stored_session(ls.log_writer, params.session_id)
    if data is None:
        message = f"sessionId: unknown session {params.session_id!r}"
        raise JsonRpcInvalidParams(f"agent/history: {clip(message)}")
    return HistoryResult(session_id=params.session_id, events=data.events).to_wire()


async def session_command(ls: TetherServer, raw: Any) -> dict[str, Any]:
    """``agent/command``."""
    return await run_command_named(ls, validate_params(CommandParams, raw, "agent/command"))


# --- rules -------------------------------------------------------------------------------
def _rules_handler(method: str) -> Callable[[TetherServer, Any], Awaitable[dict[str, Any]]]:
    """``agent/rules/list``, ``agent/rules/add`` or ``agent/rules/remove``."""

    async def agent_rules(ls: TetherServer, raw: Any) -> dict[str, Any]:
        roots = ls.workspace_model().roots
        try:
            return await ls.rules.answer(method, raw, roots, ls.runs.session_policy)
        except RulesRequestError as exc:
            raise JsonRpcInvalidParams(f"{method}: {exc}") from exc

    return agent_rules


# --- notifications -----------------------------------------------------------------------
async def initialized(ls: TetherServer, params: types.InitializedParams) -> None:
    warm_up_thread(primed_name(ls.config))  # a provider the editor's settings name, primed
    # What every run would otherwise start on the first (``start_background``): the worker
    # threads, the user's places folded, the checkpoint store's hourly look at its size.
    await start_background(ls.log_writer.state_dir, ls.config.checkpoint_store_max_bytes)
    # Detected at start, not on the first run.
    problem = await sandbox_problem(ls.config.sandbox)
    if problem is not None:
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=f"Tether: {problem}")
        )


def did_change_configuration(ls: TetherServer, params: types.DidChangeConfigurationParams) -> None:
    try:
        ls.apply_client_settings(params.settings)
    except ConfigError as exc:
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=f"Tether: {exc}")
        )


def create_server(tools: ToolRegistry, environ: Mapping[str, str] | None = None) -> TetherServer:
    """A server with every Tether method registered."""
    server = TetherServer(tools, environ)
    server.feature(AGENT_RUN_METHOD)(run_agent)
    server.feature(AGENT_CANCEL_METHOD)(cancel_run)
    server.feature(AGENT_STEER_METHOD)(steer_run)
    server.feature(AGENT_UNDO_METHOD)(undo)
    server.feature(AGENT_CHECKPOINTS_METHOD)(list_checkpoints)
    server.feature(AGENT_REWIND_METHOD)(rewind)
    server.feature(AGENT_SESSIONS_METHOD)(list_sessions)
    server.feature(AGENT_HISTORY_METHOD)(session_history)
    server.feature(AGENT_COMMANDS_METHOD)(list_commands)
    server.feature(AGENT_COMMAND_METHOD)(session_command)
    server.feature(AGENT_JOBS_METHOD)(list_jobs)
    server.feature(AGENT_JOB_STOP_METHOD)(stop_job_request)
    server.feature(AGENT_JOB_OUTPUT_METHOD)(job_output_request)
    for method in RULES_PARAMS:
        server.feature(method)(_rules_handler(method))

    @server.command(COMMAND_RUN)
    async def command_run(ls: TetherServer, *args: Any) -> dict[str, Any]:
        return await run_command(ls, list(args))

    @server.command(COMMAND_CANCEL)
    def command_cancel(ls: TetherServer, *args: Any) -> dict[str, Any]:
        return cancel_run(ls, args[0] if args else None)

    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TetherServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.buffers.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TetherServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.buffers.closed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TetherServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.buffers.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TetherServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.buffers.saved_uri(params.text_document.uri)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: TetherServer, params: types.WorkDoneProgressCancelParams) -> None:
        ls.runs.cancel_progress(params.token)

    return server
