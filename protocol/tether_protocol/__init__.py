"""Pydantic models of Tether protocol v1: the wire contract between server and clients."""

from .approvals import (
    ApproveParams,
    ApproveResult,
    CommandPreview,
    DiffPreview,
    Preview,
    ProposedHunk,
    ProposedText,
    SaveDocumentsParams,
    SaveDocumentsResult,
)
from .ask import AskParams, AskResult
from .base import Position, Range, WireModel
from .checkpoints import (
    Checkpoint,
    CheckpointFile,
    CheckpointsParams,
    CheckpointsResult,
    RewindParams,
    RewindResult,
    RewindWhat,
)
from .commands import (
    CommandParams,
    CommandResult,
    CommandsParams,
    CommandsResult,
    SessionCommand,
)
from .config import (
    ClientTetherCapabilities,
    McpServerSettings,
    ServerTetherCapabilities,
    TetherSettings,
)
from .diagnostics import Diagnostic, DiagnosticsParams, DiagnosticsResult, FileDiagnostics
from .events import (
    EVENT_KINDS,
    TRANSIENT_KINDS,
    ApprovalEvent,
    AssistantEvent,
    CompactedEvent,
    Decision,
    InjectionFlaggedEvent,
    PlanEntry,
    PlanEvent,
    RetryEvent,
    RunEvent,
    RunFinishedEvent,
    RunStartedEvent,
    SandboxBackend,
    StepEvent,
    TextDeltaEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolProgressEvent,
    ToolResultEvent,
    UsageEvent,
    parse_event,
)
from .jobs import (
    MAX_VIEW_WAIT_SECONDS,
    JobInfo,
    JobOutputParams,
    JobOutputResult,
    JobsParams,
    JobsResult,
    JobState,
    JobStopParams,
    JobStopResult,
)
from .methods import (
    AGENT_APPROVE as AGENT_APPROVE_METHOD,
)
from .methods import (
    AGENT_ASK as AGENT_ASK_METHOD,
)
from .methods import (
    AGENT_CANCEL as AGENT_CANCEL_METHOD,
)
from .methods import (
    AGENT_CHECKPOINTS as AGENT_CHECKPOINTS_METHOD,
)
from .methods import (
    AGENT_COMMAND as AGENT_COMMAND_METHOD,
)
from .methods import (
    AGENT_COMMANDS as AGENT_COMMANDS_METHOD,
)
from .methods import (
    AGENT_DIAGNOSTICS as AGENT_DIAGNOSTICS_METHOD,
)
from .methods import (
    AGENT_EVENT as AGENT_EVENT_METHOD,
)
from .methods import (
    AGENT_HISTORY as AGENT_HISTORY_METHOD,
)
from .methods import (
    AGENT_JOB_OUTPUT as AGENT_JOB_OUTPUT_METHOD,
)
from .methods import (
    AGENT_JOB_STOP as AGENT_JOB_STOP_METHOD,
)
from .methods import (
    AGENT_JOBS as AGENT_JOBS_METHOD,
)
from .methods import (
    AGENT_REWIND as AGENT_REWIND_METHOD,
)
from .methods import (
    AGENT_RULES_ADD as AGENT_RULES_ADD_METHOD,
)
from .methods import (
    AGENT_RULES_LIST as AGENT_RULES_LIST_METHOD,
)
from .methods import (
    AGENT_RULES_REMOVE as AGENT_RULES_REMOVE_METHOD,
)
from .methods import (
    AGENT_RUN as AGENT_RUN_METHOD,
)
from .methods import (
    AGENT_SAVE_DOCUMENTS as AGENT_SAVE_DOCUMENTS_METHOD,
)
from .methods import (
    AGENT_SESSIONS as AGENT_SESSIONS_METHOD,
)
from .methods import (
    AGENT_STEER as AGENT_STEER_METHOD,
)
from .methods import (
    AGENT_UNDO as AGENT_UNDO_METHOD,
)
from .methods import (
    COMMAND_CANCEL,
    COMMAND_RUN,
    PROTOCOL_VERSION,
)
from .rules import (
    ProposedRule,
    Rule,
    RuleDecision,
    RulesAddParams,
    RulesAddResult,
    RuleScope,
    RulesListParams,
    RulesListResult,
    RulesRemoveParams,
    RulesRemoveResult,
)
from .run import (
    OUTCOMES,
    CancelParams,
    CancelResult,
    HistoryParams,
    HistoryResult,
    Outcome,
    PartialUndo,
    RunContext,
    RunLimits,
    RunParams,
    RunResult,
    SessionInfo,
    SessionsParams,
    SessionsResult,
    SteerParams,
    SteerResult,
    UndoParams,
    UndoResult,
    Usage,
)
from .script import Script, ScriptToolCall, ScriptTurn

