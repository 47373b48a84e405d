"""The command policy end to end through a real ``tether serve`` (issue 24): no wider rule is
offered for a launcher (break 3), a deny rule sees through wrappers, quotes and git's global
options (break 4), and a built-in read-only command does not read through a link out of the
workspace (break 2b)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from .calls import bash, one_call_a_turn
from .conftest import Editor, serving


@asynccontextmanager
async def served(tmp_path: Path, workspace: Path, *calls: dict[str, Any]) -> AsyncIterator[Editor]:
    """A server on ``workspace`` whose model makes ``calls``, one per turn."""
    async with serving(tmp_path / "state") as editor:
        await editor.open_session(workspace, script=one_call_a_turn(*calls))
        yield editor


async def add_rule(editor: Editor, pattern: str, decision: str) -> None:
    rule = {"tool": "bash", "pattern": pattern, "decision": decision, "scope": "user"}
    await editor.client.protocol.send_request_async("agent/rules/add", {"rule": rule})


LAUNCHERS = (
    "uv run pytest -q",
    "poetry run pytest",
    "npm exec eslint",
    "docker run alpine true",
    "kubectl exec pod -- ls",
    "deno eval 1",
    "go run main.go",
    "python -m timeit 1",
    "git config core.pager cat",
)


async def test_a_launcher_question_offers_only_the_exact_command(
    tmp_path: Path, workspace: Path
) -> None:
    async with served(tmp_path, workspace, *(bash(c) for c in LAUNCHERS)) as editor:
        editor.approve = lambda params: {"decision": "deny"}
        await editor.run(prompt="go", runId="r1")
    offered = {p["preview"]["command"]: p.get("suggestedPatterns") for p in editor.approvals}
    assert offered == {command: [command] for command in LAUNCHERS}


WRAPPED_RM = (
    "command rm keep.txt",
    "env rm keep.txt",
    "env -i FOO=1 rm keep.txt",
    "nice -n 5 rm keep.txt",
    "timeout 5 rm keep.txt",
    "xargs rm < names.txt",
    "exec rm keep.txt",
    "time rm keep.txt",
    "nohup rm keep.txt",
    "stdbuf -o0 rm keep.txt",
    "sh -c 'rm keep.txt'",
    "bash -lc 'ls; rm keep.txt'",
    "'r''m' keep.txt",  # quotes bashlex read wrong: `'r''m'` is `rm`
    "\"\"'rm' keep.txt",
)


async def test_a_deny_rule_sees_through_every_wrapper(tmp_path: Path, workspace: Path) -> None:
    (workspace / "keep.txt").write_text("precious\n")
    (workspace / "names.txt").write_text("keep.txt\n")
    async with served(tmp_path, workspace, *(bash(c) for c in WRAPPED_RM)) as editor:
        await add_rule(editor, "rm *", "deny")
        await editor.run(prompt="go", runId="r1")  # the editor allows whatever it is asked
        decisions = editor.decisions("r1")
    assert decisions == ["denied-by-default"] * len(WRAPPED_RM)
    assert editor.approvals == []
    assert (workspace / "keep.txt").read_text() == "precious\n"


GIT_PUSHES = (
    "git -C . push",
    "git -c x.y=z push",
    "git --git-dir=.git push",
    "git --no-pager push origin",
)


async def test_a_git_deny_rule_sees_through_gits_global_options(
    tmp_path: Path, workspace: Path
) -> None:
    async with served(tmp_path, workspace, *(bash(c) for c in GIT_PUSHES)) as editor:
        await add_rule(editor, "git push *", "deny")
        await editor.run(prompt="go", runId="r1")
        decisions = editor.decisions("r1")
    assert decisions == ["denied-by-default"] * len(GIT_PUSHES)
    assert editor.approvals == []


@pytest.mark.parametrize(
    "command", ["cat notes.txt", "head -n 1 notes.txt", "grep -R TOKEN .", "grep -r TOKEN linked"]
)
async def test_a_built_in_read_does_not_follow_a_link_out_of_the_workspace(
    tmp_path: Path, workspace: Path, command: str
) -> None:
    outside = tmp_path / "home" / ".ssh"
    outside.mkdir(parents=True)
    (outside / "id_rsa").write_text("TOKEN secret key\n")
    (workspace / "notes.txt").symlink_to(outside / "id_rsa")
    (workspace / "linked").symlink_to(outside, target_is_directory=True)
    async with served(tmp_path, workspace, bash(command)) as editor:
        editor.approve = lambda params: {"decision": "deny"}
        await editor.run(prompt="go", runId="r1")
        decisions = editor.decisions("r1")
        outputs = [r.output for r in editor.tool_results("r1")]
    assert decisions == ["deny"]  # asked, not allowed by the built-in rule
    assert [p["preview"]["command"] for p in editor.approvals] == [command]
    assert not any("secret key" in (o or "") for o in outputs)


@pytest.mark.parametrize("entry", ["node_modules/.bin", ".", ""])
async def test_a_relative_path_entry_finds_no_program_of_the_workspace(
    tmp_path: Path, workspace: Path, entry: str
) -> None:
    # A PATH with a relative entry (`node_modules/.bin`, `.`, an empty one) looks programs up
    # from the folder a command runs in — the workspace: a built-in read that runs unasked
    # must not run the repository's own `git` or `ls` in place of the system's.
    marker = tmp_path / "planted-ran"
    for folder in {workspace / (entry or "."), workspace / "node_modules" / ".bin"}:
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("git", "ls"):
            planted = folder / name
            planted.write_text(f"#!/bin/sh\necho planted >> {marker}\n")
            planted.chmod(0o755)
    path = os.pathsep.join([entry, os.environ.get("PATH", os.defpath)])
    async with serving(tmp_path / "state", env={"PATH": path}) as editor:
        await editor.open_session(workspace, script=one_call_a_turn(bash("ls"), bash("git status")))
        await editor.run(prompt="go", runId="r1")
        outputs = [r.output or "" for r in editor.tool_results("r1")]
        asked = editor.approvals
    assert not marker.exists()
    assert asked == []  # still the built-in reads: allowed, run, answered
    assert "src" in outputs[0]
