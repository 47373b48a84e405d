"""The sensitive-path floor: which files are always asked, and path tricks that cannot hide one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.host import NoBuffers
from tether.workspace.folders import Workspace
from tether.workspace.sensitive import (
    OUTSIDE,
    RULES,
    reason_for_path,
    reason_for_preview,
    reason_for_relative,
)
from tether_protocol import CommandPreview, DiffPreview

DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (".git/hooks/pre-commit", "a git hook: runs code on git commands"),
        (".git/config", "git internals"),
        ("vendor/lib/.git/config", "git internals"),  # a nested repository
        (".gitmodules", "submodules"),
        (".gitattributes", "filters"),
        (".hg/hgrc", "Mercurial"),
        (".husky/pre-push", "husky"),
        (".pre-commit-config.yaml", "pre-commit"),
        (".vscode/settings.json", "editor settings"),
        (".vscode/tasks.json", "editor settings"),
        ("proj.code-workspace", "editor settings"),
        (".idea/workspace.xml", "editor settings"),
        (".nvim.lua", "Neovim"),
        (".nvimrc", "Neovim"),
        (".exrc", "Vim"),
        (".envrc", "direnv"),
        (".dir-locals.el", "Emacs"),
        (".devcontainer/devcontainer.json", "dev container"),
        (".claude/settings.json", "coding-agent"),
        (".tether/rules.toml", "Tether"),
        (".github/workflows/ci.yml", "CI pipeline"),
        (".github/actions/setup/action.yml", "CI pipeline"),
        (".gitlab-ci.yml", "CI pipeline"),
        (".circleci/config.yml", "CI pipeline"),
        ("Jenkinsfile", "CI pipeline"),
        (".env", "environment secrets"),
        (".env.local", "environment secrets"),
        ("config/prod.env", "environment secrets"),
        (".npmrc", "registry tokens"),
        (".ssh/authorized_keys", "SSH"),
        ("deploy/id_rsa", "SSH key"),
        ("deploy/id_ed25519.pub", "SSH key"),
        ("certs/server.pem", "private key"),
        ("certs/server.key", "private key"),
    ],
)
def test_sensitive_paths_and_why(path: str, reason: str) -> None:
    found = reason_for_relative(path)
    assert found is not None and reason in found, (path, found)


@pytest.mark.parametrize(
    "path",
    [
        "src/app.py",
        "README.md",
        ".github/CODEOWNERS",  # .github is not sensitive, its workflows and actions are
        ".github/ISSUE_TEMPLATE/bug.md",
        ".gitignore",  # decides what Tether lists, runs nothing
        ".editorconfig",  # whitespace settings only
        "docs/git/hooks.md",
        "environment.py",
        "src/keyboard.py",
        "tests/test_env.py",
        "envs/dev.txt",
        "my.git/config",
        ".venv/lib/site.py",
    ],
)
def test_ordinary_paths(path: str) -> None:
    assert reason_for_relative(path) is None


@pytest.mark.parametrize(
    "path",
    [
        ".GIT/hooks/pre-commit",
        ".Git/config",
        ".git./config",  # Windows drops trailing dots
        ".git /config",  # ... and trailing spaces
        ".git::$INDEX_ALLOCATION/config",  # an NTFS stream name
        ".g\u200cit/config",  # HFS+ ignores zero-width joiners
        ".VSCODE/settings.json",
        ".ENV",
        "certs/SERVER.PEM",
        ".github/WORKFLOWS/ci.yml",
        "JENKINSFILE",
    ],
)
def test_what_a_case_insensitive_file_system_sees_counts(path: str) -> None:
    assert reason_for_relative(path) is not None


@pytest.mark.parametrize(
    "given",
    [
        "./.git/../.git/config",
        "src/../.vscode/settings.json",
        "sub/../.github/workflows/ci.yml",
        "./.env",
        "src//..//.envrc",
    ],
)
def test_dot_dot_and_dot_do_not_hide_a_sensitive_path(tmp_path: Path, given: str) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "sub").mkdir()
    ws = Workspace([tmp_path], NoBuffers())
    assert reason_for_path(ws.resolve(given), ws.roots) is not None


def test_a_symlink_is_judged_by_where_it_points(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "innocent").symlink_to(tmp_path / ".git" / "hooks")
    (tmp_path / "notes.txt").symlink_to(tmp_path / ".env")
    ws = Workspace([tmp_path], NoBuffers())
    hook = reason_for_path(ws.resolve("innocent/pre-commit"), ws.roots)
    assert hook is not None and "hook" in hook
    assert reason_for_path(ws.resolve("notes.txt"), ws.roots) == "environment secrets"


def test_each_root_is_its_own_top(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    assert reason_for_path(second / ".vscode" / "settings.json", [first, second]) is not None
    assert reason_for_path(second / "src" / "x.py", [first, second]) is None


def test_what_cannot_be_placed_is_sensitive(tmp_path: Path) -> None:
    assert reason_for_path(Path("/etc/passwd"), [tmp_path]) == OUTSIDE
    preview = DiffPreview(uri="untitled:Untitled-1", diff="")
    assert reason_for_preview(preview, [tmp_path]) == OUTSIDE
    inside = DiffPreview(uri=(tmp_path / "a.py").as_uri(), diff="")
    assert reason_for_preview(inside, [tmp_path]) is None
    assert reason_for_preview(CommandPreview(command="ls", cwd=str(tmp_path)), [tmp_path]) is None


def test_every_rule_is_documented() -> None:
    text = DOCS.read_text().lower()
    missing = [rule.pattern for rule in RULES if f"`{rule.pattern}" not in text]
    assert missing == []
