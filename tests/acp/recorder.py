"""The test client's side of the SDK: answers the agent's requests and records everything.

``RecordingClient`` implements the SDK's ``Client`` protocol (permissions by policy,
``fs/*`` from an in-memory buffer map, ``terminal/*`` for real) and observes every raw
message in both directions: each is stamped, schema-checked (``validation.py``) and kept,
so a test sees what the SDK alone would have dropped.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from acp import RequestError
from acp.connection import StreamDirection, StreamEvent
from acp.interfaces import Agent
from acp.schema import (
    ClientCapabilities,
    CreateElicitationResponse,
    CreateTerminalResponse,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    EnvVariable,
    FileSystemCapabilities,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    SessionNotification,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from pydantic import TypeAdapter, ValidationError

from .permissions import PermissionAsked, Policy, decide
from .terminals import Terminals
from .validation import Direction, SchemaChecker, Violation

T = TypeVar("T")


@dataclass(frozen=True)
class Capabilities:
    """What the client declares in ``initialize``."""

    read: bool = True
    write: bool = True
    terminal: bool = True
    elicitation: bool = False
    """``elicitation: {form: {}}``: the agent may ask with ``elicitation/create``."""

    def declared(self) -> ClientCapabilities:
        fs = FileSystemCapabilities(read_text_file=self.read, write_text_file=self.write)
        form = ElicitationCapabilities(form=ElicitationFormCapabilities())
        return ClientCapabilities(
            fs=fs, terminal=self.terminal, elicitation=form if self.elicitation else None
        )


EDITOR = Capabilities()
"""fs read/write and terminal: a client like Zed."""
NOTHING = Capabilities(read=False, write=False, terminal=False)
"""A client that declares nothing: the agent must use its own disk and processes."""


@dataclass(frozen=True)
class Message:
    """One raw message as it crossed the pipe."""

    at_ns: int
    direction: Direction
    payload: dict[str, Any]


@dataclass(frozen=True)
class Update:
    """One ``session/update``: when it arrived, for which session, and the update object."""

    at_ns: int
    session_id: str
    update: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.update.get("sessionUpdate"))

    def text(self) -> str:
        """The text of a chunk update (empty for other kinds)."""
        content = self.update.get("content")
        if isinstance(content, dict) and content.get("type") == "text":
            return str(content.get("text", ""))
        return ""


class RecordingClient:
    """The SDK ``Client`` a test drives an agent with (see ``README.md``)."""

    def __init__(
        self,
        *,
        capabilities: Capabilities = EDITOR,
        permission: Policy = "allow_once",
        buffers: dict[str, str] | None = None,
        after_withdrawal: str = "cancelled",
        elicit: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self.capabilities = capabilities
        self.permission: Policy = permission
        self.after_withdrawal = after_withdrawal
        """How a withdrawn request is answered: ``cancelled``, or an option kind (a late
        answer racing the withdrawal)."""
        self.buffers: dict[str, str] = dict(buffers or {})
        self.elicit = elicit
        """Answers ``elicitation/create``: given the raw params, the raw response, or an
        awaitable of it (default: ``decline``)."""
        self.elicitations: list[dict[str, Any]] = []
        """The raw params of every ``elicitation/create``, in order."""
        """The editor's open buffers by absolute path (unsaved text wins over the disk)."""
        self.messages: list[Message] = []
        self.updates: list[Update] = []
        self.permissions: list[PermissionAsked] = []
        self.violations: list[Violation] = []
        self.problems: list[str] = []
        """Protocol rules broken beyond the schema (undeclared methods, relative paths…)."""
        self.dropped_by_sdk: list[dict[str, Any]] = []
        """Notifications the SDK's own models refuse (it would log and drop them)."""
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals = Terminals()
        self.validate = True
        """Check each message as it comes (off: ``check_all`` later, e.g. when timing)."""
        self.exempt_ids: set[Any] = set()
        self.agent: Agent | None = None
        self._checker = SchemaChecker()
        self._waiters: list[tuple[Callable[[], Any], asyncio.Future[Any]]] = []
        self._unchecked: list[Message] = []

    # --- observing ------------------------------------------------------------------------
    def observe(self, event: StreamEvent) -> None:
        """The SDK's stream observer: every raw message, before the SDK routes it."""
        direction: Direction = (
            "to_client" if event.direction is StreamDirection.INCOMING else "to_agent"
        )
        message = Message(time.monotonic_ns(), direction, event.message)
        self.messages.append(message)
        payload = event.message
        if self.validate:
            self._check(message)
        else:
            self._unchecked.append(message)
        method = payload.get("method")
        params = payload.get("params") if isinstance(payload.get("params"), dict) else {}
        if direction == "to_client" and method == "session/update":
            self._record_update(message.at_ns, payload, params)
        elif direction == "to_client" and method == "session/request_permission":
            self.permissions.append(
                PermissionAsked(
                    payload.get("id"),
                    str(params.get("sessionId")),
                    dict(params.get("toolCall") or {}),
                    list(params.get("options") or []),
                    message.at_ns,
                )
            )
        elif direction == "to_client" and method == "$/cancel_request":
            for asked in self.permissions:
                if asked.request_id == params.get("requestId") and asked.pending:
                    asked.withdrawn = True
                    asked.settled.set()
        self.wake()

    def _record_update(self, at_ns: int, payload: dict[str, Any], params: dict[str, Any]) -> None:
        update = params.get("update")
        self.updates.append(
            Update(at_ns, str(params.get("sessionId")), update if isinstance(update, dict) else {})
        )
        try:
            SessionNotification.model_validate(params)
        except ValidationError as error:
            self.dropped_by_sdk.append({"message": payload, "error": str(error)})

    def _check(self, message: Message) -> None:
        exempt = message.direction == "to_agent" and message.payload.get("id") in self.exempt_ids
        self.violations += self._checker.check(message.direction, message.payload, exempt=exempt)

    def check_all(self) -> None:
        """Check the messages kept while ``validate`` was off, and early answers left over."""
        for message in self._unchecked:
            self._check(message)
        self._unchecked.clear()
        self.violations += self._checker.unanswered_early()

    def assert_clean(self) -> None:
        """No schema violation, no message the SDK would drop, no protocol problem."""
        self.check_all()
        found = [str(v) for v in self.violations]
        found += [
            f"the SDK drops: {d['message']} ({d['error'][:300]})" for d in self.dropped_by_sdk
        ]
        found += self.problems
        found += [f"terminal {t.terminal_id} never released" for t in self.terminals.unreleased]
        assert not found, "ACP conversation not clean:\n" + "\n".join(found)

    # --- waiting ----------------------------------------------------------------------------
    def wake(self) -> None:
        """Resolve every waiter whose condition now holds."""
        for condition, future in list(self._waiters):
            if future.done():
                self._waiters.remove((condition, future))
                continue
            value = condition()
            if value:
                future.set_result(value)
                self._waiters.remove((condition, future))

    async def wait_for(self, condition: Callable[[], T | None], what: str, within: float) -> T:
        """Until ``condition()`` is truthy (checked at every message); its value."""
        value = condition()
        if value:
            return value
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._waiters.append((condition, future))
        try:
            return await asyncio.wait_for(future, within)
        except TimeoutError:
            raise AssertionError(f"timed out after {within:g} s waiting for {what}") from None

    # --- what the agent asks ----------------------------------------------------------------
    def on_connect(self, conn: Agent) -> None:
        self.agent = conn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Recorded raw by ``observe``; the parsed model is not needed."""

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kw: Any
    ) -> RequestPermissionResponse:
        asked = next(
            (
                a
                for a in self.permissions
                if not a.claimed
                and a.session_id == session_id
                and a.tool_call_id == tool_call.tool_call_id
            ),
            None,
        )
        if asked is None:  # observed messages always come first; this is a kit bug
            raise RequestError.internal_error({"details": "permission request not observed"})
        asked.claimed = True
        choice = await decide(self.permission, asked)
        if choice == "cancel_turn":
            assert self.agent is not None
            await self.agent.cancel(session_id=session_id)
            choice = "cancelled"
        if choice == "never":
            await asked.settled.wait()
            choice = self.after_withdrawal if asked.withdrawn else "cancelled"  # type: ignore[assignment]
        asked.answer = asked.outcome_for(choice)
        asked.answered_ns = time.monotonic_ns()
        self.wake()
        return RequestPermissionResponse.model_validate({"outcome": asked.answer})

    async def create_elicitation(self, message: str, mode: Any, **kw: Any) -> Any:
        """``elicitation/create``: recorded (the raw params, as observed) and answered by
        ``elicit``; a client that did not declare it answers method-not-found."""
        self._require(self.capabilities.elicitation, "elicitation/create")
        asked = [
            m.payload["params"]
            for m in self.messages
            if m.direction == "to_client" and m.payload.get("method") == "elicitation/create"
        ]
        params = asked[len(self.elicitations)]
        self.elicitations.append(params)
        self.wake()
        answer = self.elicit(params) if self.elicit is not None else {"action": "decline"}
        if inspect.isawaitable(answer):  # a person who takes their time
            answer = await answer
        self.wake()
        return TypeAdapter(CreateElicitationResponse).validate_python(answer)

    def settle(self, session_id: str) -> None:
        """The client cancelled the turn: its pending permissions end as ``cancelled``."""
        for asked in self.permissions:
            if asked.session_id == session_id and asked.pending:
                asked.settled.set()

    def _require(self, declared: bool, method: str) -> None:
        if not declared:
            self.problems.append(f"agent called {method}, which the client did not declare")
            raise RequestError.method_not_found(method)

    def _absolute(self, method: str, path: str) -> Path:
        if not Path(path).is_absolute():
            self.problems.append(f"agent sent {method} with a relative path {path!r}")
            raise RequestError.invalid_params({"path": "must be absolute"})
        return Path(path)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kw: Any,
    ) -> ReadTextFileResponse:
        self._require(self.capabilities.read, "fs/read_text_file")
        file = self._absolute("fs/read_text_file", path)
        self.reads.append(path)
        if path in self.buffers:
            text = self.buffers[path]
        elif file.is_file():
            text = file.read_text(encoding="utf-8")
        else:
            raise RequestError.resource_not_found(path)
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : None if limit is None else start + limit])
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kw: Any
    ) -> WriteTextFileResponse:
        self._require(self.capabilities.write, "fs/write_text_file")
        self._absolute("fs/write_text_file", path)
        self.buffers[path] = content
        self.writes.append((path, content))
        self.wake()
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kw: Any,
    ) -> CreateTerminalResponse:
        self._require(self.capabilities.terminal, "terminal/create")
        if cwd is not None:
            self._absolute("terminal/create", cwd)
        variables = {variable.name: variable.value for variable in env or []}
        try:
            terminal = await self.terminals.create(command, args, variables, cwd, output_byte_limit)
        except OSError as error:
            raise RequestError.internal_error({"details": str(error)}) from None
        self.wake()
        return CreateTerminalResponse(terminal_id=terminal.terminal_id)

    def _terminal(self, method: str, terminal_id: str) -> Any:
        self._require(self.capabilities.terminal, method)
        try:
            return self.terminals.get(terminal_id)
        except KeyError:
            self.problems.append(f"agent sent {method} for unknown terminal {terminal_id}")
            raise RequestError.resource_not_found(terminal_id) from None

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> TerminalOutputResponse:
        terminal = self._terminal("terminal/output", terminal_id)
        status = terminal.exit_status()
        return TerminalOutputResponse(
            output=terminal.text(),
            truncated=terminal.truncated,
            exit_status=TerminalExitStatus.model_validate(status) if status else None,
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> WaitForTerminalExitResponse:
        self._terminal("terminal/wait_for_exit", terminal_id)
        status = await self.terminals.wait_for_exit(terminal_id)
        return WaitForTerminalExitResponse.model_validate(status)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> KillTerminalResponse:
        self._terminal("terminal/kill", terminal_id)
        self.terminals.kill(terminal_id)
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> ReleaseTerminalResponse:
        self._terminal("terminal/release", terminal_id)
        await self.terminals.release(terminal_id)
        self.wake()
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are allowed and ignored."""
