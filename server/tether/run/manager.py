"""Runs and their lifecycle: create one from ``agent/run`` params, execute it, cancel or
steer it, and keep the memory of the sessions they continue. What a run is made of is put
together by ``assemble.py``.

Transport-independent: the LSP layer and in-process tests drive it the same way.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from tether_protocol import (
    Checkpoint,
    RewindParams,
    RewindResult,
    RunParams,
    RunResult,
    UndoResult,
    Usage,
)

from ..config.layers import Config, ConfigError
from ..host import Editor, EventSink
from ..policy.gate import ApprovalPolicy
from ..policy.store import RuleStore
from ..providers.base import UserMessage
from ..session.blobs import StoreDamaged
from ..session.index import session_log_path
from ..session.lock import SessionBusy, SessionLocks
from ..session.prune import maybe_prune
from ..session.rewind import RewindRefused, checkpoint_list, rewind_session
from ..session.store import RunIndex, load, stored_session
from ..session.undo import undo_run
from ..session.writer import SessionLogWriter, new_session_id
from ..tools.registry import ToolRegistry
from ..workspace.folders import Workspace
from ..workspace.personal import prepare
from ..workspace.places import user_places
from .assemble import SessionMemory, assemble_run
from .loop import AgentLoop

if TYPE_CHECKING:
    from ..mcp.hub import McpHub
    from ..tools.jobs import JobTable
    from ..tools.lsp_tools import CodeIntel


class InvalidRun(ValueError):
    """``agent/run`` params that cannot start a run; the message names the field."""


RunPhase = Literal["created", "running", "finished"]

SESSIONS_KEPT = 16
"""Sessions whose conversation and allow-always grants stay in memory once idle (LRU)."""


@dataclass(slots=True, eq=False)
class Run:
    """One run, owned by its ``RunManager`` from ``create`` until it is finished.

    ``created`` (ids reserved, being set up) → ``running`` (the loop runs) → ``finished``
    (ids released). Cancel and steer work in every phase but the last.
    """

    run_id: str
    session_id: str
    prompt: str
    progress_token: str | int | None
    """The client's ``workDoneToken``, or the one the transport created for the run."""
    phase: RunPhase = "created"
    loop: AgentLoop | None = None
    cancelled: bool = False
    steers: list[str] = field(default_factory=list)
    """Steering messages that arrived before the loop existed."""
    message: str | None = None
    """The prompt as the model reads it, with the ``@file`` mentions attached."""
    finished: anyio.Event = field(default_factory=anyio.Event)
    setup: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    """Scope of the transport's work before the run starts (progress creation)."""


