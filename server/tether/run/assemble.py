"""The composition root of a run: ``agent/run`` params, the settings and what a front offers
(the workspace, the editor, event sinks) put together into an ``AgentLoop`` ready to start —
provider, tools, system prompt, approval gate, sandbox, problems, session recorder.

Transport-independent: ``RunManager`` calls it for every run it creates, whatever front
(the LSP server today) asked for the run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether_protocol import RunParams

from ..config.files import user_config_path
from ..config.layers import Config
from ..diagnostics.watch import ProblemWatcher
from ..events import RunEvents
from ..host import Editor, EventSink, ReportsDiagnostics
from ..policy.gate import ApprovalGate, ApprovalPolicy
from ..policy.store import RuleStore
from ..prompt import model_input
from ..providers import make_provider
from ..providers.base import Message
from ..sandbox.probe import sandbox_for
from ..session.checkpoints import SessionCheckpoints
from ..session.writer import SessionLogWriter, SessionRecorder, SessionSink
from ..tools.base import ToolDeps
from ..tools.jobs import JobTable
from ..tools.lsp_tools import CodeIntel, with_code_tools
from ..tools.registry import ToolRegistry
from ..workspace.folders import Workspace
from .loop import AgentLoop, Limits
from .window import SessionWindows

if TYPE_CHECKING:
    from ..mcp.hub import McpHub


@dataclass(slots=True)
class SessionMemory:
    """An open session: its conversation and what the user allowed always in it."""

    history: list[Message]
    policy: ApprovalPolicy = field(default_factory=ApprovalPolicy)
    notes: list[str] = field(default_factory=list)
    """What the model is told before the session's next prompt (an undo since its last)."""
    windows: SessionWindows = field(default_factory=SessionWindows)
    """Context windows a model's refusal lowered (forgotten with the session)."""
    jobs: JobTable = field(default_factory=JobTable)
    """The session's background jobs (they end with it: ``RunManager`` closes them)."""


@dataclass(frozen=True, slots=True)
class AssembledRun:
    loop: AgentLoop
    message: str
    """The prompt as the model reads it, with the ``@file`` mentions attached."""


def _watcher(editor: Editor, workspace: Workspace, config: Config) -> ProblemWatcher | None:
    """The run's access to the editor's problems, when the editor can tell them."""
    if not isinstance(editor, ReportsDiagnostics):
        return None
    return ProblemWatcher(
        editor, workspace, config.diagnostics_settle_ms, config.diagnostics_max_wait_ms
    )


async def _with_mcp(
    tools: ToolRegistry, mcp: McpHub | None, config: Config, workspace: Workspace
) -> ToolRegistry:
    """The run's tools: the MCP servers' too when the front runs any. Nothing waits for
    them here: the run does, once it started (``RunTools.ready``), so that the wait is
    shown and a cancel ends it."""
    if mcp is None:
        return tools
    await mcp.configure(config.mcp_servers, workspace.root)
    if not mcp.servers:
        return tools
    mcp.start()
    mcp.warn_failed()
    from ..mcp.registry import RunTools  # only a front with MCP servers needs it

    return RunTools(tools, mcp)


async def assemble_run(
    params: RunParams,
    run_id: str,
    session_id: str,
    memory: SessionMemory,
    *,
    config: Config,
    workspace: Workspace,
    sinks: Sequence[EventSink],
    editor: Editor,
    tools: ToolRegistry,
    log_writer: SessionLogWriter,
    rules: RuleStore | None,
    mcp: McpHub | None = None,
    code: CodeIntel | None = None,
) -> AssembledRun:
    """The loop of run ``run_id``, continuing ``memory`` (its conversation is extended in
    place); ``ConfigError`` (naming the field) when the provider cannot be made. Nothing
    is started: the events begin when the loop runs."""
    provider = make_provider(
        params.provider or config.provider, config, workspace.root, model=params.model
    )
    limits = params.limits
    tools = await with_code_tools(tools, code, workspace, editor)
    tools = await _with_mcp(tools, mcp, config, workspace)
    read = await model_input(workspace, tools.names, params.prompt, params.context)
    events = RunEvents(run_id, [*sinks, SessionSink(log_writer, session_id)])
    memory.policy.configure(config.auto_approve, rules)
    memory.jobs.limit = config.max_background_jobs
    recorder = SessionRecorder(log_writer, session_id, run_id)
    recorder.workspace(workspace.roots)  # which folder's session it is (ACP's session/list)
    sandbox = await sandbox_for(
        config.sandbox,
        os.environ,
        user_config_path(os.environ).parent,
        config.state_dir,
        config.sandbox_env,
    )
    loop = AgentLoop(
        provider=provider,
        tools=tools,
        deps=ToolDeps(
            workspace=workspace,
            run_id=run_id,
            editor=editor,
            gate=ApprovalGate(
                memory.policy, editor, events, config.approval_timeout_seconds, sandbox=sandbox
            ),
            problems=_watcher(editor, workspace, config),
            checkpoints=SessionCheckpoints(
                log_writer,
                session_id,
                run_id,
                workspace,
                config.checkpoint_max_file_bytes,
                config.checkpoint_store_max_bytes,
            ),
            jobs=memory.jobs,
            command_input=config.command_input,
        ),
        events=events,
        limits=Limits(
            max_steps=(limits and limits.max_steps) or config.max_steps,
            timeout_seconds=(limits and limits.timeout_seconds) or config.timeout_seconds,
            max_tokens=limits.max_tokens if limits else None,
            max_cost_usd=limits.max_cost_usd if limits else None,
        ),
        system=read.system,
        history=memory.history,
        recorder=recorder,
        context_budget=config.context_budget_tokens,
        window=memory.windows.window(session_id, provider),
    )
    return AssembledRun(loop, read.message)
