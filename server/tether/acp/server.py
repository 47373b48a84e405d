"""The ACP agent: ``initialize``, sessions, prompts, modes, cancel and load, over the same
run manager, assembly, approval gate, writer and runner as ``tether serve``.

Each ACP session is a Tether session (the same id, the same log under the state folder):
``session/prompt`` is a run continuing it, ``session/load`` replays its log. The session's
``cwd`` is the workspace (its ``.tether/config.toml`` counts as for ``tether serve``);
provider and model come from the config file and ``TETHER_*``, as for ``tether run``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

import tether
from tether_protocol import (
    CommandParams,
    McpServerSettings,
    Rule,
    RunParams,
    RunResult,
    TetherSettings,
    parse_event,
)

from ..config.assemble import assemble
from ..config.layers import Config, ConfigError, resolve
from ..langserver.pool import LanguageServerPool
from ..policy.store import RuleStore
from ..prompt.frames import ATTACHED_FILE, framed
from ..providers import make_provider, primed_name, warm_up_thread
from ..run.commands import COMMANDS, CommandRefused, run_command
from ..run.front import background, close_front, serve_run, start_mcp
from ..run.manager import InvalidRun, RunManager, start_background
from ..session.index import session_log_path, session_title
from ..session.store import stored_session
from ..session.writer import SessionLogWriter, new_session_id
from ..text.display import shown as shown_text
from ..tools.registry import ToolRegistry
from ..workspace.folders import Workspace, path_from_uri
from ..workspace.places import broad_root_refusal

if TYPE_CHECKING:
    from ..mcp.hub import McpHub
    from ..run.loop import AgentLoop
from .editor import AcpBuffers, AcpEditor, ClientCapabilities, Mode
from .history import BadCursor, delete_stored, iso_time, list_page, session_cost
from .options import DEFAULT_MODEL, BadOption, OptionState, checked_value, config_options
from .params import (
    ContentBlock,
    ListSessionsParams,
    LoadSessionParams,
    McpServer,
    NewSessionParams,
    PromptParams,
    ResumeSessionParams,
    SessionParams,
    SetModeParams,
    folder,
    parsed,
)
from .updates import AcpSink, Translator, replayed
from .wire import INTERNAL_ERROR, INVALID_PARAMS, Connection, RpcError

log = logging.getLogger(__name__)

MODES: tuple[dict[str, str], ...] = (
    {
        "id": "ask",
        "name": "Ask",
        "description": "Ask before each edit and command (your rules and autoApprove apply)",
    },
    {
        "id": "accept-edits",
        "name": "Accept edits",
        "description": "Edit and create files without asking; commands and sensitive files "
        "are still asked",
    },
    {
        "id": "read-only",
        "name": "Read only",
        "description": "Read and search only: no edit, no command but the built-in read-only "
        "ones, no MCP tool its server does not mark read-only — whatever your rules and "
        "autoApprove say",
    },
)
STOP_SECONDS = 1.2
"""How long the runs may take to stop at the end of input: with the answers still owed and
the interpreter's exit, the process is gone within ACP's 2 s, even on a loaded machine."""
MCP_STOP_SECONDS = 6.0
"""How long ``session/close`` waits for the session's MCP servers to stop."""
CLIENT_COMMANDS = frozenset({"new"})
"""Session commands ACP clients do not get: ``/new`` is the client's own (a new thread is
a new ``session/new``)."""


def acp_command(name: str) -> bool:
    """Whether ``/name`` is a session command offered to ACP clients: every one of
    ``run/commands.py``'s table but ``CLIENT_COMMANDS``, read when asked (a command added
    there is offered here with no edit)."""
    return name in COMMANDS and name not in CLIENT_COMMANDS


MODE_IDS: tuple[Mode, ...] = ("ask", "accept-edits", "read-only")
EDIT_TOOLS = ("edit_file", "write_file")

STOP_REASONS = {
    "done": "end_turn",
    "no-progress": "end_turn",
    "max-steps": "max_turn_requests",
    "budget": "max_tokens",
    "timeout": "cancelled",
    "cancelled": "cancelled",
}
"""A run's outcome as ACP's stop reason (an ``error`` outcome is an error answer)."""


PROTOCOL_VERSION = 1


