"""Make a conversation read back from a log acceptable to the model APIs again.

A server killed during a tool call (kill -9, a crash, a power cut) leaves an assistant
message whose calls have no result in the log. Both OpenAI and Anthropic refuse such a
conversation (HTTP 400) on every later request, so the session could never be resumed.
On load, every call without a result gets one saying the call was interrupted, placed
right after the results it does have; a result whose call is not in the reply before it
(its assistant line was torn) is dropped, since the APIs refuse that too.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..providers.base import AssistantMessage, Message, ToolResultMessage

INTERRUPTED = (
    "interrupted: the server stopped while this tool call was running, so it has no "
    "result; it may or may not have taken effect — check before doing it again"
)
"""The result given to a tool call that never got one."""


def close_interrupted_calls(history: Sequence[Message]) -> tuple[list[Message], int, int]:
    """The history with a result for every tool call; how many were added and dropped."""
    repaired: list[Message] = []
    open_calls: dict[str, str] = {}  # call id -> tool name, of the latest assistant reply
    added = dropped = 0

    def close_open() -> None:
        nonlocal added
        for call_id, tool in open_calls.items():
            repaired.append(ToolResultMessage(call_id, tool, INTERRUPTED, True))
            added += 1
        open_calls.clear()

    for message in history:
        if isinstance(message, ToolResultMessage):
            if open_calls.pop(message.call_id, None) is None:
                dropped += 1  # no call of the reply before it asked for this result
                continue
            repaired.append(message)
            continue
        close_open()
        repaired.append(message)
        if isinstance(message, AssistantMessage):
            open_calls = {call.call_id: call.name for call in message.tool_calls}
    close_open()
    return repaired, added, dropped
