"""The Tether language server: the LSP lifecycle and capabilities around pygls, the settings,
and what the server owns (runs, session log, rules, buffers, editor). The methods are
``handlers.py``'s; the buffers, editor and sinks see the server as a ``ClientLink``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Generator, Mapping
from concurrent.futures import Future
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import attrs
from lsprotocol import types
from lsprotocol.converters import get_converter
from pydantic import ValidationError
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

import tether
from tether_protocol import (
    PROTOCOL_VERSION,
    ClientTetherCapabilities,
    ServerTetherCapabilities,
    TetherSettings,
)
from tether_protocol.methods import CLIENT_TO_SERVER

from ..config.assemble import Layer, assemble
from ..config.layers import Config, ConfigError, parse_settings
from ..langserver.pool import LanguageServerPool
from ..policy.requests import RulesService
from ..policy.store import RuleStore
from ..providers import AVAILABLE_PROVIDERS
from ..run.front import close_front, start_mcp
from ..run.manager import RunManager
from ..session.writer import SessionLogWriter
from ..text.echo import clip
from ..tools.registry import ToolRegistry
from ..workspace.folders import Workspace, path_from_uri
from ..workspace.places import broad_root_refusal
from .code import EditorCode
from .documents import LineWorkspace, encoding_name
from .editor import RAW_ANSWER_METHODS, RAW_MESSAGE_METHODS, LspEditor
from .host import LspBuffers
from .plain import APPROVALS_UNSUPPORTED, answered_method_not_found

if TYPE_CHECKING:
    from ..mcp.hub import McpHub

log = logging.getLogger(__name__)

NOTIFICATIONS = frozenset(
    method
    for method, (message_type, *_) in types.METHOD_TO_TYPES.items()
    if "id" not in attrs.fields_dict(message_type)
)
"""LSP methods that are notifications: a message of one of them carrying an id is refused."""
REQUESTS = frozenset(CLIENT_TO_SERVER)
"""Tether's requests: one sent without an id (as a notification) is dropped, not run."""


def _is_msg_id(value: object) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


