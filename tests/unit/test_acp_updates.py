"""The ACP front's event mapping and wire layer, without a process."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from tests.acp.validation import SchemaChecker
from tether.acp.updates import Translator, replayed
from tether.acp.wire import Connection
from tether.host import NoBuffers
from tether.tools import build_tools
from tether.workspace.folders import Workspace
from tether_protocol import parse_event


def _event(kind: str, seq: int, **fields: Any) -> Any:
    return parse_event({"kind": kind, "runId": "r-1", "seq": seq, **fields})


def _checked(updates: list[dict[str, Any]]) -> None:
    checker = SchemaChecker()
    for update in updates:
        message = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s-1", "update": update},
        }
        assert checker.check("to_client", message) == [], update


def test_a_plan_event_is_a_whole_plan_update(tmp_path: Path) -> None:
    translator = Translator(Workspace([tmp_path], NoBuffers()), build_tools())
    entries = [
        {"content": "read the code", "status": "completed", "priority": "high"},
        {"content": "fix the bug", "status": "in_progress"},
    ]
    [update] = list(translator.updates(_event("plan", 1, entries=entries)))
    assert update == {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "read the code", "priority": "high", "status": "completed"},
            {"content": "fix the bug", "priority": "medium", "status": "in_progress"},
        ],
    }
    _checked([update])


def test_usage_is_the_last_calls_context_in_integers_with_the_cost(tmp_path: Path) -> None:
    translator = Translator(Workspace([tmp_path], NoBuffers()), build_tools(), context_size=200_000)
    first = list(translator.updates(_event("usage", 1, inputTokens=100, outputTokens=20)))
    second = list(
        translator.updates(_event("usage", 2, inputTokens=250, outputTokens=30, costUsd=0.01))
    )
    assert first == [{"sessionUpdate": "usage_update", "used": 120, "size": 200_000}]
    assert second == [
        {
            "sessionUpdate": "usage_update",
            "used": 160,
            "size": 200_000,
            "cost": {"amount": 0.01, "currency": "USD"},
        }
    ]
    _checked(first + second)


def test_a_replay_has_the_prompt_the_answers_and_each_calls_final_status(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("x\n")
    events = [
        _event("run-started", 1, prompt="fix it", sessionId="s-1"),
        _event("text-delta", 2, text="Let me "),
        _event("assistant", 3, text="Let me look."),
        _event("tool-call", 4, callId="c1", tool="read_file", arguments={"path": "a.py"}),
        _event("approval", 5, callId="c1", decision="auto"),
        _event("tool-result", 6, callId="c1", tool="read_file", ok=True, output="1\tx"),
        _event("usage", 7, inputTokens=1, outputTokens=1),
    ]
    updates = replayed(events, Translator(Workspace([tmp_path], NoBuffers()), build_tools()))
    assert [u["sessionUpdate"] for u in updates] == [
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
    ]
    assert updates[1]["content"]["text"] == "Let me look."
    assert updates[2]["locations"] == [{"path": str(tmp_path.resolve() / "a.py")}]
    assert updates[3]["status"] == "completed"
    _checked(updates)


async def test_malformed_input_is_answered_and_the_connection_goes_on() -> None:
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()

    async def echo(params: Any) -> Any:
        return params

    stdin = os.fdopen(read_in, "rb", buffering=0)
    stdout = os.fdopen(write_out, "wb")
    connection = Connection(stdin, stdout, {"echo": echo}, {})
    lines = [
        b"not json",
        b"[1, 2]",
        b'{"jsonrpc": "2.0", "id": 1, "method": "nope"}',
        b'{"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"a": 1}}',
    ]
    os.write(write_in, b"\n".join(lines) + b"\n")
    os.close(write_in)

    async def close() -> None:
        return None

    await asyncio.wait_for(connection.serve(close), 10)
    stdout.close()
    with os.fdopen(read_out, "rb") as out:
        answers = [json.loads(line) for line in out.read().splitlines()]
    codes = [a.get("error", {}).get("code") for a in answers]
    assert codes == [-32700, -32600, -32601, None]
    assert answers[-1] == {"jsonrpc": "2.0", "id": 2, "result": {"a": 1}}
