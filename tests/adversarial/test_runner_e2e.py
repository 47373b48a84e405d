"""Regression tests for the one runner of issue 24, through a real ``tether serve``, on
each backend: with the sandbox on, a rule-allowed command runs inside it too, so code a
sandboxed command planted never runs outside unasked (break 6); built-in git runs no
program the repository's config names, whoever wrote that config (break 2a)."""

from __future__ import annotations

import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tether.sandbox import Backend

from ..e2e.calls import bash, one_call_a_turn
from ..e2e.conftest import Editor, serving
from ..sandboxes import BACKENDS, require_backend
from .probes import OUTSIDE


@asynccontextmanager
async def served(
    tmp_path: Path, workspace: Path, sandbox: str, rules: list[str], *calls: dict[str, Any]
) -> AsyncIterator[Editor]:
    """A server with ``sandbox`` set and ``rules`` (user allow rules), whose model makes
    ``calls``, one per turn; every question is denied."""
    with tempfile.TemporaryDirectory(dir=OUTSIDE, prefix="tether-adv-home-") as home:
        async with serving(tmp_path / "state", env={"HOME": home}) as editor:
            editor.approve = lambda params: {"decision": "deny"}
            script = one_call_a_turn(*calls)
            await editor.open_session(workspace, options={"sandbox": sandbox}, script=script)
            for pattern in rules:
                rule = {"tool": "bash", "pattern": pattern, "decision": "allow", "scope": "user"}
                await editor.client.protocol.send_request_async("agent/rules/add", {"rule": rule})
            yield editor


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    require_backend(request.param)
    chosen: Backend = request.param
    return chosen


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small project folder (not a repository)."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "README.md").write_text("# demo\n")
    return root


@pytest.fixture
def outside() -> Iterator[Path]:
    """A path outside the workspace that every backend shows read-only."""
    path = Path(OUTSIDE) / f"tether-adv-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


async def test_a_rule_allowed_command_runs_planted_code_only_inside_the_sandbox(
    tmp_path: Path, workspace: Path, backend: Backend, outside: Path
) -> None:
    plant = bash(f"echo \"open('{outside}', 'w').write('ran outside')\" > test_x.py")
    run_tests = bash("python3 -m unittest test_x")
    async with served(
        tmp_path, workspace, backend, ["python3 -m unittest *"], plant, run_tests
    ) as editor:
        await editor.run(prompt="go", runId="r1")
    assert (workspace / "test_x.py").exists()  # planted, unasked, in the sandbox
    assert not outside.exists()
    decisions = [(e.decision, e.sandbox) for e in editor.approval_events("r1")]
    # The allowed command ran in the sandbox; the walls stopped it; running it outside
    # was asked (and denied).
    assert decisions == [("auto", backend), ("auto", backend), ("deny", None)]
    [asked] = editor.approvals
    assert "outside the sandbox" in asked["title"]


def fsmonitor_plant(workspace: Path, marker: Path) -> str:
    """A sandboxed command that makes the workspace a repository whose config runs a
    program on every ``git status`` (``core.fsmonitor``)."""
    return (
        f"git init -q && printf '#!/bin/sh\\ntouch {marker}\\n' > fsmon.sh && "
        f"chmod +x fsmon.sh && git config core.fsmonitor {workspace}/fsmon.sh"
    )


async def test_built_in_git_runs_no_program_a_sandboxed_command_configured(
    tmp_path: Path, workspace: Path, backend: Backend
) -> None:
    marker = workspace / "fsmonitor-ran"  # writable inside the sandbox too
    calls = [bash(fsmonitor_plant(workspace, marker)), bash("git status"), bash("git diff")]
    async with served(tmp_path, workspace, backend, [], *calls) as editor:
        await editor.run(prompt="go", runId="r1")
    assert (workspace / ".git" / "config").exists()  # planted, unasked, in the sandbox
    assert not marker.exists()
    results = editor.tool_results("r1")
    assert results[1].ok, results[1].output  # git status itself still works
    assert editor.approvals == []


async def test_built_in_git_refuses_a_repository_config_naming_a_diff_program(
    tmp_path: Path, workspace: Path, backend: Backend
) -> None:
    marker = workspace / "textconv-ran"
    plant = (
        f"git init -q && git add README.md && printf '#!/bin/sh\\ntouch {marker}\\ncat \"$1\"\\n'"
        f" > conv.sh && chmod +x conv.sh && echo '*.md diff=evil' > .gitattributes && "
        f"git config diff.evil.textconv {workspace}/conv.sh && echo changed >> README.md"
    )
    calls = [bash(plant), bash("git diff"), bash("git log -p")]
    async with served(tmp_path, workspace, backend, [], *calls) as editor:
        await editor.run(prompt="go", runId="r1")
    assert (workspace / ".gitattributes").exists()
    assert not marker.exists()
    refused = editor.tool_results("r1")[1]
    assert not refused.ok and "diff.evil.textconv" in refused.output


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"]
        + list(args),
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=60,
    )


@pytest.fixture(params=["off", *BACKENDS])
def setting(request: pytest.FixtureRequest) -> str:
    if request.param != "off":
        require_backend(request.param)
    chosen: str = request.param
    return chosen


async def test_built_in_git_runs_no_program_a_submodule_or_a_hook_names(
    tmp_path: Path, setting: str
) -> None:
    # What an earlier command (allowed, or sandboxed under Landlock) could leave: a
    # submodule whose config runs a program, and a hook that runs when the index is written.
    inner, outer = tmp_path / "inner", tmp_path / "ws"
    inner.mkdir()
    outer.mkdir()
    git(inner, "init", "-q")
    (inner / "a.txt").write_text("a\n")
    git(inner, "add", "a.txt")
    git(inner, "commit", "-qm", "inner")
    git(outer, "init", "-q")
    git(outer, "submodule", "add", "-q", str(inner), "sub")
    git(outer, "commit", "-qm", "outer")
    ran = outer / "ran"
    program = outer / "program.sh"  # inside: visible to every backend
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> {ran}\n')
    program.chmod(0o755)
    git(outer / "sub", "config", "core.fsmonitor", str(program))
    hook = outer / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\necho hook >> {ran}\n")
    hook.chmod(0o755)
    (outer / "sub" / "a.txt").write_text("changed\n")
    (outer / ".gitmodules").touch()  # stat-dirty: status writes the index again
    calls = [bash("git status"), bash("git diff")]
    async with served(tmp_path, outer, setting, [], *calls) as editor:
        await editor.run(prompt="go", runId="r1")
    assert not ran.exists(), ran.read_text()
    assert all(r.ok for r in editor.tool_results("r1")), editor.tool_results("r1")
    assert editor.approvals == []