def initialize_result() -> dict[str, Any]:
    """The answer to ``initialize``: version 1, what Tether offers, no auth methods."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
            "sessionCapabilities": {
                "list": {},
                "resume": {},
                "close": {},
                "delete": {},
                "additionalDirectories": {},
            },
        },
        "agentInfo": {"name": "tether", "title": "Tether", "version": tether.__version__},
        "authMethods": [],
    }


def check_initialize(raw: Any) -> dict[str, Any]:
    """The client's capabilities from ``initialize`` params, or ``-32602``."""
    params = raw if isinstance(raw, dict) else None
    version = params.get("protocolVersion") if params is not None else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise RpcError(INVALID_PARAMS, "initialize: protocolVersion: an integer")
    capabilities = params.get("clientCapabilities") if params is not None else None
    return capabilities if isinstance(capabilities, dict) else {}


def mode_rules(mode: Mode) -> list[Rule]:
    """The session rules a mode stands for (on top of the user's and the project's).
    ``read-only`` is no rule: the approval gate refuses every call that may change anything
    (``policy/capability.py``), before any rule is read."""
    if mode == "accept-edits":
        return [Rule(tool=t, pattern="**", decision="allow") for t in EDIT_TOOLS]
    return []


@dataclass(slots=True, eq=False)
class AcpSession:
    """One ACP session: its folder, settings, mode and the seams its runs use."""

    session_id: str
    root: Path
    config: Config
    buffers: AcpBuffers
    translator: Translator
    editor: AcpEditor | None = None
    extra_roots: list[Path] = field(default_factory=list)
    """``additionalDirectories``: more roots, under the same confinement as ``root``."""
    mode: Mode = "ask"
    stored: bool = False
    """It has a log to continue (a run ended in it, or it was loaded)."""
    run_id: str | None = None
    prompting: bool = False
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    """Set while no prompt runs."""
    cancel_asked: bool = False
    applied_rules: list[Rule] = field(default_factory=list)
    chosen_model: str | None = None
    """The model ``/model NAME`` or the model option picked for the session."""
    effort: str = "off"
    """The ``reasoningEffort`` option (the configured one until the client changes it)."""
    loop: AgentLoop | None = None
    """The running prompt's loop: an option changed meanwhile applies to its next call."""
    mcp: McpHub | None = None
    """The session's MCP servers (the client's, the project's and the user's); None: none."""

    def workspace(self) -> Workspace:
        return Workspace([self.root, *self.extra_roots], self.buffers, "utf-32")

    def run_config(self) -> Config:
        """The settings its next model call uses (the options applied)."""
        return replace(self.config, reasoning_effort=self.effort)  # type: ignore[arg-type]

    def options(self) -> OptionState:
        return OptionState(self.mode, self.chosen_model or self.config.model, self.effort)


@dataclass
class SessionCommandHost:
    """What a session command acts on, for one ACP session (``run/commands.py``)."""

    server: AcpServer
    session: AcpSession

    @property
    def chosen_model(self) -> str | None:
        return self.session.chosen_model

    @chosen_model.setter
    def chosen_model(self, name: str | None) -> None:
        self.session.chosen_model = name

    @property
    def chosen_effort(self) -> str | None:
        return self.session.effort

    @chosen_effort.setter
    def chosen_effort(self, effort: str | None) -> None:
        self.session.effort = effort or self.session.config.reasoning_effort

    @property
    def log_writer(self) -> SessionLogWriter:
        return self.server.log_writer

    @property
    def runs(self) -> RunManager:
        return self.server.runs

    @property
    def editor(self) -> AcpEditor:
        assert self.session.editor is not None
        return self.session.editor

    @property
    def config(self) -> Config:
        return self.session.config

    def workspace_model(self) -> Workspace:
        return self.session.workspace()


def available_commands() -> dict[str, Any]:
    """The ``available_commands_update`` of every session: the session commands."""
    offered = []
    for name, (command, _) in COMMANDS.items():
        if not acp_command(name):
            continue
        item: dict[str, Any] = {"name": command.name, "description": command.description}
        if command.argument:
            item["input"] = {"hint": command.argument.strip("[]")}
        offered.append(item)
    return {"sessionUpdate": "available_commands_update", "availableCommands": offered}


