"""Drive any ACP agent command as a real client would, on the official Python SDK.

    async with AcpAgent.spawn(["tether", "acp"], cwd=root, env=env) as agent:
        await agent.initialize()
        session = await agent.new_session(root)
        answer = await agent.prompt(session, "make it say hi")
        assert answer["stopReason"] == "end_turn"
        agent.client.assert_clean()

Every request has a timeout; at the end the agent's whole process group is killed (and
any terminal it opened), so nothing outlives the test. Requests go out as raw dicts (the
SDK's ``Connection``) so that a test can also send malformed ones on purpose
(``checked=False``) and read the exact answer; the ``RecordingClient`` answers the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.client.connection import ClientSideConnection

from .permissions import PermissionAsked
from .process import AgentProcess, ExitCheck
from .recorder import Capabilities, RecordingClient, Update

__all__ = ["AcpAgent", "AgentFailed", "RequestError"]

DEFAULT_TIMEOUT = 30.0
"""Seconds any one request may take (generous: a loaded 2-core machine)."""


class AgentFailed(AssertionError):
    """The agent did not answer in time or went away; carries its stderr's tail."""


class AcpAgent:
    """A spawned agent, the SDK connection to it, and the recording client."""

    def __init__(self, process: AgentProcess, client: RecordingClient, timeout: float) -> None:
        self.process = process
        self.client = client
        self.timeout = timeout
        self.connection = ClientSideConnection(
            client,
            process.process.stdin,
            process.process.stdout,
            observers=[client.observe],
            # elicitation is stable in schema 1.21; the SDK (from 1.19) still routes it as
            # unstable: enabled for a client that declares it
            use_unstable_protocol=client.capabilities.elicitation,
        )
        self._raw = self.connection._conn  # the SDK's JSON-RPC layer, for raw requests
        self._tasks: set[asyncio.Task[Any]] = set()
        self.answered_ns: dict[Any, int] = {}
        self.last_session: dict[str, Any] = {}
        self.last_answered_ns = 0
        """When the answer to the latest request was read (monotonic ns, for timing)."""

    @classmethod
    @contextlib.asynccontextmanager
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        client: RecordingClient | None = None,
        capabilities: Capabilities | None = None,
        request_within: float = DEFAULT_TIMEOUT,
        stderr_path: Path | None = None,
    ) -> AsyncIterator[AcpAgent]:
        """Spawn ``argv`` with stdio piped to a new client; everything is killed at the end."""
        if client is None:
            client = RecordingClient(capabilities=capabilities or Capabilities())
        with tempfile.TemporaryDirectory(prefix="acp-stderr-") as scratch:
            stderr_path = stderr_path or Path(scratch) / "stderr.txt"
            process = await AgentProcess.spawn(argv, env=env, cwd=cwd, stderr_path=stderr_path)
            agent = cls(process, client, request_within)
            try:
                yield agent
            finally:
                await agent.close()

    @property
    def started_ns(self) -> int:
        return self.process.started_ns

    # --- raw requests -------------------------------------------------------------------
    async def request(
        self, method: str, params: Any, *, checked: bool = True, within: float | None = None
    ) -> Any:
        """Send a request and return its result; ``RequestError`` carries an error answer.

        ``checked=False``: a request malformed on purpose (its answer is still checked)."""
        request_id = self._raw._next_request_id  # the id the SDK gives the next request
        if not checked:
            self.client.exempt_ids.add(request_id)
        waited = self.timeout if within is None else within
        try:
            result = await asyncio.wait_for(self._raw.send_request(method, params), waited)
        except TimeoutError:
            raise self._failed(f"no answer to {method} within {waited:g} s") from None
        except ConnectionError as error:
            raise self._failed(f"connection lost during {method}: {error}") from None
        finally:
            self._stamp(request_id)
        return result

    def _stamp(self, request_id: Any) -> None:
        for message in reversed(self.client.messages):
            payload = message.payload
            answer = message.direction == "to_client" and "method" not in payload
            if answer and payload.get("id") == request_id:
                self.answered_ns[request_id] = message.at_ns
                self.last_answered_ns = message.at_ns
                return

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        await self._raw.send_notification(method, params)

    def _failed(self, what: str) -> AgentFailed:
        tail = self.process.stderr_tail()
        return AgentFailed(
            f"{what} ({' '.join(self.process.argv)})" + (f"\nstderr:\n{tail}" if tail else "")
        )

    # --- the ACP methods a client uses ---------------------------------------------------
    async def initialize(self, protocol_version: int = PROTOCOL_VERSION) -> dict[str, Any]:
        declared = self.client.capabilities.declared()
        params = {
            "protocolVersion": protocol_version,
            "clientCapabilities": declared.model_dump(by_alias=True, exclude_none=True),
            "clientInfo": {
                "name": "tether-acp-kit",
                "title": "Tether ACP test client",
                "version": "1",
            },
        }
        return dict(await self.request("initialize", params))

    async def new_session(
        self, cwd: Path | str, mcp_servers: Sequence[dict[str, Any]] = (), **extra: Any
    ) -> str:
        """``session/new``; the session id."""
        params = {"cwd": str(cwd), "mcpServers": list(mcp_servers), **extra}
        result = await self.request("session/new", params)
        self.last_session = dict(result)
        return str(result["sessionId"])

    async def load_session(
        self, session_id: str, cwd: Path | str, mcp_servers: Sequence[dict[str, Any]] = ()
    ) -> Any:
        params = {"sessionId": session_id, "cwd": str(cwd), "mcpServers": list(mcp_servers)}
        return await self.request("session/load", params)

    async def set_mode(self, session_id: str, mode_id: str) -> Any:
        return await self.request("session/set_mode", {"sessionId": session_id, "modeId": mode_id})

    async def prompt(
        self, session_id: str, *blocks: str | dict[str, Any], within: float | None = None
    ) -> dict[str, Any]:
        """``session/prompt`` with text (a ``str``) and content blocks; the response."""
        prompt = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
        params = {"sessionId": session_id, "prompt": prompt}
        return dict(await self.request("session/prompt", params, within=within))

    def start_prompt(
        self, session_id: str, *blocks: str | dict[str, Any]
    ) -> asyncio.Task[dict[str, Any]]:
        """The prompt as a task, for a test that acts while the turn runs."""
        task = asyncio.create_task(self.prompt(session_id, *blocks))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def cancel(self, session_id: str, *, answer_pending: bool = True) -> None:
        """``session/cancel``; then (as the spec asks of a client) answer the session's
        pending permissions ``cancelled`` — unless the test waits for a withdrawal."""
        await self.notify("session/cancel", {"sessionId": session_id})
        if answer_pending:
            self.client.settle(session_id)

    # --- waiting on what the agent sends ---------------------------------------------------
    async def wait_for_update(
        self,
        kind: str,
        session_id: str | None = None,
        *,
        after: int = 0,
        within: float | None = None,
    ) -> Update:
        """The first ``session/update`` of ``kind`` (from index ``after``), event-driven."""

        def found() -> Update | None:
            return next(
                (
                    u
                    for u in self.client.updates[after:]
                    if u.kind == kind and (session_id is None or u.session_id == session_id)
                ),
                None,
            )

        return await self.client.wait_for(found, f"a {kind} update", self._waited(within))

    async def wait_for_permission(
        self, *, pending: bool = True, within: float | None = None
    ) -> PermissionAsked:
        """The first permission request (still unanswered, when ``pending``)."""

        def found() -> PermissionAsked | None:
            return next((p for p in self.client.permissions if p.pending or not pending), None)

        return await self.client.wait_for(found, "a permission request", self._waited(within))

    def _waited(self, within: float | None) -> float:
        return self.timeout if within is None else within

    def text(self, session_id: str | None = None, kind: str = "agent_message_chunk") -> str:
        """The concatenated text of the chunk updates of ``kind``."""
        return "".join(
            u.text()
            for u in self.client.updates
            if u.kind == kind and (session_id is None or u.session_id == session_id)
        )

    # --- the end ---------------------------------------------------------------------------
    async def exit_after_eof(self, within: float = 2.0) -> ExitCheck:
        """Close the agent's stdin; did it (and all it started) exit within ``within`` s?"""
        return await self.process.exit_after_eof(within)

    async def close(self) -> None:
        """Stop the connection, kill terminals and the agent's whole process group."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.process.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.connection.close(), 5)
        await self.client.terminals.close()
