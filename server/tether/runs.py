"""Runs in flight: create one from ``agent/run`` params, execute it, cancel or steer it.

Transport-independent: the LSP layer and in-process tests drive it the same way.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio

from tether_protocol import (
    HistoryResult,
    RunParams,
    RunResult,
    SessionsResult,
    UndoResult,
    Usage,
)

from .approvals import ApprovalGate, ApprovalPolicy
from .config import Config, ConfigError
from .context import SessionWindows
from .events import RunEvents
from .host import Editor, EventSink
from .loop import AgentLoop, Limits
from .prompting import system_prompt
from .providers import make_provider
from .providers.base import Message
from .session import SessionLogWriter, SessionRecorder, SessionSink, new_session_id
from .sessionlog import UndoneRecord
from .sessions import find_run, list_sessions, load
from .tools.base import ToolContext
from .tools.registry import ToolRegistry
from .undo import undo_edits
from .workspace import Workspace


class InvalidRun(ValueError):
    """``agent/run`` params that cannot start a run; the message names the field."""


@dataclass(slots=True)
class Run:
    """A run in flight."""

    run_id: str
    session_id: str
    prompt: str
    loop: AgentLoop
    work_done_token: str | int | None
    finished: anyio.Event = field(default_factory=anyio.Event)
    result: RunResult | None = None


class RunManager:
    """Owns every run of a server: ids, session histories, cancel and steer."""

    def __init__(self, tools: ToolRegistry, log_writer: SessionLogWriter) -> None:
        self.tools = tools
        self.log_writer = log_writer
        self._runs: dict[str, Run] = {}
        self._histories: dict[str, list[Message]] = {}
        self._policies: dict[str, ApprovalPolicy] = {}
        self._windows = SessionWindows()

    async def _history(self, session_id: str | None) -> tuple[str, list[Message]]:
        """The conversation to continue: in memory, else rebuilt from the session's log."""
        if session_id is None:
            session_id = new_session_id()
            return session_id, self._histories.setdefault(session_id, [])
        if session_id not in self._histories:
            await anyio.to_thread.run_sync(self.log_writer.flush)
            data = await anyio.to_thread.run_sync(load, self.log_writer.state_dir, session_id)
            if data is None:
                raise InvalidRun(f"sessionId: unknown session {session_id!r}")
            self._histories[session_id] = data.history
        return session_id, self._histories[session_id]

    async def create(
        self,
        params: RunParams,
        config: Config,
        workspace: Workspace,
        sinks: Sequence[EventSink],
        editor: Editor,
    ) -> Run:
        """Check the params against the configuration and set a run up (not started)."""
        run_id = params.run_id or "r-" + uuid.uuid4().hex[:16]
        if run_id in self._runs:
            raise InvalidRun(f"runId: a run with id {run_id!r} is already in flight")
        if params.session_id and any(
            r.session_id == params.session_id for r in self._runs.values()
        ):
            raise InvalidRun(
                f"sessionId: session {params.session_id!r} already has a run in flight"
            )
        session_id, history = await self._history(params.session_id)
        try:
            provider = make_provider(
                params.provider or config.provider, config, workspace.root, model=params.model
            )
        except ConfigError as exc:
            raise InvalidRun(str(exc)) from exc
        limits = params.limits
        events = RunEvents(run_id, [*sinks, SessionSink(self.log_writer, session_id)])
        policy = self._policies.setdefault(session_id, ApprovalPolicy())
        policy.configure(config.auto_approve)
        loop = AgentLoop(
            provider=provider,
            tools=self.tools,
            context=ToolContext(
                workspace=workspace,
                run_id=run_id,
                editor=editor,
                gate=ApprovalGate(policy, editor, events),
            ),
            events=events,
            limits=Limits(
                max_steps=(limits and limits.max_steps) or config.max_steps,
                timeout_seconds=(limits and limits.timeout_seconds) or config.timeout_seconds,
                max_tokens=limits.max_tokens if limits else None,
                max_cost_usd=limits.max_cost_usd if limits else None,
            ),
            system=system_prompt(workspace, self.tools.names, params.context),
            history=history,
            recorder=SessionRecorder(self.log_writer, session_id, run_id),
            context_budget=config.context_budget_tokens,
            window=self._windows.window(session_id, provider),
        )
        run = Run(run_id, session_id, params.prompt, loop, params.work_done_token)
        self._runs[run_id] = run
        return run

    async def execute(self, run: Run) -> RunResult:
        """Run to its outcome and build the result (also when cancelled from outside)."""
        try:
            await run.loop.run(run.prompt, run.session_id)
        finally:
            state = run.loop.state
            run.result = RunResult(
                run_id=run.run_id,
                session_id=run.session_id,
                outcome=state.outcome or "cancelled",
                answer=state.answer,
                steps=state.steps,
                usage=Usage(
                    input_tokens=state.input_tokens,
                    output_tokens=state.output_tokens,
                    cost_usd=state.cost_usd,
                ),
                changed_files=list(state.changed_files),
                error=state.error,
            )
            self._runs.pop(run.run_id, None)
            run.finished.set()
        return run.result

    async def undo(self, run_id: str, workspace: Workspace, editor: Editor) -> UndoResult:
        """Revert a finished run's applied edits (also after a restart, from the log)."""
        if run_id in self._runs:
            raise InvalidRun(f"runId: run {run_id!r} is still in flight; cancel it first")
        state_dir = self.log_writer.state_dir
        await anyio.to_thread.run_sync(self.log_writer.flush)
        session_id = await anyio.to_thread.run_sync(find_run, state_dir, run_id)
        data = (
            None
            if session_id is None
            else await anyio.to_thread.run_sync(load, state_dir, session_id)
        )
        if data is None or session_id is None:
            raise InvalidRun(f"runId: unknown run {run_id!r}")
        if run_id in data.undone:
            return UndoResult()
        result = await undo_edits([e for e in data.edits if e.run_id == run_id], workspace, editor)
        self.log_writer.append(session_id, UndoneRecord(run_id=run_id))
        return result

    async def sessions(self, limit: int | None) -> SessionsResult:
        """Stored sessions, newest first."""
        await anyio.to_thread.run_sync(self.log_writer.flush)
        found = await anyio.to_thread.run_sync(list_sessions, self.log_writer.state_dir, limit)
        return SessionsResult(sessions=found)

    async def history(self, session_id: str) -> HistoryResult:
        """A stored session's events, in order; ``InvalidRun`` for an unknown session."""
        await anyio.to_thread.run_sync(self.log_writer.flush)
        data = await anyio.to_thread.run_sync(load, self.log_writer.state_dir, session_id)
        if data is None:
            raise InvalidRun(f"sessionId: unknown session {session_id!r}")
        return HistoryResult(session_id=session_id, events=data.events)

    def cancel(self, run_id: str) -> bool:
        """Cancel a run in flight; False when there is none with this id."""
        run = self._runs.get(run_id)
        if run is None:
            return False
        run.loop.cancel()
        return True

    def steer(self, run_id: str, message: str) -> bool:
        """Queue a user message for a run in flight; False when there is none."""
        run = self._runs.get(run_id)
        if run is None:
            return False
        run.loop.steer(message)
        return True

    def cancel_all(self) -> None:
        """Cancel every run in flight (shutdown)."""
        for run in list(self._runs.values()):
            run.loop.cancel()