class AcpServer:
    """The agent side of one ACP connection."""

    def __init__(self, tools: ToolRegistry, environ: Mapping[str, str] | None = None) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.tools = tools
        try:
            base = assemble(None, self.environ).config
        except ConfigError:  # a bad variable or file: every session/new names it (-32602)
            base = resolve(TetherSettings(), self.environ)
        self.provider = base.provider
        """The provider the config file and ``TETHER_*`` name (its SDK loaded early)."""
        self.log_writer = SessionLogWriter(base.state_dir, self._state_dir_failed)
        self.runs = RunManager(tools, self.log_writer, RuleStore.from_environment(self.environ))
        self.code = self.runs.code = LanguageServerPool(self.environ)
        """The language servers of the code tools, per session folder and its settings."""
        self.capabilities = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}
        self.connection: Connection | None = None
        self._warmed = self.provider is not None  # primed as the process starts
        self.workers: asyncio.Future[Any] | None = None
        """The worker threads' start (``_start_workers``), once the first session opened."""

    def _state_dir_failed(self, message: str) -> None:
        log.warning("%s", message)

    def handlers(self) -> dict[str, Any]:
        return {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/set_mode": self.set_mode,
            "session/set_config_option": self.set_config_option,
            "session/prompt": self.prompt,
            "session/list": self.list_sessions,
            "session/resume": self.resume_session,
            "session/close": self.close_session,
            "session/delete": self.delete_session,
        }

    def notifications(self) -> dict[str, Any]:
        return {"session/cancel": self.cancel}

    async def serve(self, stdin: Any, stdout: Any) -> None:
        self.connection = Connection(stdin, stdout, self.handlers(), self.notifications())
        await self.connection.serve(self.close)

    async def close(self) -> None:
        """End of input: stop every run (their tools and children end with them)."""
        hubs = [s.mcp for s in self.sessions.values() if s.mcp is not None]
        await asyncio.gather(
            close_front(self.runs, hubs, self.log_writer, STOP_SECONDS, STOP_SECONDS),
            self.code.close(),
        )

    # --- the methods -------------------------------------------------------------------
    async def initialize(self, raw: Any) -> dict[str, Any]:
        self.capabilities_from(check_initialize(raw))
        return initialize_result()

    def capabilities_from(self, declared: dict[str, Any]) -> None:
        """What the client declared in ``initialize`` (used by the sessions opened next)."""
        self.capabilities = ClientCapabilities.from_wire(declared)

    async def authenticate(self, raw: Any) -> dict[str, Any]:
        return {}  # no methods offered: keys come from the environment

    def _open(
        self,
        session_id: str,
        cwd: str,
        method: str,
        servers: list[McpServer],
        more: list[str] | None = None,
    ) -> AcpSession:
        root = folder(cwd, method)
        given: dict[str, McpServerSettings] = {}
        for index, server in enumerate(servers):
            try:
                given[server.name] = server.settings()
            except ValueError as exc:
                message = f"{method}: mcpServers.{index} ({server.name!r}): {exc}"
                raise RpcError(INVALID_PARAMS, message[:1000]) from exc
        try:
            settings = assemble(root, self.environ)
            config = settings.config
        except ConfigError as exc:
            raise RpcError(INVALID_PARAMS, f"{method}: {exc}"[:1000]) from exc
        refused = broad_root_refusal([root], self.environ, settings.allow_broad_workspace)
        if refused is not None:  # `/`, the home folder or above it: not a project
            raise RpcError(INVALID_PARAMS, f"{method}: {refused}"[:1000])
        extra = self._more_roots(more or [], method, settings.allow_broad_workspace)
        # The client's servers over the project's and the user's: same name, the client's.
        config = replace(config, mcp_servers={**config.mcp_servers, **given})
        old = self.sessions.get(session_id)
        if old is not None:  # loaded again: its servers are started anew
            self._stop_mcp(old)
        assert self.connection is not None
        # `acpFiles = "disk"`: the client's fs methods are not used (they lose text in some).
        offered = self.capabilities
        if config.acp_files == "disk":
            offered = replace(offered, read=False, write=False)
        buffers = AcpBuffers(self.connection, session_id, offered.read)
        translator = Translator(None, self.tools)
        session = AcpSession(session_id, root, config, buffers, translator, extra_roots=extra)
        session.effort = config.reasoning_effort
        session.idle.set()
        translator.workspace = session.workspace()
        session.editor = AcpEditor(
            self.connection,
            session_id,
            offered,
            buffers,
            translator,
            lambda: session.mode,
        )
        self.sessions[session_id] = session
        self.code.configure(
            config.language_servers,
            trusted=settings.trusted_project,
            timeout=config.language_server_timeout_seconds,
            roots=session.workspace().roots,
        )
        if config.mcp_servers:  # a server that cannot start is logged: stderr, once
            session.mcp = start_mcp(self.environ, config.mcp_servers, root)
        if not self._warmed or config.provider != self.provider:  # the project's provider
            self._warmed = True
            warm_up_thread(primed_name(config))
        if self.workers is None:  # every prompt's threads, started by the first session
            self.workers = background(
                start_background(config.state_dir, config.checkpoint_store_max_bytes)
            )
        return session

    def _more_roots(self, given: list[str], method: str, broad: bool) -> list[Path]:
        """``additionalDirectories``: each absolute, an existing folder and not a broad
        one (``/``, the home folder or above it), else ``-32602`` naming it."""
        roots: list[Path] = []
        for n, raw in enumerate(given):
            where = f"{method}: additionalDirectories.{n}"
            path = Path(raw)
            if not path.is_absolute():
                raise RpcError(INVALID_PARAMS, f"{where}: an absolute path, not {raw!r}"[:500])
            if not path.is_dir():
                raise RpcError(INVALID_PARAMS, f"{where}: {raw!r} is not a folder"[:500])
            resolved = path.resolve()
            refused = broad_root_refusal([resolved], self.environ, broad)
            if refused is not None:
                raise RpcError(INVALID_PARAMS, f"{where}: {refused}"[:1000])
            roots.append(resolved)
        return roots

    def _stop_mcp(self, session: AcpSession) -> None:
        hub, session.mcp = session.mcp, None
        if hub is not None:
            background(hub.close())

    def _modes(self, session: AcpSession) -> dict[str, Any]:
        return {"currentModeId": session.mode, "availableModes": [dict(m) for m in MODES]}

    def _options(self, session: AcpSession) -> list[dict[str, Any]]:
        return config_options(session.options(), MODES, session.config)

    def _opened(self, session: AcpSession) -> dict[str, Any]:
        """What a session's setup answers (besides its id): modes and config options."""
        return {"modes": self._modes(session), "configOptions": self._options(session)}

    async def new_session(self, raw: Any) -> dict[str, Any]:
        params = parsed(NewSessionParams, raw, "session/new")
        session = self._open(
            new_session_id(),
            params.cwd,
            "session/new",
            params.mcp_servers,
            params.additional_directories,
        )
        self._offer_commands(session)
        return {"sessionId": session.session_id, **self._opened(session)}

    async def _reopen(self, params: LoadSessionParams, method: str) -> tuple[AcpSession, Any]:
        """A stored session opened again (``session/load``, ``session/resume``): its log
        read, held here, its settings and servers anew; its cost so far counted."""
        folder(params.cwd, method)
        if params.session_id in self.sessions and self.sessions[params.session_id].prompting:
            raise RpcError(INVALID_PARAMS, f"{method}: the session has a prompt running")
        data = await stored_session(self.log_writer, params.session_id)
        if data is None:
            raise RpcError(INVALID_PARAMS, f"{method}: unknown session {params.session_id!r}")
        try:  # one session, one process: refused when another has it open, nothing written
            await self.runs.hold(params.session_id)
        except InvalidRun as exc:
            raise RpcError(INVALID_PARAMS, f"{method}: {exc}"[:1000]) from exc
        try:
            session = self._open(
                params.session_id,
                params.cwd,
                method,
                params.mcp_servers,
                params.additional_directories,
            )
        except RpcError:
            if params.session_id not in self.sessions:  # not open here after all
                self.runs.forget(params.session_id)
            raise
        self._offer_commands(session)
        session.stored = True
        session.translator.cost_before = session_cost(data)
        return session, data

    async def resume_session(self, raw: Any) -> dict[str, Any]:
        """``session/resume``: as ``session/load``, without replaying the conversation."""
        params = parsed(ResumeSessionParams, raw, "session/resume")
        session, _ = await self._reopen(params, "session/resume")
        return self._opened(session)

    async def load_session(self, raw: Any) -> dict[str, Any]:
        params = parsed(LoadSessionParams, raw, "session/load")
        session, data = await self._reopen(params, "session/load")
        events = []
        for item in data.events:
            try:
                events.append(parse_event(item))
            except ValidationError:
                continue  # an event of a newer or older Tether: not shown
        assert self.connection is not None
        for update in replayed(events, Translator(session.workspace(), self.tools)):
            self._send(session.session_id, update)
        return self._opened(session)

    async def list_sessions(self, raw: Any) -> dict[str, Any]:
        """``session/list``: the stored sessions with a folder, the latest first, a page
        at a time; ``cwd`` keeps those of that folder."""
        params = parsed(ListSessionsParams, raw, "session/list")
        cwd = None
        if params.cwd is not None:
            cwd = Path(params.cwd)
            if not cwd.is_absolute():
                message = f"session/list: cwd must be an absolute path, not {params.cwd!r}"
                raise RpcError(INVALID_PARAMS, message[:500])
            cwd = cwd.resolve()
        await asyncio.to_thread(self.log_writer.flush)
        try:
            return await asyncio.to_thread(list_page, self.log_writer.state_dir, cwd, params.cursor)
        except BadCursor as exc:
            raise RpcError(INVALID_PARAMS, f"session/list: {exc}") from exc

    async def close_session(self, raw: Any) -> dict[str, Any]:
        """``session/close``: its prompt cancelled and answered, its servers stopped, the
        session no longer open here (another process may continue it)."""
        params = parsed(SessionParams, raw, "session/close")
        session = self._session(params.session_id, "session/close")
        await self._close(session)
        return {}

    async def _close(self, session: AcpSession) -> None:
        self.sessions.pop(session.session_id, None)
        if session.prompting:
            session.cancel_asked = True
            if session.run_id is not None:
                self.runs.cancel(session.run_id)
            await session.idle.wait()  # the prompt answers `cancelled` first
        hub, session.mcp = session.mcp, None
        if hub is not None:  # its servers ended before the answer (bounded, as at the end)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(hub.close(), MCP_STOP_SECONDS)
        self.runs.forget(session.session_id)

    async def delete_session(self, raw: Any) -> dict[str, Any]:
        """``session/delete``: its log gone from the state folder (and so from every list);
        an unknown session is no error. Closed first when it is open here; refused while
        another process has it open."""
        params = parsed(SessionParams, raw, "session/delete")
        session_id = params.session_id
        open_here = self.sessions.get(session_id)
        if open_here is not None:
            await self._close(open_here)
        await asyncio.to_thread(self.log_writer.flush)
        log = session_log_path(self.log_writer.state_dir, session_id)
        if not await asyncio.to_thread(log.is_file):
            return {}  # never was, or deleted already: no error
        try:
            await self.runs.hold(session_id)
        except InvalidRun as exc:
            raise RpcError(INVALID_PARAMS, f"session/delete: {exc}"[:1000]) from exc
        try:
            await asyncio.to_thread(delete_stored, self.log_writer.state_dir, session_id)
        finally:
            self.runs.forget(session_id)
        return {}

    async def set_mode(self, raw: Any) -> dict[str, Any]:
        params = parsed(SetModeParams, raw, "session/set_mode")
        session = self._session(params.session_id, "session/set_mode")
        if params.mode_id not in MODE_IDS:
            known = ", ".join(MODE_IDS)
            raise RpcError(
                INVALID_PARAMS, f"session/set_mode: unknown mode {params.mode_id!r} ({known})"
            )
        session.mode = params.mode_id
        self._send(
            session.session_id,
            {"sessionUpdate": "current_mode_update", "currentModeId": session.mode},
        )
        self._options_changed(session)
        return {}

    def _options_changed(self, session: AcpSession) -> None:
        """``config_option_update``: a change the client did not make through the options."""
        update = {"sessionUpdate": "config_option_update", "configOptions": self._options(session)}
        self._send(session.session_id, update)

    async def set_config_option(self, raw: Any) -> dict[str, Any]:
        """``session/set_config_option``: the mode, the model or ``reasoningEffort``, from
        the session's next model call (a running prompt's too); the whole state answered."""
        params = parsed(SessionParams, raw, "session/set_config_option")
        session = self._session(params.session_id, "session/set_config_option")
        try:
            config_id, value = checked_value(
                raw, session.options(), [m["id"] for m in MODES], session.config
            )
        except BadOption as exc:
            raise RpcError(INVALID_PARAMS, f"session/set_config_option: {exc}") from exc
        if config_id == "mode":
            session.mode = value  # type: ignore[assignment]
            update = {"sessionUpdate": "current_mode_update", "currentModeId": value}
            self._send(session.session_id, update)
        else:
            before = (session.chosen_model, session.effort)
            if config_id == "model":
                session.chosen_model = None if value == DEFAULT_MODEL else value
            else:
                session.effort = value
            try:
                self._apply_to_running(session)
            except ConfigError as exc:
                session.chosen_model, session.effort = before
                raise RpcError(INVALID_PARAMS, f"session/set_config_option: {exc}") from exc
        return {"configOptions": self._options(session)}

    def _apply_to_running(self, session: AcpSession) -> None:
        """The running prompt's next model call uses the session's model and effort now."""
        loop = session.loop
        if loop is None:
            return
        config = session.run_config()
        loop.provider = make_provider(
            config.provider, config, session.root, model=session.chosen_model
        )

    def _session(self, session_id: str, method: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError(INVALID_PARAMS, f"{method}: unknown session {session_id!r}"[:300])
        return session

    def _offer_commands(self, session: AcpSession) -> None:
        """``available_commands_update`` right after the answer (written first: a client
        may not know the session before it reads the answer)."""
        loop = asyncio.get_running_loop()
        loop.call_soon(self._send, session.session_id, available_commands())

    async def _command(self, session: AcpSession, text: str) -> dict[str, Any] | None:
        """Run ``/name [argument]`` when it names a session command; None otherwise (the
        text goes to the model, as a client's own slash command would)."""
        word, _, argument = text.strip().partition(" ")
        name = word[1:]
        if not word.startswith("/") or not acp_command(name):
            return None
        params = CommandParams(
            name=name,
            session_id=session.session_id if session.stored else None,
            argument=argument.strip() or None,
        )
        before = (session.chosen_model, session.effort)
        try:
            said = (await run_command(SessionCommandHost(self, session), params)).message
        except CommandRefused as exc:
            said = f"/{name}: {exc}"
        chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": said}}
        self._send(session.session_id, chunk)
        if (session.chosen_model, session.effort) != before:  # /model, /effort: the options
            self._options_changed(session)
        return {"stopReason": "end_turn"}

    def _send(self, session_id: str, update: dict[str, Any]) -> None:
        assert self.connection is not None
        self.connection.notify("session/update", {"sessionId": session_id, "update": update})

    def cancel(self, raw: Any) -> None:
        try:
            params = SessionParams.model_validate(raw if raw is not None else {})
        except ValidationError:
            log.warning("dropped a session/cancel without a sessionId")
            return
        session = self.sessions.get(params.session_id)
        if session is None or not session.prompting:
            return
        session.cancel_asked = True
        if session.run_id is not None:
            self.runs.cancel(session.run_id)

    # --- prompts -----------------------------------------------------------------------
    async def prompt(self, raw: Any) -> dict[str, Any]:
        params = parsed(PromptParams, raw, "session/prompt")
        session = self._session(params.session_id, "session/prompt")
        if session.prompting:
            raise RpcError(INVALID_PARAMS, "session/prompt: the session has a prompt running")
        text = self._prompt_text(session, params.prompt)
        session.prompting, session.cancel_asked = True, False
        session.idle.clear()
        try:
            answered = await self._command(session, text)
            return answered if answered is not None else await self._run(session, text)
        finally:
            session.prompting = False
            session.idle.set()
            session.run_id = None
            session.buffers.clear_attached()

    def _prompt_text(self, session: AcpSession, blocks: list[ContentBlock]) -> str:
        """The prompt as Tether's: text as written, a file of the workspace as an ``@``
        mention (read like one: the editor's text, a sensitive file left out), an
        embedded file's text held as that file's buffer for the mention."""
        parts: list[str] = []
        for n, block in enumerate(blocks):
            data = block.model_dump()
            if block.type == "text":
                text = data.get("text")
                if not isinstance(text, str):
                    raise RpcError(INVALID_PARAMS, f"session/prompt: prompt.{n}.text: a string")
                parts.append(text)
            elif block.type == "resource_link":
                uri = data.get("uri")
                if not isinstance(uri, str):
                    raise RpcError(INVALID_PARAMS, f"session/prompt: prompt.{n}.uri: a string")
                parts.append(self._mention(session, uri, str(data.get("name") or uri)))
            elif block.type == "resource":
                resource = data.get("resource")
                if not isinstance(resource, dict) or not isinstance(resource.get("uri"), str):
                    raise RpcError(
                        INVALID_PARAMS, f"session/prompt: prompt.{n}.resource: an object with a uri"
                    )
                parts.append(self._embedded(session, resource))
            else:
                raise RpcError(
                    INVALID_PARAMS,
                    f"session/prompt: prompt.{n}: {block.type!r} blocks are not supported "
                    "(text, resource_link and resource are)"[:300],
                )
        text = " ".join(p.strip() for p in parts if p.strip())
        if not text:
            raise RpcError(INVALID_PARAMS, "session/prompt: prompt: no text in it")
        return text

    def _relative(self, session: AcpSession, uri: str) -> str | None:
        path = path_from_uri(uri) if uri.startswith("file:") else None
        if path is None:
            return None
        try:
            resolved = session.workspace().resolve(str(path))
        except Exception:
            return None
        shown = session.workspace().display(resolved)
        return None if any(c.isspace() for c in shown) else shown

    def _mention(self, session: AcpSession, uri: str, name: str) -> str:
        shown = self._relative(session, uri)
        return f"@{shown}" if shown is not None else f"[{name}]({uri})"

    def _embedded(self, session: AcpSession, resource: dict[str, Any]) -> str:
        uri = str(resource["uri"])
        text = resource.get("text")
        if not isinstance(text, str):
            return f"[{uri}: binary content, not shown]"
        shown = self._relative(session, uri)
        path = path_from_uri(uri) if shown is not None else None
        if shown is not None and path is not None:
            session.buffers.attach(session.workspace().resolve(str(path)), text)
            return f"@{shown}"
        return framed(ATTACHED_FILE, {"path": uri}, text)

    async def _run(self, session: AcpSession, text: str) -> dict[str, Any]:
        memory = await self.runs.session_memory(session.session_id, new=not session.stored)
        memory.policy.read_only = session.mode == "read-only"
        rules = memory.policy.session_rules
        for rule in session.applied_rules:
            with contextlib.suppress(ValueError):
                rules.remove(rule)
        session.applied_rules = mode_rules(session.mode)
        rules[:0] = session.applied_rules
        assert self.connection is not None and session.editor is not None
        sink = AcpSink(session.translator, lambda u: self._send(session.session_id, u))
        params = RunParams(prompt=text, session_id=session.session_id, model=session.chosen_model)
        try:
            run = await self.runs.create(
                params,
                session.run_config(),
                session.workspace(),
                [sink],
                session.editor,
                session.mcp,
            )
        except InvalidRun as exc:
            raise RpcError(INVALID_PARAMS, f"session/prompt: {exc}"[:1000]) from exc
        session.run_id = run.run_id
        session.loop = run.loop
        if run.loop is not None:
            session.translator.context_size = run.loop.window.tokens
        if session.cancel_asked:
            self.runs.cancel(run.run_id)
        try:
            result = await serve_run(self.runs, run)  # $/cancel_request or the end: answered
        finally:
            session.loop = None
        first, session.stored = not session.stored, True
        self._info(session, text if first else None)
        return self._answer(result)

    def _info(self, session: AcpSession, first_prompt: str | None) -> None:
        """``session_info_update`` once a prompt ran: the title after the first (as the
        session list shows it), the time of the last activity after each."""
        update: dict[str, Any] = {"sessionUpdate": "session_info_update"}
        if first_prompt is not None:
            update["title"] = shown_text(session_title(first_prompt))
        update["updatedAt"] = iso_time(time.time())
        self._send(session.session_id, update)

    def _answer(self, result: RunResult) -> dict[str, Any]:
        if result.outcome == "error":
            raise RpcError(INTERNAL_ERROR, f"the run failed: {result.error or 'unknown error'}")
        return {"stopReason": STOP_REASONS.get(result.outcome, "end_turn")}
