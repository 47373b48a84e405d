"""The schema checker: it covers every ACP v1 method and refuses what the schema refuses."""

from __future__ import annotations

import json
from typing import Any

from .validation import (
    AGENT_TO_CLIENT,
    CLIENT_TO_AGENT,
    EITHER_WAY,
    META_PATH,
    SchemaChecker,
    load_schema,
    problems,
)

SESSION = "s-1"


def call(method: str, params: Any, request_id: int | None = None) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "method": method, "params": params}
    return message if request_id is None else {**message, "id": request_id}


def update(body: dict[str, Any]) -> dict[str, Any]:
    return call("session/update", {"sessionId": SESSION, "update": body})


def test_the_tables_cover_every_method_of_the_vendored_schema() -> None:
    meta = json.loads(META_PATH.read_text())
    assert set(meta["agentMethods"].values()) == set(CLIENT_TO_AGENT)
    assert set(meta["clientMethods"].values()) == set(AGENT_TO_CLIENT)
    assert set(meta["protocolMethods"].values()) == set(EITHER_WAY)
    defined = load_schema()["$defs"]
    for params, result in [
        *CLIENT_TO_AGENT.values(),
        *AGENT_TO_CLIENT.values(),
        *EITHER_WAY.values(),
    ]:
        assert params in defined
        assert result is None or result in defined


def test_a_valid_turn_has_no_violation() -> None:
    checker = SchemaChecker()
    turn = [
        ("to_agent", call("initialize", {"protocolVersion": 1, "clientCapabilities": {}}, 0)),
        ("to_client", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}),
        ("to_agent", call("session/new", {"cwd": "/w", "mcpServers": []}, 1)),
        ("to_client", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": SESSION}}),
        (
            "to_agent",
            call(
                "session/prompt",
                {"sessionId": SESSION, "prompt": [{"type": "text", "text": "hi"}]},
                2,
            ),
        ),
        (
            "to_client",
            update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "hello"},
                }
            ),
        ),
        ("to_client", update({"sessionUpdate": "usage_update", "used": 120, "size": 200000})),
        ("to_client", {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}),
    ]
    for direction, message in turn:
        assert checker.check(direction, message) == [], message  # type: ignore[arg-type]
    assert checker.unanswered_early() == []


def test_usage_update_with_used_null_is_refused_naming_the_field() -> None:
    """claude-agent-acp 0.23.1 sends this; the SDK silently drops it."""
    [violation] = SchemaChecker().check(
        "to_client", update({"sessionUpdate": "usage_update", "used": None, "size": 200000})
    )
    assert violation.where == "params"
    assert "update.used" in violation.problem and "integer" in violation.problem
    assert str(violation).startswith("agent sent session/update with invalid params")


def test_a_bad_tool_kind_and_a_missing_title_are_refused() -> None:
    checker = SchemaChecker()
    bad_kind = update(
        {"sessionUpdate": "tool_call", "toolCallId": "1", "title": "x", "kind": "shell"}
    )
    no_title = update({"sessionUpdate": "tool_call", "toolCallId": "1"})
    assert "update.kind" in checker.check("to_client", bad_kind)[0].problem
    assert "'title' is a required property" in checker.check("to_client", no_title)[0].problem


def test_answers_are_checked_against_the_method_they_answer() -> None:
    checker = SchemaChecker()
    checker.check("to_agent", call("session/prompt", {"sessionId": SESSION, "prompt": []}, 7))
    [violation] = checker.check(
        "to_client", {"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "done"}}
    )
    assert violation.method == "session/prompt" and violation.where == "result"
    checker.check(
        "to_client",
        call("fs/write_text_file", {"sessionId": SESSION, "path": "/a", "content": ""}, 0),
    )
    [null_result] = checker.check("to_agent", {"jsonrpc": "2.0", "id": 0, "result": None})
    assert null_result.method == "fs/write_text_file"  # the schema wants an object, {} at least


def test_an_error_answer_is_checked_against_error() -> None:
    checker = SchemaChecker()
    checker.check("to_agent", call("session/new", {"cwd": "rel", "mcpServers": []}, 3))
    ok = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "cwd must be absolute"}}
    assert checker.check("to_client", ok) == []
    checker.check("to_agent", call("session/new", {"cwd": "rel", "mcpServers": []}, 4))
    bad = {"jsonrpc": "2.0", "id": 4, "error": {"code": "invalid"}}
    assert {v.where for v in checker.check("to_client", bad)} == {"error"}


def test_envelope_rules() -> None:
    checker = SchemaChecker()
    unknown = checker.check("to_client", call("editor/openFile", {}, 1))
    assert "not a method the client serves" in unknown[0].problem
    as_request = checker.check(
        "to_client", call("session/update", {"sessionId": SESSION, "update": {}}, 2)
    )
    assert any("is a notification" in v.problem for v in as_request)
    checker.check("to_agent", call("session/cancel", {"sessionId": SESSION}))
    both = {"jsonrpc": "2.0", "id": 9, "result": {}, "error": {"code": 1, "message": "x"}}
    assert any("exactly one of" in v.problem for v in checker.check("to_client", both))
    no_version = {"id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    assert any('"jsonrpc"' in v.problem for v in checker.check("to_agent", no_version))
    assert checker.check("to_client", call("_zed/custom", {"any": 1})) == []


def test_an_answer_read_before_its_request_is_matched_later_or_reported() -> None:
    checker = SchemaChecker()
    assert checker.check("to_client", {"jsonrpc": "2.0", "id": 5, "result": {"sessionId": 1}}) == []
    [late] = checker.check("to_agent", call("session/new", {"cwd": "/w", "mcpServers": []}, 5))
    assert late.where == "result" and "sessionId" in late.problem
    checker.check("to_client", {"jsonrpc": "2.0", "id": 6, "result": {}})
    [orphan] = checker.unanswered_early()
    assert "never requested" in orphan.problem


def test_an_exempt_message_is_not_reported_but_its_answer_is_checked() -> None:
    checker = SchemaChecker()
    assert checker.check("to_agent", call("session/new", {"cwd": 3}, 1), exempt=True) == []
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad"}}
    assert checker.check("to_client", error) == []


def test_problems_of_a_definition() -> None:
    assert problems("StopReason", "end_turn") == []
    assert problems("StopReason", "finished") != []
