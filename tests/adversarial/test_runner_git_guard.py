"""Built-in git's guard: every setting a repository may spell that runs a program is
either neutralised for the whole command or refused before it runs (issue 24 break 2a),
over generated spellings; and the neutralised settings reach git."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.sandbox import Backend
from tether.tools.git_guard import (
    NEUTRALISED,
    git_environment,
    refused_settings,
    tolerated,
)
from tether.tools.shell import command_environment, run_command

from ..sandboxes import BACKENDS, sandbox_in

PROGRAM_KEYS = [
    "diff.external",
    "diff.{d}.textconv",
    "diff.{d}.command",
    "filter.{d}.clean",
    "filter.{d}.smudge",
    "filter.{d}.process",
    "merge.{d}.driver",
    "core.worktree",
    "core.gitProxy",
    "core.alternateRefsCommand",
    "remote.{d}.uploadpack",
    "remote.{d}.receivepack",
    "remote.{d}.vcs",
    "credential.{d}.helper",
    "gpg.ssh.defaultKeyCommand",
    "uploadpack.packObjectsHook",
    "lfs.customtransfer.{d}.path",
    "pager.status",
    "mailmap.file",
]
"""Settings that run a program (or read outside), as a repository could spell them."""


def respell(key: str, flips: list[bool]) -> str:
    """``key`` with letters of its section and name in another case (git ignores it)."""
    section, _, rest = key.partition(".")
    sub, dot, name = rest.rpartition(".")
    if not dot:
        sub, name = "", rest
    padded = flips + [False] * len(section + name)
    spell = "".join(c.upper() if f else c for c, f in zip(section + name, padded, strict=False))
    return f"{spell[: len(section)]}.{sub}{dot}{spell[len(section) :]}"


def canonical(key: str) -> str:
    section, _, rest = key.partition(".")
    sub, dot, name = rest.rpartition(".")
    return f"{section.lower()}.{sub}.{name.lower()}" if dot else key.lower()


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    template=st.sampled_from(PROGRAM_KEYS),
    driver=st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,8}", fullmatch=True),
    flips=st.lists(st.booleans(), max_size=30),
    neutralised=st.sampled_from([k for k, _ in NEUTRALISED]),
)
def test_a_program_running_setting_is_never_run_with(
    tmp_path_factory: pytest.TempPathFactory,
    template: str,
    driver: str,
    flips: list[bool],
    neutralised: str,
) -> None:
    repo = tmp_path_factory.mktemp("repo")
    git(repo, "init", "-q")
    key = respell(template.format(d=driver), flips)
    git(repo, "config", key, "/dev/null")
    git(repo, "config", respell(neutralised, flips), "/dev/null")
    base = command_environment()
    refused = refused_settings(repo, {**base, **git_environment(base)})
    # git lists a setting's section and name in lower case, its subsection as written.
    assert refused == [canonical(template.format(d=driver))]


def test_the_standard_repository_settings_and_lfs_are_tolerated(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "remote", "add", "origin", "https://example.invalid/x.git")
    git(tmp_path, "config", "user.name", "me")
    git(tmp_path, "config", "core.hooksPath", ".husky/_")  # neutralised, not refused
    git(tmp_path, "config", "filter.lfs.process", "git-lfs filter-process")
    base = command_environment()
    assert refused_settings(tmp_path, {**base, **git_environment(base)}) == []
    assert not tolerated("filter.lfs.process", "sh -c evil")


def test_the_neutralised_settings_reach_git_on_top_of_the_users_own(tmp_path: Path) -> None:
    base = {**command_environment(), "GIT_CONFIG_COUNT": "1"}
    base.update(GIT_CONFIG_KEY_0="user.name", GIT_CONFIG_VALUE_0="mine")
    env = {**base, **git_environment(base)}
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "core.fsmonitor", "/bin/true")
    shown = subprocess.run(
        ["git", "config", "--get-all", "core.fsmonitor"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.split()
    assert shown[-1] == "false"  # the last value wins: the neutralised one
    name = subprocess.run(
        ["git", "config", "user.name"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert name.stdout.strip() == "mine"


@pytest.mark.parametrize("backend", [*BACKENDS, None], ids=[*BACKENDS, "none"])
async def test_the_neutralised_settings_fit_the_environment_the_command_gets(
    tmp_path: Path, backend: Backend | None
) -> None:
    # The user's own GIT_CONFIG_COUNT stays out of the sandbox: the guard's numbering must
    # follow the environment the command really gets, or git refuses to start.
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    env = {**command_environment(), "GIT_CONFIG_COUNT": "1"}
    env.update(GIT_CONFIG_KEY_0="color.ui", GIT_CONFIG_VALUE_0="never")
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="tether-adv-home-") as home:
        box = None if backend is None else sandbox_in(backend, [ws], Path(home), Path(home) / "s")
        out = await run_command(
            "git config --get core.fsmonitor && git status --short",
            ws,
            60.0,
            env=env,
            sandbox=box,
            extra_env=git_environment,
        )
    assert out.exit_code == 0 and out.output.startswith("false\n"), out.output
