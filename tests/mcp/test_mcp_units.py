"""The pieces of MCP support that need no server: names, rules naming MCP tools, the
project's ``.mcp.json``, the environment and result conversion."""

from __future__ import annotations

import json
import os
from pathlib import Path

import mcp_types as types
import pytest

from tether.config.layers import ConfigError
from tether.config.project import read_mcp_file
from tether.mcp.names import MAX_NAME, tool_name, unique_names
from tether.mcp.results import as_tool_result
from tether.mcp.stdio import expand, neutral_folder, server_environment
from tether.policy.gate import ApprovalPolicy
from tether.policy.match import InvalidPattern, check_pattern, judge
from tether.policy.propose import suggest_patterns
from tether.policy.store import RuleStore
from tether_protocol import CommandPreview, McpServerSettings, Rule

PREVIEW = CommandPreview(command='notes › lookup {"key": "k"}', cwd="MCP server 'notes'")


def test_names_are_safe_short_and_distinct() -> None:
    assert tool_name("notes", "lookup") == "mcp__notes__lookup"
    assert tool_name("my.server", "get item/x") == "mcp__my_server__get_item_x"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == MAX_NAME and long.startswith("mcp__sss")
    assert tool_name("s" * 40, "t" * 40 + "x") != long
    taken: set[str] = set()
    named = unique_names("a", ["x.y", "x_y", "x_y"], taken)
    assert len(set(named.values())) == 2 and all(len(n) <= MAX_NAME for n in named.values())


def rule(tool: str, decision: str = "allow", pattern: str = "*") -> Rule:
    return Rule.model_validate({"tool": tool, "pattern": pattern, "decision": decision})


def test_rules_name_one_tool_or_a_servers_every_tool() -> None:
    tool = "mcp__notes__lookup"
    assert judge(tool, PREVIEW, [], []).outcome == "none"
    assert judge(tool, PREVIEW, [rule(tool)], []).outcome == "allow"
    assert judge(tool, PREVIEW, [rule("mcp__notes__*")], []).outcome == "allow"
    assert judge(tool, PREVIEW, [rule("mcp__other__*")], []).outcome == "none"
    assert judge(tool, PREVIEW, [rule("mcp__note*")], []).outcome == "none"  # not a server
    assert judge("mcp__notes2__lookup", PREVIEW, [rule("mcp__notes__*")], []).outcome == "none"
    both = [rule("mcp__notes__*"), rule(tool, "deny")]
    assert judge(tool, PREVIEW, both, []).outcome == "deny"
    assert judge(tool, PREVIEW, [rule(tool), rule(tool, "ask")], []).outcome == "ask"
    assert judge(tool, PREVIEW, [rule(tool, pattern="lookup *")], []).outcome == "none"
    assert suggest_patterns(tool, PREVIEW, []) == ["*"]
    check_pattern(tool, "*")
    check_pattern("mcp__notes__*", "*")
    with pytest.raises(InvalidPattern):
        check_pattern(tool, "key=*")
    with pytest.raises(InvalidPattern):
        check_pattern("notes_lookup", "*")


def test_auto_approve_names_mcp_tools() -> None:
    policy = ApprovalPolicy()
    policy.configure(["mcp__notes__*", "mcp__docs__search"])
    assert policy.covers("mcp__notes__lookup", PREVIEW)
    assert policy.covers("mcp__docs__search", PREVIEW)
    assert not policy.covers("mcp__docs__delete", PREVIEW)
    assert not policy.covers("mcp__notes2__x", PREVIEW)
    policy.configure(["mcp__*"])  # no server named: not a wildcard over every server
    assert not policy.covers("mcp__notes__lookup", PREVIEW)


def test_an_mcp_rule_is_stored_and_listed(tmp_path: Path) -> None:
    store = RuleStore(tmp_path / "rules.toml")
    stored = store.add(rule("mcp__notes__*").model_copy(update={"scope": "user"}), [tmp_path])
    assert stored.tool == "mcp__notes__*"
    rules = store.rule_set([tmp_path]).rules
    assert judge("mcp__notes__x", PREVIEW, rules, [tmp_path]).outcome == "allow"


