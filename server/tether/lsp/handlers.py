"""Wire the server's methods: agent/*, the tether.* commands and the LSP notifications."""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from lsprotocol import types

from tether_protocol import (
    AGENT_CANCEL_METHOD,
    AGENT_HISTORY_METHOD,
    AGENT_RUN_METHOD,
    AGENT_SESSIONS_METHOD,
    AGENT_STEER_METHOD,
    AGENT_UNDO_METHOD,
    COMMAND_CANCEL,
    COMMAND_RUN,
    SteerParams,
)

from ..config.layers import ConfigError
from ..providers import warm_up
from ..sandbox.probe import sandbox_problem
from ..tools.registry import ToolRegistry
from .rules import RULES_PARAMS
from .server import TetherServer, validate_params


def create_server(tools: ToolRegistry, environ: Mapping[str, str] | None = None) -> TetherServer:
    """A server with every Tether method registered."""
    server = TetherServer(tools, environ)

    @server.feature(AGENT_RUN_METHOD)
    async def agent_run(ls: TetherServer, params: Any) -> dict[str, Any]:
        return await ls.run_agent(params)

    @server.feature(AGENT_CANCEL_METHOD)
    def agent_cancel(ls: TetherServer, params: Any) -> dict[str, Any]:
        return ls.cancel_run(params)

    @server.feature(AGENT_STEER_METHOD)
    def agent_steer(ls: TetherServer, params: Any) -> dict[str, Any]:
        steer = validate_params(SteerParams, params, AGENT_STEER_METHOD)
        return {"accepted": ls.runs.steer(steer.run_id, steer.message)}

    @server.feature(AGENT_UNDO_METHOD)
    async def agent_undo(ls: TetherServer, params: Any) -> dict[str, Any]:
        return await ls.undo_run(params)

    @server.feature(AGENT_SESSIONS_METHOD)
    async def agent_sessions(ls: TetherServer, params: Any) -> dict[str, Any]:
        return await ls.list_sessions(params)

    @server.feature(AGENT_HISTORY_METHOD)
    async def agent_history(ls: TetherServer, params: Any) -> dict[str, Any]:
        return await ls.session_history(params)

    for method in RULES_PARAMS:  # agent/rules/list, agent/rules/add, agent/rules/remove
        server.feature(method)(_rules_handler(method))

    @server.command(COMMAND_RUN)
    async def command_run(ls: TetherServer, *args: Any) -> dict[str, Any]:
        return await ls.run_command(list(args))

    @server.command(COMMAND_CANCEL)
    def command_cancel(ls: TetherServer, *args: Any) -> dict[str, Any]:
        return ls.cancel_run(args[0] if args else None)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: TetherServer, params: types.InitializedParams) -> None:
        await warm_up(ls.config.provider)  # import a model SDK before the first run needs it
        gc.freeze()  # the SDK's modules too are there for good (see ``tether.cli.serve``)
        problem = await sandbox_problem(
            ls.config.sandbox
        )  # detected at start, not on the first run
        if problem is not None:
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning, message=f"Tether: {problem}"
                )
            )

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

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: TetherServer, params: types.DidChangeConfigurationParams
    ) -> None:
        try:
            ls.apply_client_settings(params.settings)
        except ConfigError as exc:
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=f"Tether: {exc}")
            )

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: TetherServer, params: types.WorkDoneProgressCancelParams) -> None:
        ls.cancel_progress(params.token)

    return server


def _rules_handler(method: str) -> Callable[[TetherServer, Any], Awaitable[dict[str, Any]]]:
    async def agent_rules(ls: TetherServer, params: Any) -> dict[str, Any]:
        return await ls.rules_request(method, params)

    return agent_rules
