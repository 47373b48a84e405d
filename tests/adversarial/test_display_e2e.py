"""Strings from a hostile MCP server (its tools' names and descriptions), from an ACP client
(the server's name) and from the model (arguments, commands, text) through the real fronts:
``tether acp``, ``tether serve`` with a Tether plugin and with a plain LSP client, and
``tether run`` in a terminal. Whatever they hold — escape sequences, carriage returns, line
separators, bidi overrides and isolates, zero-width characters — no title, command, name or
transcript line shown to the person reaches them raw.

Each test starts one process and feeds a batch of generated strings through its session
(a hostile server listing one tool per string, the model calling each)."""

from __future__ import annotations

import json
import re
import shlex
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.acp.recorder import NOTHING, RecordingClient
from tests.acp.tether import call, tether_acp, turns
from tests.e2e.conftest import serving
from tests.e2e.test_cli_terminal import Terminal, assert_nothing_left, scripted
from tests.e2e.test_plain_lsp import VIM_LSP, command, open_as
from tether.mcp.names import unique_names

from .hostile_text import HOSTILE, raw_unsafe

pytestmark = pytest.mark.slow

HOSTILE_MCP = Path(__file__).with_name("hostile_mcp.py")
BATCH = st.lists(HOSTILE, min_size=8, max_size=8)
ONCE = settings(
    max_examples=2,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # each example is a process: no shrinking
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ISSUE_NAME = "lookup\x1b[2K\rMCP notes: lookup (read-only)"
"""The tool name of the issue: the terminal's question read as another tool's."""


def hostile_tools(strings: list[str]) -> list[dict[str, Any]]:
    """One tool per string, named and described with it."""
    return [
        {
            "name": f"t{index}{text}",
            "description": text,
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "answer": f"answer {text}",
        }
        for index, text in enumerate([ISSUE_NAME, *strings])
    ]


def server_file(folder: Path, tools: list[dict[str, Any]]) -> Path:
    path = folder / "hostile.json"
    path.write_text(json.dumps({"tools": tools, "instructions": "hello"}))
    return path


def calls_of(server: str, tools: list[dict[str, Any]], strings: list[str]) -> list[dict[str, Any]]:
    """The model calling each tool of ``server`` with a hostile argument."""
    names = unique_names(server, [t["name"] for t in tools], set())
    return [
        call(names[tool["name"]], text=strings[index % len(strings)])
        for index, tool in enumerate(tools)
    ]


def strings_in(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every string of a JSON value (keys too), with the key it is under."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for name, item in value.items():
            yield "key", name
            yield from strings_in(item, name)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item, key)


ONE_LINE = {"title", "name", "label"}
"""Fields shown as one line: a line break in them is no line break of theirs to show."""


def assert_shown_clean(where: str, value: Any) -> None:
    for key, text in strings_in(value):
        bad = raw_unsafe(text, lines=key not in ONE_LINE)
        assert bad == [], f"{where}: {key}={text!r} shows {bad!r} raw"


@ONCE
@given(strings=BATCH)
async def test_tether_acp_shows_no_raw_control_or_bidi_character(strings: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        root = tmp / "work"
        root.mkdir()
        server_name = f"notes{strings[0]}"
        tools = hostile_tools(strings)
        script = turns(
            {"text": strings[1], "tool_calls": calls_of(server_name, tools, strings)},
            {"text": strings[2]},
        )
        mcp = {
            "name": server_name,
            "command": sys.executable,
            "args": [str(HOSTILE_MCP)],
            "env": [{"name": "HOSTILE_MCP", "value": str(server_file(tmp, tools))}],
        }
        client = RecordingClient(capabilities=NOTHING, permission="reject_once")
        async with tether_acp(root, tmp, script, client) as agent:
            session = await agent.new_session(root, mcp_servers=[mcp])
            assert (await agent.prompt(session, "go"))["stopReason"] == "end_turn"
        assert len(client.permissions) == len(tools)  # every call was asked
        for asked in client.permissions:
            assert_shown_clean("session/request_permission", asked.tool_call)
            assert_shown_clean("session/request_permission options", asked.options)
        for message in client.messages:
            if message.direction == "to_client":
                assert_shown_clean(str(message.payload.get("method")), message.payload)
        first = client.permissions[0].tool_call["title"]
        assert "\\x1b[2K\\rMCP notes" in first, first  # shown, escaped: not hidden


def user_config(config_home: Path, tools_file: Path) -> None:
    folder = config_home / "tether"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(
        "[mcpServers.notes]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(HOSTILE_MCP))}]\n"
        f"env = {{ HOSTILE_MCP = {json.dumps(str(tools_file))} }}\n"
        "startupTimeoutSeconds = 90\n"
    )


@ONCE
@given(strings=BATCH)
async def test_tether_serve_asks_a_plugin_with_no_raw_control_or_bidi_character(
    strings: list[str],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        root = tmp / "ws"
        root.mkdir()
        tools = hostile_tools(strings)
        user_config(tmp / "config", server_file(tmp, tools))
        bash = [call("bash", command=f"touch x{i}{text}") for i, text in enumerate(strings)]
        script = {"turns": [{"toolCalls": [*calls_of("notes", tools, strings), *bash]}]}
        async with serving(tmp / "state") as editor:
            editor.approve = lambda params: {"decision": "deny"}
            await editor.open_session(root, script=script)
            result = await editor.run(prompt="go", runId="r1")
            assert result["outcome"] == "done", result
        assert len(editor.approvals) == len(tools) + len(strings)
        for params in editor.approvals:
            shown = {
                "title": params["title"],
                "preview": {k: v for k, v in params["preview"].items() if k != "kind"},
                "patterns": params.get("suggestedPatterns") or [],
            }
            assert_shown_clean("agent/approve", shown)
        for event in editor.events:
            label = getattr(event, "label", None)
            assert raw_unsafe(label or "") == [], f"{event.kind} label {label!r}"


@ONCE
@given(strings=BATCH)
async def test_tether_serve_asks_a_plain_lsp_client_with_no_raw_control_or_bidi_character(
    strings: list[str],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        root = tmp / "ws"
        root.mkdir()
        tools = hostile_tools(strings)
        user_config(tmp / "config", server_file(tmp, tools))
        bash = [call("bash", command=f"touch x{i}{text}") for i, text in enumerate(strings)]
        script = {
            "turns": [
                {"toolCalls": [*calls_of("notes", tools, strings), *bash]},
                {"text": strings[0]},
            ]
        }
        async with serving(tmp / "state") as editor:
            editor.message_choice = "Deny"
            await open_as(editor, root, VIM_LSP, {"provider": "scripted", "script": script})
            assert (await command(editor, {"prompt": "go"}))["outcome"] == "done"
            logged = [m.message for m in editor.client.log_messages]
            said = [m.message for m in editor.client.messages]
        assert len(editor.message_requests) == len(tools) + len(strings)
        for request in editor.message_requests:
            assert_shown_clean("window/showMessageRequest", {"message": request.message})
        for line in logged:
            assert raw_unsafe(line, lines=True) == [], f"window/logMessage {line!r}"
        for line in said:
            assert raw_unsafe(line, lines=True) == [], f"window/showMessage {line!r}"


OWN = re.compile(r"\x1b\[[0-9;]*m|\r\x1b\[K|\r(?:\x1b\[\d+A)?\x1b\[J|\r(?=\n)")
"""The CLI's own colours and cursor moves, and the terminal's own ``\\r\\n``."""


@ONCE
@given(strings=BATCH)
def test_tether_run_in_a_terminal_shows_no_raw_control_or_bidi_character(
    strings: list[str],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        tools = hostile_tools(strings)
        user_config(tmp / ".config", server_file(tmp, tools))
        bash = [
            call("bash", command=f"printf {i} {shlex.quote(text)} >/dev/null")
            for i, text in enumerate(strings)
        ]
        script = {
            "turns": [
                {"text": strings[0], "toolCalls": [*calls_of("notes", tools, strings), *bash]},
                {"text": strings[1]},
            ]
        }
        env = scripted(tmp, script)
        (tmp / "ws").mkdir()
        term = Terminal(["run", "--yes", "go"], env, tmp / "ws")
        status = term.wait(timeout=120)
        assert status == 0, term.text
        assert_nothing_left(env)
        shown = OWN.sub("", term.text)
        bad = raw_unsafe(shown, lines=True)
        assert bad == [], f"{bad!r} raw in:\n{shown!r}"
        assert "\\x1b[2K\\rMCP notes" in shown, shown
