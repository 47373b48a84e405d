"""A log as kill -9 leaves it: tool calls without results are closed on load."""

from __future__ import annotations

from tether.providers.base import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from tether.session.repair import INTERRUPTED, close_interrupted_calls

A = ToolCall("c1", "read_file", {"path": "a.py"})
B = ToolCall("c2", "bash", {"command": "sleep 100"})


def result(call: ToolCall, text: str = "ok") -> ToolResultMessage:
    return ToolResultMessage(call.call_id, call.name, text, False)


def interrupted(call: ToolCall) -> ToolResultMessage:
    return ToolResultMessage(call.call_id, call.name, INTERRUPTED, True)


def test_a_call_without_result_at_the_end_is_closed() -> None:
    history = [UserMessage("go"), AssistantMessage("running", (A,))]
    repaired, added, dropped = close_interrupted_calls(history)
    assert repaired == [*history, interrupted(A)] and (added, dropped) == (1, 0)


def test_the_missing_result_goes_after_the_results_there_are() -> None:
    history = [
        UserMessage("go"),
        AssistantMessage("", (A, B)),
        result(A),
        UserMessage("next prompt, in a later run"),
    ]
    repaired, added, _ = close_interrupted_calls(history)
    assert repaired == [*history[:3], interrupted(B), history[3]] and added == 1


def test_a_result_without_its_call_is_dropped() -> None:
    history = [UserMessage("go"), result(A), AssistantMessage("done")]
    assert close_interrupted_calls(history) == ([history[0], history[2]], 0, 1)


def test_a_whole_history_is_left_as_it_is() -> None:
    history = [UserMessage("go"), AssistantMessage("", (A, B)), result(B), result(A)]
    assert close_interrupted_calls(history) == (history, 0, 0)