__all__ = [
    "AGENT_APPROVE_METHOD",
    "AGENT_ASK_METHOD",
    "AskParams",
    "AskResult",
    "AGENT_CANCEL_METHOD",
    "AGENT_CHECKPOINTS_METHOD",
    "AGENT_REWIND_METHOD",
    "Checkpoint",
    "CheckpointFile",
    "CheckpointsParams",
    "CheckpointsResult",
    "RewindParams",
    "RewindResult",
    "RewindWhat",
    "AGENT_DIAGNOSTICS_METHOD",
    "AGENT_EVENT_METHOD",
    "AGENT_HISTORY_METHOD",
    "AGENT_RULES_ADD_METHOD",
    "AGENT_RULES_LIST_METHOD",
    "AGENT_RULES_REMOVE_METHOD",
    "AGENT_RUN_METHOD",
    "AGENT_SAVE_DOCUMENTS_METHOD",
    "AGENT_SESSIONS_METHOD",
    "AGENT_JOBS_METHOD",
    "AGENT_JOB_STOP_METHOD",
    "AGENT_JOB_OUTPUT_METHOD",
    "MAX_VIEW_WAIT_SECONDS",
    "JobInfo",
    "JobOutputParams",
    "JobOutputResult",
    "JobState",
    "JobStopParams",
    "JobStopResult",
    "JobsParams",
    "JobsResult",
    "AGENT_STEER_METHOD",
    "AGENT_UNDO_METHOD",
    "AGENT_COMMANDS_METHOD",
    "AGENT_COMMAND_METHOD",
    "CommandParams",
    "CommandResult",
    "CommandsParams",
    "CommandsResult",
    "SessionCommand",
    "COMMAND_CANCEL",
    "COMMAND_RUN",
    "PROTOCOL_VERSION",
    "EVENT_KINDS",
    "OUTCOMES",
    "ApprovalEvent",
    "ApproveParams",
    "ApproveResult",
    "AssistantEvent",
    "CompactedEvent",
    "InjectionFlaggedEvent",
    "PlanEntry",
    "PlanEvent",
    "RetryEvent",
    "CancelParams",
    "CancelResult",
    "ClientTetherCapabilities",
    "CommandPreview",
    "Decision",
    "Diagnostic",
    "DiagnosticsParams",
    "DiagnosticsResult",
    "FileDiagnostics",
    "HistoryParams",
    "HistoryResult",
    "DiffPreview",
    "Outcome",
    "Position",
    "Preview",
    "ProposedRule",
    "ProposedHunk",
    "ProposedText",
    "Rule",
    "RuleDecision",
    "RuleScope",
    "RulesAddParams",
    "RulesAddResult",
    "RulesListParams",
    "RulesListResult",
    "RulesRemoveParams",
    "RulesRemoveResult",
    "Range",
    "RunContext",
    "RunEvent",
    "RunFinishedEvent",
    "RunLimits",
    "RunParams",
    "RunResult",
    "RunStartedEvent",
    "SandboxBackend",
    "SaveDocumentsParams",
    "SaveDocumentsResult",
    "SessionInfo",
    "SessionsParams",
    "SessionsResult",
    "Script",
    "ScriptToolCall",
    "ScriptTurn",
    "ServerTetherCapabilities",
    "StepEvent",
    "SteerParams",
    "SteerResult",
    "TetherSettings",
    "McpServerSettings",
    "TextDeltaEvent",
    "ThinkingEvent",
    "TRANSIENT_KINDS",
    "ToolCallEvent",
    "ToolProgressEvent",
    "ToolResultEvent",
    "UndoParams",
    "PartialUndo",
    "UndoResult",
    "Usage",
    "UsageEvent",
    "WireModel",
    "parse_event",
]
