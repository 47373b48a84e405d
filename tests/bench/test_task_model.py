"""The benchmark's fake model plays read → write → answer by the tool results it is sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.task_model import Dialect, TaskModel, make_workspace
from tests.providers.fakes import Recorded, Sse, Status

TOOLS = {
    "chat": {"tools": [{"type": "function", "function": {"name": "read_file"}}]},
    "messages": {"tools": [{"name": "Read"}]},
    "responses": {"tools": [{"type": "function", "name": "exec_command"}]},
}


def results(wire: str, count: int) -> dict[str, Any]:
    """A request body carrying ``count`` tool results back, in the wire's own shape."""
    if wire == "chat":
        return {"messages": [{"role": "tool", "content": "x"}] * count}
    if wire == "responses":
        return {"input": [{"type": "function_call_output", "output": "x"}] * count}
    block = {"type": "tool_result", "tool_use_id": "c", "content": "x"}
    return {"messages": [{"role": "user", "content": [block]}] * count}


def reply_text(model: TaskModel, body: dict[str, Any], path: str = "/v1/x") -> str:
    reply = model.record(Recorded(path, {}, body, 0.0))
    assert isinstance(reply, Sse)
    return "".join(reply.frames)


@pytest.mark.parametrize(
    ("wire", "tools", "read", "write"),
    [
        ("chat", "tether", "read_file", "write_file"),
        ("messages", "claude", "Read", "Write"),
        ("responses", "codex", "exec_command", "apply_patch"),
    ],
)
def test_each_step_follows_from_the_tool_results(
    tmp_path: Path, wire: Any, tools: Any, read: str, write: str
) -> None:
    model = TaskModel(Dialect(wire, tools), make_workspace(tmp_path))
    offered = TOOLS[wire]
    assert read in reply_text(model, {**offered, **results(wire, 0)})
    assert write in reply_text(model, {**offered, **results(wire, 1)})
    done = reply_text(model, {**offered, **results(wire, 2)})
    assert "it says hi now." in done and write not in done
    assert len(model.arrivals) == 3 and model.side_requests == 0


def test_a_request_without_the_tools_is_a_side_request(tmp_path: Path) -> None:
    model = TaskModel(Dialect("messages", "claude"), tmp_path)
    assert '"ok"' in reply_text(model, {"messages": []})
    assert model.side_requests == 1
    counted = model.record(Recorded("/v1/messages/count_tokens", {}, {}, 0.0))
    assert isinstance(counted, Status) and counted.body == {"input_tokens": 100}


def test_bare_usage_leaves_the_cache_counts_out(tmp_path: Path) -> None:
    model = TaskModel(Dialect("messages", "claude"), tmp_path, bare_usage=True)
    reply = model.record(Recorded("/v1/messages", {}, TOOLS["messages"], 0.0))
    assert isinstance(reply, Sse)
    start = json.loads(reply.frames[0].split("data: ", 1)[1])
    assert start["message"]["usage"] == {"input_tokens": 100, "output_tokens": 1}
