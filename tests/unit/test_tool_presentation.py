"""Each tool says how a front shows its calls — a kind and a title — so no front keeps a
table of tool names (ACP's ``tool_call`` takes both as the tool gives them)."""

from __future__ import annotations

import json
from pathlib import Path

from tether.tools import build_tools

SCHEMA = Path(__file__).parents[1] / "acp" / "schema.json"


def acp_tool_kinds() -> set[str]:
    definitions = json.loads(SCHEMA.read_text())["$defs"]
    return {choice["const"] for choice in definitions["ToolKind"]["oneOf"]}


def test_every_tool_has_an_acp_kind_and_a_title_about_its_call() -> None:
    tools = build_tools()
    kinds = acp_tool_kinds()
    arguments = {"path": "src/app.py", "command": "pytest -q", "pattern": "def main"}
    presented = {name: tools.presented(name, arguments) for name in tools.names}
    assert all(kind in kinds for kind, _ in presented.values()), presented
    assert presented["read_file"] == ("read", "Read src/app.py")
    assert presented["edit_file"] == ("edit", "Edit src/app.py")
    assert presented["bash"] == ("execute", "Run pytest -q")
    assert presented["search"] == ("search", "Search 'def main' in src/app.py")
    assert presented["plan"] == ("think", "Plan")


def test_a_tool_the_registry_does_not_have_is_other_by_its_name() -> None:
    assert build_tools().presented("mcp__notes__echo", {}) == ("other", "mcp__notes__echo")


def test_a_long_command_is_one_line_cut_short() -> None:
    kind, title = build_tools().presented("bash", {"command": "echo a\n" * 100})
    assert kind == "execute" and "\n" not in title and len(title) <= len("Run ") + 200