def test_a_trusted_mcp_json_is_read_whole_and_checked(tmp_path: Path) -> None:
    servers = {"notes": {"command": "notes", "args": ["-v"], "env": {"A": "1"}}}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    read = read_mcp_file(tmp_path, [tmp_path.resolve()])
    assert read.settings.mcp_servers is not None
    assert read.settings.mcp_servers["notes"].args == ["-v"] and read.ignored == ()
    untrusted = read_mcp_file(tmp_path, [])
    assert untrusted.settings.mcp_servers is None and untrusted.ignored == ("notes",)
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"x": {"type": "sse", "url": "u"}}}')
    with pytest.raises(ConfigError, match=r"\.mcp\.json"):
        read_mcp_file(tmp_path, [tmp_path.resolve()])
    (tmp_path / ".mcp.json").write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        read_mcp_file(tmp_path, [tmp_path.resolve()])
    assert read_mcp_file(tmp_path, []).ignored == ("(unreadable)",)


def test_a_server_needs_one_transport() -> None:
    for bad in ({}, {"command": "x", "url": "http://h/mcp"}, {"url": "ftp://h"}):
        with pytest.raises(ValueError):
            McpServerSettings.model_validate(bad)


def test_the_environment_is_allow_listed_plus_the_configured() -> None:
    environ = {"PATH": "/bin", "HOME": "/h", "OPENAI_API_KEY": "sk", "LC_ALL": "C", "T": "v"}
    env = server_environment(environ, {"TOKEN": "${T}-${MISSING}", "PLAIN": "p"}, None)
    assert env == {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "TOKEN": "v-", "PLAIN": "p"}
    assert expand("a ${T} ${T", environ) == "a v ${T"


def test_path_loses_the_entries_a_workspace_can_fill(tmp_path: Path) -> None:
    workspace = tmp_path / "clone"
    (workspace / ".venv" / "bin").mkdir(parents=True)
    path = os.pathsep.join(
        ["node_modules/.bin", "", ".", str(workspace / ".venv" / "bin"), "/usr/bin", "/bin"]
    )
    env = server_environment({"PATH": path}, {}, workspace)
    assert env["PATH"] == os.pathsep.join(["/usr/bin", "/bin"])
    configured = server_environment({}, {"PATH": f"bin:{workspace}:/opt/x"}, workspace)
    assert configured["PATH"] == "/opt/x"  # the same for a PATH the config sets


def test_a_server_runs_in_its_cwd_else_the_home_folder_never_the_workspace(
    tmp_path: Path,
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "clone"
    environ = {"HOME": str(home)}
    assert neutral_folder(None, environ, workspace) == home
    assert neutral_folder("/srv/notes", environ, workspace) == Path("/srv/notes")
    assert neutral_folder("~/notes", environ, workspace) == home / "notes"
    assert neutral_folder("notes", environ, workspace) == home / "notes"  # not the workspace's
    assert neutral_folder(None, environ, home) == Path("/")  # the workspace is the home
    assert neutral_folder(None, environ, tmp_path) == Path("/")  # or holds it


def test_results_as_the_model_reads_them() -> None:
    text = types.TextContent(type="text", text="hello")
    result = types.CallToolResult(content=[text], structured_content={"result": "hello"})
    assert as_tool_result("s", "t", result).output == "hello"
    both = types.CallToolResult(content=[text], structured_content={"n": 1})
    assert as_tool_result("s", "t", both).output == 'hello\n{\n "n": 1\n}'
    failed = as_tool_result("s", "t", types.CallToolResult(content=[text], is_error=True))
    assert not failed.ok and failed.output == "MCP server 's': t failed: hello"
    empty = as_tool_result("s", "t", types.CallToolResult(content=[]))
    assert empty.ok and empty.output == "(no output)"
    huge = types.TextContent(type="text", text="x" * 100_000)
    assert len(as_tool_result("s", "t", types.CallToolResult(content=[huge])).output) < 31_000


def test_the_shown_name_keeps_the_servers_own_spelling_and_escapes_control_characters() -> None:
    from tether.mcp.names import MAX_SHOWN, shown_name, tool_name

    assert shown_name("my.notes", "look up") == "my.notes · look up"
    assert tool_name("my.notes", "look up") == "mcp__my_notes__look_up"
    assert shown_name("a\x1b[31m", "b\nc") == "a\\x1b[31m · b\\nc"
    assert len(shown_name("s" * 500, "t")) == MAX_SHOWN
