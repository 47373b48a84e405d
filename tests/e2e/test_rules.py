"""Approval rules end to end through a real ``tether serve`` (issue 17): project and user
rules survive a restart, ``agent/rules/remove`` revokes them, a cloned project's allows
widen nothing, a deny wins, the sensitive floor still asks, the event names the rule."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from .calls import bash, one_call_a_turn
from .conftest import Editor, serving


@asynccontextmanager
async def served(tmp_path: Path, workspace: Path, *calls: dict[str, Any]) -> AsyncIterator[Editor]:
    """A server on ``workspace`` (the user config under ``tmp_path``) whose model makes
    ``calls``, one per turn; stopped at the end."""
    async with serving(tmp_path / "state") as editor:
        await editor.open_session(workspace, script=one_call_a_turn(*calls))
        yield editor


async def request(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    return await editor.client.protocol.send_request_async(method, params)


TOUCH_RULE = {"tool": "bash", "pattern": "touch made *", "decision": "allow"}


@pytest.mark.parametrize("scope", ["project", "user"])
async def test_a_rule_added_survives_a_restart_and_remove_revokes_it(
    tmp_path: Path, workspace: Path, scope: str
) -> None:
    rule = {**TOUCH_RULE, "scope": scope}
    async with served(tmp_path, workspace) as editor:
        added = await request(editor, "agent/rules/add", {"rule": rule})
        assert added == {"rule": rule}
    async with served(tmp_path, workspace, bash("touch made one")) as editor:
        editor.approve = lambda params: {"decision": "deny"}
        listed = await request(editor, "agent/rules/list", {})
        assert rule in listed["rules"]
        await editor.run(prompt="go", runId="r1")
        [event] = editor.approval_events("r1")
        assert event.decision == "auto" and editor.approvals == []
        assert event.rules is not None and event.rules[0].model_dump() == rule
        assert (workspace / "made").exists() and (workspace / "one").exists()
        assert await request(editor, "agent/rules/remove", {"rule": rule}) == {"removed": True}
    async with served(tmp_path, workspace, bash("touch made two")) as editor:
        editor.approve = lambda params: {"decision": "deny"}
        await editor.run(prompt="go", runId="r2")
        assert [p["preview"]["command"] for p in editor.approvals] == ["touch made two"]
        assert not (workspace / "two").exists()


async def test_a_cloned_projects_allow_rules_widen_nothing_and_a_deny_wins(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "rules.toml").write_text(
        '[[rules]]\ntool = "bash"\npattern = "touch *"\ndecision = "allow"\n\n'
        '[[rules]]\ntool = "write_file"\npattern = "**"\ndecision = "allow"\n\n'
        '[[rules]]\ntool = "bash"\npattern = "rm *"\ndecision = "deny"\n'
    )
    (workspace / "keep.txt").write_text("precious\n")
    write = {"name": "write_file", "arguments": {"path": "w.txt", "content": "w\n"}}
    async with served(
        tmp_path, workspace, bash("touch cloned"), write, bash("ls && rm keep.txt")
    ) as editor:
        await request(
            editor, "agent/rules/add", {"rule": {**TOUCH_RULE, "pattern": "ls *", "scope": "user"}}
        )
        editor.approve = lambda params: {"decision": "deny"}
        await editor.run(prompt="go", runId="r1")
        decisions = [e.decision for e in editor.approval_events("r1")]
    asked = [p["tool"] for p in editor.approvals]
    assert asked == ["bash", "write_file"]  # the clone's allows did not apply
    assert decisions == ["deny", "deny", "denied-by-default"]  # its deny did, unasked
    assert (workspace / "keep.txt").read_text() == "precious\n"
    assert not (workspace / "cloned").exists() and not (workspace / "w.txt").exists()


async def test_the_sensitive_floor_asks_whatever_a_rule_allows(
    tmp_path: Path, workspace: Path
) -> None:
    write = {"name": "write_file", "arguments": {"path": ".env", "content": "TOKEN=x\n"}}
    async with served(tmp_path, workspace, write) as editor:
        rule = {"tool": "write_file", "pattern": "**", "decision": "allow", "scope": "user"}
        await request(editor, "agent/rules/add", {"rule": rule})
        editor.approve = lambda params: {"decision": "deny"}
        await editor.run(prompt="go", runId="r1")
    asked = [p["title"] for p in editor.approvals]
    assert len(asked) == 1 and " — " in asked[0]  # asked, and told why
    assert not (workspace / ".env").exists()


async def test_each_question_offers_the_rules_the_server_would_store(
    tmp_path: Path, workspace: Path
) -> None:
    edit = {"name": "write_file", "arguments": {"path": "src/new.py", "content": "x = 1\n"}}
    secret = {"name": "write_file", "arguments": {"path": ".env", "content": "TOKEN=x\n"}}
    calls = (bash("pytest -q tests"), bash("touch a && touch b"), edit, secret)
    async with served(tmp_path, workspace, *calls) as editor:
        editor.approve = lambda params: {"decision": "deny"}
        await editor.run(prompt="go", runId="r1")
    offered = [p.get("suggestedPatterns") for p in editor.approvals]
    # Narrowest first; a test runner only its exact command (issue 24: `pytest *` would let
    # `--basetemp` empty any folder); a pipeline no one rule covers offers none; a sensitive
    # path (never remembered) offers none.
    assert offered == [["pytest -q tests"], None, ["src/new.py", "src/*.py"], None]


async def test_a_picked_rule_from_an_answer_is_stored_in_its_scope(
    tmp_path: Path, workspace: Path
) -> None:
    async with served(tmp_path, workspace, bash("touch p1"), bash("touch p2")) as editor:
        editor.approve = lambda params: {
            "decision": "allow-always",
            "rule": {"pattern": "touch *", "scope": "user"},
        }
        await editor.run(prompt="go", runId="r1")
        assert [e.decision for e in editor.approval_events("r1")] == ["allow-always", "auto"]
    user_file = tmp_path / "config" / "tether" / "rules.toml"
    assert 'pattern = "touch *"' in user_file.read_text()


async def test_bad_rules_requests_get_clear_errors(tmp_path: Path, workspace: Path) -> None:
    async with served(tmp_path, workspace) as editor:
        bad = {"tool": "bash", "pattern": "ls | rm x", "decision": "allow", "scope": "user"}
        with pytest.raises(JsonRpcException, match="one simple command"):
            await request(editor, "agent/rules/add", {"rule": bad})
        builtin = {"tool": "bash", "pattern": "ls *", "decision": "allow", "scope": "builtin"}
        with pytest.raises(JsonRpcException, match="built-in"):
            await request(editor, "agent/rules/add", {"rule": builtin})
        listed = await request(editor, "agent/rules/list", {})
        assert listed["readOnlyDefaults"] is True and builtin in listed["rules"]
