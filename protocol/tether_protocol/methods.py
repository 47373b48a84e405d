"""The wire method names of protocol v1: the one table every client copies."""

from __future__ import annotations

from typing import Final

AGENT_RUN: Final = "agent/run"
AGENT_CANCEL: Final = "agent/cancel"
AGENT_STEER: Final = "agent/steer"
AGENT_UNDO: Final = "agent/undo"
AGENT_CHECKPOINTS: Final = "agent/checkpoints"
AGENT_REWIND: Final = "agent/rewind"
AGENT_SESSIONS: Final = "agent/sessions"
AGENT_HISTORY: Final = "agent/history"
AGENT_RULES_LIST: Final = "agent/rules/list"
AGENT_RULES_ADD: Final = "agent/rules/add"
AGENT_RULES_REMOVE: Final = "agent/rules/remove"
AGENT_COMMANDS: Final = "agent/commands"
AGENT_COMMAND: Final = "agent/command"
AGENT_EVENT: Final = "agent/event"
AGENT_APPROVE: Final = "agent/approve"
AGENT_SAVE_DOCUMENTS: Final = "agent/saveDocuments"
AGENT_DIAGNOSTICS: Final = "agent/diagnostics"
AGENT_ASK: Final = "agent/ask"
AGENT_CODE: Final = "agent/code"
AGENT_JOBS: Final = "agent/jobs"
AGENT_JOB_STOP: Final = "agent/jobStop"
AGENT_JOB_OUTPUT: Final = "agent/jobOutput"

COMMAND_RUN: Final = "tether.run"
COMMAND_CANCEL: Final = "tether.cancel"

PROTOCOL_VERSION: Final = 2

CLIENT_TO_SERVER: Final = (
    AGENT_RUN,
    AGENT_CANCEL,
    AGENT_STEER,
    AGENT_UNDO,
    AGENT_CHECKPOINTS,
    AGENT_REWIND,
    AGENT_SESSIONS,
    AGENT_HISTORY,
    AGENT_RULES_LIST,
    AGENT_RULES_ADD,
    AGENT_RULES_REMOVE,
    AGENT_COMMANDS,
    AGENT_COMMAND,
    AGENT_JOBS,
    AGENT_JOB_STOP,
    AGENT_JOB_OUTPUT,
)
SERVER_TO_CLIENT: Final = (
    AGENT_EVENT,
    AGENT_APPROVE,
    AGENT_SAVE_DOCUMENTS,
    AGENT_DIAGNOSTICS,
    AGENT_ASK,
    AGENT_CODE,
)
COMMANDS: Final = (COMMAND_RUN, COMMAND_CANCEL)
