"""The ``thinking`` event: on the wire, in ACP as the agent's thoughts, in the session log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp.validation import SchemaChecker
from tether.acp.updates import Translator, replayed
from tether.host import NoBuffers
from tether.providers.base import AssistantMessage, Reasoning, ToolCall
from tether.session.records import LoggedMessage
from tether.tools import build_tools
from tether.workspace.folders import Workspace
from tether_protocol import ThinkingEvent, parse_event


def _event(kind: str, seq: int, **fields: Any) -> Any:
    return parse_event({"kind": kind, "runId": "r-1", "seq": seq, **fields})


def test_thinking_is_an_acp_thought_never_a_message_live_and_replayed(tmp_path: Path) -> None:
    events = [
        _event("thinking", 1, text="Look at app.py first."),
        _event("text-delta", 2, text="It greets."),
        _event("assistant", 3, text="It greets."),
    ]
    assert isinstance(events[0], ThinkingEvent)
    translator = Translator(Workspace([tmp_path], NoBuffers()), build_tools())
    live = [u for e in events for u in translator.updates(e)]
    again = replayed(events, Translator(Workspace([tmp_path], NoBuffers()), build_tools()))
    for updates in (live, again):
        assert [u["sessionUpdate"] for u in updates] == [
            "agent_thought_chunk",
            "agent_message_chunk",
        ]
        assert updates[0]["content"] == {"type": "text", "text": "Look at app.py first."}
        assert updates[1]["content"]["text"] == "It greets."
        checker = SchemaChecker()
        for update in updates:
            params = {"sessionId": "s-1", "update": update}
            message = {"jsonrpc": "2.0", "method": "session/update", "params": params}
            assert checker.check("to_client", message) == [], update


def test_a_replys_reasoning_survives_the_session_log_byte_for_byte() -> None:
    reply = AssistantMessage(
        "",
        (ToolCall("toolu_1", "read_file", {"path": "a.py"}),),
        (
            Reasoning("anthropic", "thinking", "Read a.py.\n", "EqQB+/sig=="),
            Reasoning("anthropic", "redacted_thinking", data="EmwKAhgB/x=="),
        ),
    )
    line = LoggedMessage.of(reply).model_dump_json(by_alias=True, exclude_none=True)
    assert LoggedMessage.model_validate_json(line).message() == reply
    plain = LoggedMessage.of(AssistantMessage("hi")).model_dump_json(
        by_alias=True, exclude_none=True
    )
    assert "reasoning" not in plain  # a reply without reasoning is logged as before