class RunManager:
    """Owns every run of a server: ids, phases, session memory, cancel and steer."""

    def __init__(
        self, tools: ToolRegistry, log_writer: SessionLogWriter, rules: RuleStore | None = None
    ) -> None:
        self.tools = tools
        self.mcp: McpHub | None = None
        """The front's MCP servers (None: the front runs none)."""
        self.code: CodeIntel | None = None
        """Who answers the code tools (the front's language servers; None: no one)."""
        self.log_writer = log_writer
        self.rules = rules
        """The user's and the projects' approval rules (None: session rules only)."""
        self._runs: dict[str, Run] = {}
        """Runs created and not finished: their run and session ids are taken."""
        self._sessions: OrderedDict[str, SessionMemory] = OrderedDict()
        self._locks: dict[str, SessionLocks] = {}
        """The lock each session in memory was claimed with (one session, one process)."""
        self._run_index = RunIndex(log_writer.state_dir)
        self._created: set[str] = set()
        """Run ids this server created (in flight or done; maybe not yet in a log)."""
        self._rewinding: set[str] = set()
        """Sessions being rewound: no run of theirs starts meanwhile."""

    async def _sessions_with_run(self, run_id: str) -> list[str]:
        """The stored sessions that started a run ``run_id`` (newest first)."""
        if self._run_index.state_dir != self.log_writer.state_dir:  # set by initialize
            self._run_index = RunIndex(self.log_writer.state_dir)
        await anyio.to_thread.run_sync(self.log_writer.flush)
        await anyio.to_thread.run_sync(self._run_index.refresh)
        return self._run_index.sessions_of(run_id)

    def _reserve(self, params: RunParams) -> Run:
        """Take the run's ids at once (no await): a second request for them is refused."""
        run_id = params.run_id or "r-" + uuid.uuid4().hex[:16]
        if run_id in self._runs:
            raise InvalidRun(f"runId: a run with id {run_id!r} is already in flight")
        if params.run_id is not None and run_id in self._created:
            raise InvalidRun(f"runId: a run with id {run_id!r} already exists; choose a new id")
        session_id = params.session_id
        if session_id is not None and any(r.session_id == session_id for r in self._runs.values()):
            raise InvalidRun(f"sessionId: session {session_id!r} already has a run in flight")
        if session_id in self._rewinding:
            raise InvalidRun(f"sessionId: session {session_id!r} is being rewound")
        run = Run(run_id, session_id or new_session_id(), params.prompt, params.work_done_token)
        self._runs[run_id] = run
        return run

    def _release(self, run: Run) -> None:
        """Free the run's ids and let its session be evicted (once; later calls do nothing)."""
        if run.phase == "finished":
            return
        run.phase = "finished"
        del self._runs[run.run_id]
        if run.session_id in self._sessions:
            self._sessions.move_to_end(run.session_id)
        self._evict()
        run.finished.set()

    def _evict(self) -> None:
        """Forget the least recently used idle sessions past ``SESSIONS_KEPT``."""
        busy = {r.session_id for r in self._runs.values()}
        idle = [s for s in self._sessions if s not in busy]
        for session_id in idle[: max(0, len(self._sessions) - SESSIONS_KEPT)]:
            self._sessions.pop(session_id).jobs.close()  # a session's jobs end with it
            locks = self._locks.pop(session_id, None)
            if locks is not None:  # no longer open here: another process may continue it
                locks.release(session_id)

    def session_policy(self, session_id: str) -> ApprovalPolicy | None:
        """The approval policy (session rules) of a session in memory, if it is."""
        memory = self._sessions.get(session_id)
        return None if memory is None else memory.policy

    async def session_memory(self, session_id: str, *, new: bool) -> SessionMemory:
        """A session's memory, kept among the recent ones: a ``new`` one starts empty, any
        other is the one in memory or rebuilt from its log (``InvalidRun`` when unknown).
        For a front that names a session before its first run (ACP's ``session/new``)."""
        return await self._session(session_id, new)

    async def _session(self, session_id: str, new: bool) -> SessionMemory:
        """The session to continue: in memory, else rebuilt from its log (the truth). Taken
        into memory, it is open here: ``InvalidRun`` when another process has it open."""
        memory = self._sessions.get(session_id)
        if memory is None:
            state_dir = self.log_writer.state_dir
            if not new:
                await anyio.to_thread.run_sync(self.log_writer.flush)
                path = session_log_path(state_dir, session_id)
                if not await anyio.to_thread.run_sync(path.is_file):
                    raise InvalidRun(f"sessionId: unknown session {session_id!r}")
            locks = await self._claim(session_id)  # before the log is read: no turn missed
            try:
                if new:
                    memory = SessionMemory([])
                else:
                    data = await anyio.to_thread.run_sync(load, state_dir, session_id)
                    if data is None:
                        raise InvalidRun(f"sessionId: unknown session {session_id!r}")
                    memory = SessionMemory(data.history, notes=list(data.notes))
            except BaseException:
                locks.release(session_id)
                raise
            if session_id in self._sessions:  # taken in meanwhile: one claim is enough
                locks.release(session_id)
                memory = self._sessions[session_id]
            else:
                self._locks[session_id] = locks
                self._sessions[session_id] = memory
        self._sessions.move_to_end(session_id)
        return memory

    async def hold(self, session_id: str) -> None:
        """Keep a stored session open here until the front closes (ACP's ``session/load``):
        ``InvalidRun`` naming why when another process has it open."""
        await self._claim(session_id)

    def forget(self, session_id: str) -> bool:
        """Close a session here (ACP's ``session/close``): its memory dropped and every
        claim of it given back, so another process may continue it. False (nothing done)
        while a run of it is in flight."""
        if any(r.session_id == session_id for r in self._runs.values()):
            return False
        memory = self._sessions.pop(session_id, None)
        if memory is not None:
            memory.jobs.close()
        self._locks.pop(session_id, None)
        locks = self.log_writer.locks
        while locks.holds(session_id):
            locks.release(session_id)
        return True

    async def _claim(self, session_id: str) -> SessionLocks:
        """Open the session for prompting in this process (``session/lock.py``); the locks
        it was claimed in. ``InvalidRun`` naming why when another process has it open."""
        locks = self.log_writer.locks
        try:
            with anyio.CancelScope(shield=True):  # a claim made is the caller's to give back
                await anyio.to_thread.run_sync(locks.claim, session_id)
        except SessionBusy as exc:
            raise InvalidRun(f"sessionId: {exc}") from None
        return locks

    async def create(
        self,
        params: RunParams,
        config: Config,
        workspace: Workspace,
        sinks: Sequence[EventSink],
        editor: Editor,
        mcp: McpHub | None = None,
    ) -> Run:
        """Reserve the ids, check the params and set a run up (``created``, not started).

        ``mcp``: this run's MCP servers when they are not the front's (an ACP session's
        own). The caller must hand the run to ``execute``, which releases it; if this
        raises, the ids are already released.
        """
        run = self._reserve(params)
        try:
            return await self._set_up(
                run, params, config, workspace, sinks, editor, mcp or self.mcp, notes=True
            )
        except BaseException:
            self._release(run)
            raise

    async def _set_up(
        self,
        run: Run,
        params: RunParams,
        config: Config,
        workspace: Workspace,
        sinks: Sequence[EventSink],
        editor: Editor,
        mcp: McpHub | None,
        *,
        notes: bool = False,
    ) -> Run:
        """``notes``: the session's undo notes join its conversation before this prompt
        (a run's; ``/compact`` leaves them for the next prompt, as a reload of the log does)."""
        run_id, session_id = run.run_id, run.session_id
        if params.run_id is not None and await self._sessions_with_run(run_id):
            # undo finds a run by its id: one id, one run, ever
            raise InvalidRun(
                f"runId: a run with id {run_id!r} already exists in a stored session; "
                "choose a new id"
            )
        memory = await self._session(session_id, new=params.session_id is None)
        if notes and memory.notes:
            memory.history += [UserMessage(note) for note in memory.notes]
            memory.notes.clear()
        try:
            assembled = await assemble_run(
                params,
                run_id,
                session_id,
                memory,
                config=config,
                workspace=workspace,
                sinks=sinks,
                editor=editor,
                tools=self.tools,
                mcp=mcp,
                code=self.code,
                log_writer=self.log_writer,
                rules=self.rules,
            )
        except ConfigError as exc:
            raise InvalidRun(str(exc)) from exc
        run.loop, run.message = assembled.loop, assembled.message
        self._created.add(run_id)
        return run

    async def undo(self, run_id: str, workspace: Workspace, editor: Editor) -> UndoResult:
        """Undo a finished run's edits (``agent/undo``, ``/undo``); the session's model is
        told before its next prompt. ``UnknownRun`` when no stored session has it."""
        undone = await undo_run(self.log_writer, run_id, workspace, editor)
        memory = None if undone.session_id is None else self._sessions.get(undone.session_id)
        if memory is not None and undone.note:
            memory.notes.append(undone.note)
        return undone.result

    async def checkpoints(self, session_id: str, workspace: Workspace) -> list[Checkpoint]:
        """A stored session's checkpoints (``agent/checkpoints``, ``/rewind``), oldest
        first; ``InvalidRun`` for an unknown session."""
        data = await stored_session(self.log_writer, session_id)
        if data is None:
            raise InvalidRun(f"sessionId: unknown session {session_id!r}")
        return checkpoint_list(data, workspace)

    async def rewind(
        self, params: RewindParams, workspace: Workspace, editor: Editor, cap: int
    ) -> RewindResult:
        """Rewind a session to before a checkpoint (``agent/rewind``, ``/rewind``): its
        files, conversation or both (``cap``: ``checkpointMaxFileBytes``, which the state
        it replaces is kept under); the session in memory follows. ``InvalidRun`` naming
        why it cannot (a run in flight, an unknown checkpoint, a damaged store): then
        nothing was restored."""
        session_id = params.session_id
        if any(r.session_id == session_id for r in self._runs.values()):
            raise InvalidRun(
                f"sessionId: session {session_id!r} has a run in flight; cancel it first"
            )
        if session_id in self._rewinding:
            raise InvalidRun(f"sessionId: session {session_id!r} is being rewound")
        self._rewinding.add(session_id)
        try:
            done = await rewind_session(
                self.log_writer,
                session_id,
                params.checkpoint_id,
                params.restore,
                workspace,
                editor,
                force=params.force,
                cap=cap,
            )
            memory = self._sessions.get(session_id)
            if memory is not None and done.cut:  # the log is the truth: read it again
                data = await stored_session(self.log_writer, session_id)
                if data is not None:
                    memory.history[:] = data.history
                    memory.notes[:] = data.notes
            elif memory is not None and done.note:
                memory.notes.append(done.note)
        except RewindRefused as exc:
            raise InvalidRun(str(exc)) from None
        except StoreDamaged as exc:
            raise InvalidRun(f"checkpointId: {exc}; nothing was restored") from None
        finally:
            self._rewinding.discard(session_id)
        return done.result

    async def compact(
        self,
        session_id: str,
        config: Config,
        workspace: Workspace,
        editor: Editor,
        model: str | None = None,
    ) -> tuple[int, int] | None:
        """Compact a stored session's conversation outside a run (``/compact``), with the
        provider, system prompt and context window a run of it would have (assembled as
        one, never started). ``(tokens before, after)``, None when there was nothing to
        compact; ``InvalidRun`` for an unknown session or one with a run in flight,
        ``ProviderError`` when the summary cannot be had. The summary call's usage and the
        ``compacted`` event go to the session's log under a run id of their own."""
        params = RunParams(prompt="/compact", session_id=session_id, model=model)
        run = self._reserve(params)
        try:
            await self._set_up(run, params, config, workspace, [], editor, None)
            assert run.loop is not None
            return await run.loop.compact_now()
        finally:
            self.log_writer.let_go(run.run_id)  # no run-finished will be written for it
            self._release(run)
            await anyio.to_thread.run_sync(self.log_writer.flush)

    async def execute(self, run: Run, setup: Awaitable[None] | None = None) -> RunResult:
        """Run a created run to its outcome and release it; the result also when cancelled.

        ``setup`` is the front's own preparation (progress): a cancel during it ends the
        run ``cancelled`` without calling the model.
        """
        loop = run.loop
        if loop is None or run.phase != "created":
            if isinstance(setup, Coroutine):
                setup.close()
            raise RuntimeError(f"run {run.run_id!r} is not a created run")
        try:
            if setup is not None:
                if run.cancelled and isinstance(setup, Coroutine):
                    setup.close()  # not needed: never started
                else:
                    with run.setup:
                        await setup
            if run.cancelled:  # before it started: say so in the events, skip the model
                loop.cancel()
                loop.events.run_started(run.prompt, run.session_id)
                loop.events.run_finished("cancelled", 0)
            else:
                run.phase = "running"
                for message in run.steers:
                    loop.steer(message)
                run.steers.clear()
                await loop.run(run.prompt, run.session_id, run.message)
        finally:
            self._release(run)
        # Answered only once its log is written: another process (the terminal after the
        # editor, a restarted server) may continue the session the moment the answer lands.
        await anyio.to_thread.run_sync(self.log_writer.flush)
        state = loop.state
        return RunResult(
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

    def in_flight(self, run_id: str) -> bool:
        """Whether run ``run_id`` is created and not finished."""
        return run_id in self._runs

    def cancel(self, run_id: str) -> bool:
        """Cancel a run not finished (also one still being set up); False when none."""
        run = self._runs.get(run_id)
        if run is None:
            return False
        run.cancelled = True
        run.setup.cancel()
        if run.loop is not None:
            run.loop.cancel()
        return True

    def cancel_progress(self, token: str | int) -> bool:
        """Cancel the run reporting progress on ``token``; False when none."""
        run = next((r for r in self._runs.values() if r.progress_token == token), None)
        return run is not None and self.cancel(run.run_id)

    def steer(self, run_id: str, message: str) -> bool:
        """Queue a user message for a run not finished; False when there is none."""
        run = self._runs.get(run_id)
        if run is None:
            return False
        if run.phase == "running" and run.loop is not None:
            run.loop.steer(message)
        else:  # joins the conversation at the first step
            run.steers.append(message)
        return True

    def cancel_all(self) -> None:
        """Cancel every run not finished (shutdown)."""
        for run_id in list(self._runs):
            self.cancel(run_id)

    def session_jobs(self, session_id: str) -> JobTable | None:
        """The background jobs of a session in memory (None: it is not)."""
        memory = self._sessions.get(session_id)
        return None if memory is None else memory.jobs

    def jobs(self) -> list[tuple[str, JobTable]]:
        """Every session in memory with its background jobs."""
        return [(session_id, memory.jobs) for session_id, memory in self._sessions.items()]

    def close_jobs(self) -> list[asyncio.Task[Any]]:
        """End every session's background jobs (shutdown): their tasks, to wait for."""
        return [task for memory in self._sessions.values() for task in memory.jobs.close()]

    async def wait_all(self) -> None:
        """Wait until every run now in flight has finished (bound it with a deadline)."""
        for run in list(self._runs.values()):
            await run.finished.wait()


def _nothing() -> None:
    """A worker thread's first job."""


def _prepare_places() -> None:
    prepare(user_places())


async def start_background(state_dir: Path, store_max_bytes: int) -> None:
    """Start what every run would otherwise start on a front's first run (``tether serve``
    at ``initialized``, ``tether acp`` at its first session): the worker threads — anyio's
    (files, the session log) and the event loop's executor (a model API's address) — the
    tables of the user's places every write and read is checked against, and the hourly
    look at the checkpoint store's size, whose thread (a scan of every stored blob) then
    runs while the user is still typing, not beside the first prompt."""
    await anyio.to_thread.run_sync(_prepare_places)
    await asyncio.get_running_loop().run_in_executor(None, _nothing)
    maybe_prune(state_dir, store_max_bytes)