class ClientErrorFilter(logging.Filter):
    """Drops pygls' tracebacks for client mistakes (``-32602`` answers, messages of the wrong
    shape): they are explained in the answer or a one-line log, and a traceback on stderr
    per typo buries real errors."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, (JsonRpcInvalidParams, JsonRpcInvalidRequest)):
            return False
        return not str(record.msg).startswith("Unable to deserialize message")


class TetherProtocol(LanguageServerProtocol):
    """pygls' protocol plus Tether's capabilities and client declaration at ``initialize``."""

    _server: TetherServer
    _initialize_received = False
    _warned_stale_change = False
    lean_answered: int | str | None = None
    """The ``initialize`` the lean start answered (``lsp.lean``): its answer here is dropped."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        """pygls' decoding, refusing a notification method sent with an id (pygls would
        drop the id and leave the client waiting for an answer)."""
        if "id" in data and data.get("method") in NOTIFICATIONS:
            raise JsonRpcInvalidRequest(
                f"{data['method']} is a notification: send it without an id"
            )
        if "method" in data and "params" not in data:
            data = {**data, "params": None}  # JSON-RPC lets params out; pygls' types want it
        return super().structure_message(data)

    def handle_message(self, message: Any) -> None:
        """The LSP lifecycle around pygls' dispatch: nothing but ``initialize`` (and
        ``exit``) before ``initialize``, nothing but ``exit`` after ``shutdown``."""
        method: str | None = getattr(message, "method", None)
        is_request = method is not None and hasattr(message, "id")
        error: JsonRpcException | None = None
        if method is None or method == types.EXIT:
            pass  # answers to our requests, and exit, are taken at any time
        elif not self._initialize_received and method != types.INITIALIZE:
            error = JsonRpcServerNotInitialized(f"{clip(method)}: send initialize first")
        elif self._shutdown:
            error = JsonRpcInvalidRequest(f"{clip(method)}: the server is shutting down")
        elif method == types.INITIALIZE and self._initialize_received:
            error = JsonRpcInvalidRequest("initialize was already received")
        elif method == types.CANCEL_REQUEST and not _is_msg_id(getattr(message.params, "id", None)):
            log.warning("dropped a $/cancelRequest whose id is not a number or a string")
            return
        elif not is_request and method in REQUESTS:
            log.warning("dropped %s sent as a notification: requests need an id", method)
            return
        if error is None:
            super().handle_message(message)
        elif is_request:
            self._send_response(message.id, error=error.to_response_error())
        else:
            log.debug("dropped a %s notification: %s", clip(str(method)), error.message)

    def _run_generator(self, future: Any, *, gen: Any, result_future: Any) -> None:
        # pygls resumes a built-in handler (``workspace/executeCommand``) with the result of
        # the user handler's task; a task cancelled by shutdown or at exit raised
        # CancelledError inside an event-loop callback (a traceback on stderr). Cancel on.
        if future is not None and future.cancelled():
            gen.close()
            if not result_future.done():
                result_future.cancel()
            return
        super()._run_generator(future, gen=gen, result_future=result_future)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if self.lean_answered is not None and msg_id == self.lean_answered:
            self.lean_answered = None
            if error is not None:  # pygls refused what the lean start's shape check let by
                message = f"Tether: initialize: {clip(str(error.message), 1000)}"
                log.error("%s (answered already by the lean start)", message)
                self._server.window_show_message(
                    types.ShowMessageParams(type=types.MessageType.Error, message=message)
                )
            return
        # The last guard against echoing a huge value: error texts are cut (a traceback
        # in ``data`` keeps its end, where the cause is).
        if error is not None:
            error.message = clip(str(error.message), 1000)
            if isinstance(error.data, str):
                error.data = error.data[-4000:]
        super()._send_response(msg_id, result, error)

    @lru_cache  # noqa: B019 - as pygls' own: one protocol per process
    def get_message_type(self, method: str) -> type[Any] | None:
        """No lsprotocol type for the messages Tether writes as plain JSON
        (``RAW_MESSAGE_METHODS``): pygls sends their params as they are."""
        return None if method in RAW_MESSAGE_METHODS else super().get_message_type(method)

    @lru_cache  # noqa: B019 - as pygls' own: one protocol per process
    def get_result_type(self, method: str) -> type[Any] | None:
        """No lsprotocol type for answers ``LspEditor`` checks itself (see
        ``RAW_ANSWER_METHODS``): a malformed one must be read, not dropped."""
        return None if method in RAW_ANSWER_METHODS else super().get_result_type(method)

    def send_request(
        self,
        method: str,
        params: Any | None = None,
        callback: Callable[[Any], None] | None = None,
        msg_id: Any = None,
    ) -> Future[Any]:
        """pygls' request, watching approval prompts: a client without
        ``window/showMessageRequest`` (Helix 25.07) is told once what its options are."""
        future = super().send_request(method, params, callback, msg_id)
        if method == types.WINDOW_SHOW_MESSAGE_REQUEST:
            future.add_done_callback(self._server.message_request_answered)
        return future

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        """pygls' update, minus a change whose version the document already has or passed:
        a client repeating a notification must not have its typing applied twice to the
        copy edits are computed on (LSP versions only grow)."""
        document = self.workspace.text_documents.get(unquote(params.text_document.uri))
        known = document.version if document is not None else None
        if known is not None and params.text_document.version <= known:
            if not self._warned_stale_change:
                self._warned_stale_change = True
                log.warning(
                    "ignoring a didChange for a version the document already has (%d <= %d)",
                    params.text_document.version,
                    known,
                )
            return
        yield from super().lsp_text_document__did_change(params)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        server = self._server
        server.configure_from_initialize(params)
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        self._initialize_received = True  # a refused initialize may be sent again
        # Open documents live in line lists: pygls' store rebuilds the text per keystroke.
        self._workspace = LineWorkspace.like(self.workspace)
        result.capabilities.experimental = {
            "tether": ServerTetherCapabilities(
                protocol_version=PROTOCOL_VERSION,
                tools=server.tools.names,
                providers=list(AVAILABLE_PROVIDERS),
            ).to_wire()
        }
        return result


def _first_folder(params: types.InitializeParams) -> Path | None:
    """The first workspace folder (whose ``.tether/config.toml`` counts), resolved."""
    folders = params.workspace_folders or []
    uri = folders[0].uri if folders else params.root_uri
    root = path_from_uri(uri) if uri else None
    return None if root is None else root.resolve()


class TetherServer(LanguageServer):
    """A pygls server that owns the runs, the configuration and the session log."""

    def __init__(
        self,
        tools: ToolRegistry,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            "tether",
            tether.__version__,
            protocol_cls=TetherProtocol,
            converter_factory=get_converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.environ = dict(os.environ if environ is None else environ)
        self.tools = tools
        self.client_tether = ClientTetherCapabilities()
        # The one assembly (config.assemble); the project's file and the editor's layers
        # join at initialize.
        self.settings = assemble(None, self.environ)
        self.config: Config = self.settings.config
        self._root: Path | None = None
        self._options: object = None
        self._client_settings: TetherSettings | None = None
        self.settings_error: str | None = None
        """Why the settings cannot be used (shown to the user; every run is refused)."""
        self.buffers = LspBuffers(self)
        self.editor = LspEditor(self, self.buffers, lambda: self.config.state_dir / "previews")
        self._loop: asyncio.AbstractEventLoop | None = None
        self.log_writer = SessionLogWriter(self.config.state_dir, self._state_dir_failed)
        self.chosen_model: str | None = None
        """The model picked with the ``/model`` session command, for this client's runs."""
        self.chosen_effort: str | None = None
        """The effort picked with the ``/effort`` session command, for this client's runs."""
        self.rules = RulesService(RuleStore.from_environment(self.environ))
        self.runs = RunManager(tools, self.log_writer, self.rules.store)
        self._told_approvals_unsupported = False
        self.mcp: McpHub | None = None
        """The MCP servers, once the settings configure one."""
        self._mcp_asked = False
        self.code = LanguageServerPool(self.environ)
        """The language servers of the code tools, started when a call needs one."""
        self.runs.code = EditorCode(self.editor, self.code)
        """The code tools ask the editor's language servers first (``agent/code``)."""

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls' report of a failed notification handler (``window/showMessage``), cut
        short: the error may quote a client's value."""
        if source is FeatureRequestError:
            return  # the request's error answer says it
        self.window_show_message(
            types.ShowMessageParams(
                message=f"Error in server: {clip(str(error), 500)}", type=types.MessageType.Error
            )
        )

    # --- the ClientLink of the buffers, the editor and the sinks ---------------------------
    def send_request(self, method: str, params: Any, msg_id: str | None = None) -> Future[Any]:
        return self.protocol.send_request(method, params, msg_id=msg_id)

    def send_notification(self, method: str, params: Any) -> None:
        self.protocol.notify(method, params)

    def write_message(self, body: bytes) -> bool:
        # Straight to the transport's writer: pygls' ``notify`` would structure and
        # serialize the message again (see ``NotifySink``).
        writer = self.protocol.writer
        if writer is None:
            return False
        writer.write(body)
        return True

    # --- configuration -------------------------------------------------------------------
    def configure_from_initialize(self, params: types.InitializeParams) -> None:
        """Read the client's Tether declaration, initializationOptions and project file."""
        with contextlib.suppress(RuntimeError):  # no loop: a test calling it directly
            self._loop = asyncio.get_running_loop()
        experimental = params.capabilities.experimental
        declared = experimental.get("tether") if isinstance(experimental, dict) else None
        if isinstance(declared, dict):
            try:
                self.client_tether = ClientTetherCapabilities.model_validate(declared)
            except ValidationError:
                log.warning(
                    "ignoring a malformed experimental.tether declaration: %s", clip(repr(declared))
                )
        # The files are read here and at each settings change (a few hundred bytes).
        self._root = _first_folder(params)
        self._options = params.initialization_options
        self._assemble()

    def _assemble(self) -> None:
        """Every layer assembled again (the files, ``initializationOptions``, the last
        ``settings.tether``; a key the latter names, ``null`` included, is no longer taken
        from the former: an editor unsets what it sent at start). A layer that cannot be used
        does not refuse ``initialize`` (its answer is fixed, and may be sent already:
        ``lsp.lean``): it is shown to the user, and every run is refused with the same words
        until the settings are fixed (a refused run assembles them again first: a fixed file
        counts at once); meanwhile the server keeps its settings as they were."""
        try:
            layers = []
            try:
                init = parse_settings(self._options, "initializationOptions")
                if self._client_settings is not None:
                    named = self._client_settings.model_fields_set
                    init = init.model_copy(update=dict.fromkeys(named))
                layers.append(Layer("initializationOptions", init))
            except ConfigError:
                if self._client_settings is None:
                    raise  # else the editor's newer settings stand in for its first ones
            if self._client_settings is not None:
                layers.append(Layer("settings.tether", self._client_settings))
            settings = assemble(self._root, self.environ, *layers)
            settings.config  # noqa: B018 - a value that cannot be resolved raises here
            folder = self._root if self._root is not None else Path.cwd()
            refused = broad_root_refusal([folder], self.environ, settings.allow_broad_workspace)
            if refused is not None:  # `/`, the home folder or above it: not a project
                raise ConfigError(refused)
        except ConfigError as exc:
            told, self.settings_error = self.settings_error, clip(str(exc), 1000)
            if self.settings_error != told:  # once: a refused run's answer says it again
                log.error("the settings cannot be used: %s", self.settings_error)
                self._tell(types.MessageType.Error, f"Tether: {self.settings_error}")
            return
        self.settings_error = None
        self.settings = settings
        self._warn_dropped()
        self._reconfigure()

    def usable_settings(self) -> str | None:
        """Why the settings cannot be used, after assembling them again, or the workspace
        folders (``/``, the home folder or above it: ``workspace.places``); None: they can."""
        if self.settings_error is not None:
            self._assemble()
        if self.settings_error is not None:
            return self.settings_error
        try:
            roots = self.workspace_model().roots  # the folders now (one may have been added)
        except RuntimeError:  # not initialized: a test configuring the server directly
            roots = (self._root or Path.cwd(),)
        return broad_root_refusal(roots, self.environ, self.settings.allow_broad_workspace)

    def _tell(self, kind: types.MessageType, message: str) -> None:
        """A message to the user, after the answer being written (allowed during
        ``initialize``, LSP 3.17); logged when there is no client to tell."""
        if self._loop is None:  # a test calling this directly
            log.warning("%s", message)
            return
        show = types.ShowMessageParams(type=kind, message=message)
        self._loop.call_soon(self.window_show_message, show)

    def _warn_dropped(self) -> None:
        """The project file's keys that were not applied, and the servers of an untrusted
        ``.mcp.json``: one warning per file."""
        for message in self.settings.warnings():  # one per project file
            self._tell(types.MessageType.Warning, f"Tether: {message}")

    def apply_client_settings(self, settings: object) -> None:
        """``workspace/didChangeConfiguration``: ``settings.tether`` for later runs."""
        if isinstance(settings, dict) and "tether" in settings:
            self._client_settings = parse_settings(settings["tether"], "settings.tether")
            self._assemble()

    def _reconfigure(self) -> None:
        config = self.settings.config
        self.code.configure(
            config.language_servers,
            trusted=self.settings.trusted_project,
            timeout=config.language_server_timeout_seconds,
        )
        if config.mcp_servers and not self._mcp_asked and self._loop is not None:
            self._start_mcp(config)
        if config.state_dir != self.config.state_dir:
            self.log_writer.retire()  # runs in flight finish writing there; new ones go here
            self.log_writer = self.runs.log_writer = SessionLogWriter(
                config.state_dir, self._state_dir_failed
            )
        self.config = config

    def _state_dir_failed(self, message: str) -> None:
        """The session writer (its own thread) cannot write: one warning to the user."""
        params = types.ShowMessageParams(
            type=types.MessageType.Warning, message=f"Tether: {message}"
        )
        loop = self._loop
        if loop is None:
            return  # before initialize there is no client to tell; the log line stands
        with contextlib.suppress(RuntimeError):  # the loop closed: the server is going away
            loop.call_soon_threadsafe(self.window_show_message, params)

    def workspace_model(self) -> Workspace:
        """The workspace folders the client opened (else the current folder)."""
        roots: list[Path] = []
        for folder in self.workspace.folders.values():
            path = path_from_uri(folder.uri)
            if path is not None:
                roots.append(path)
        if not roots and self.workspace.root_path:
            roots.append(Path(self.workspace.root_path))
        encoding = encoding_name(self.workspace.position_encoding)
        return Workspace(roots or [Path.cwd()], self.buffers, encoding)

    def message_request_answered(self, answer: Future[Any]) -> None:
        """An approval prompt's answer: MethodNotFound means this client can never be asked
        (Helix 25.07); say so once, with the options, instead of denying in silence."""
        if not self._told_approvals_unsupported and answered_method_not_found(answer):
            self._told_approvals_unsupported = True
            log.warning("the client has no window/showMessageRequest: approvals are denied")
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=APPROVALS_UNSUPPORTED)
            )

    def _start_mcp(self, config: Config) -> None:
        """The MCP servers, running from the session's start (they start in the background,
        so the first run finds them ready), once the workspace is as the runs will see it
        (after ``initialize``)."""
        assert self._loop is not None
        self._mcp_asked = True

        def start() -> None:
            hub = start_mcp(
                self.environ, config.mcp_servers, self.workspace_model().root, self._mcp_warning
            )
            self.mcp = self.runs.mcp = hub

        self._loop.call_soon(start)

    def _mcp_warning(self, message: str) -> None:
        """An MCP server could not start: one warning to the user."""
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=f"Tether: {message}")
        )

    async def close(self) -> None:
        """Stop every run (their tools and children end with them) and the MCP servers
        (their process groups killed), and flush the log (``run.front.close_front``)."""
        hubs = [self.mcp] if self.mcp is not None else []
        await asyncio.gather(
            close_front(self.runs, hubs, self.log_writer, 1.5, 6.0), self.code.close()
        )
