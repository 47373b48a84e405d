"""Promise: a command the built-in read-only rules allow has only allow-listed options (none
that runs a program, writes, follows links while walking or never ends) and only paths that
``read_file`` would read — resolved in a real workspace, links and ``..`` followed (issue 24,
break 2b).

Commands are generated over the built-in programs × options (allowed ones, the dangerous ones
this test lists itself, unknown ones) × paths (files, a link out to a "key", a link to a
folder outside, a link inside, a loop, ``..``, absolute, ``~``, globs) in a real temporary
workspace. The test knows by construction which words are paths and which land inside.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.policy.builtin import BUILTIN_RULES
from tether.policy.builtin_options import READ_ONLY, ReadOptions
from tether.policy.match import judge
from tether_protocol import CommandPreview, Rule

DANGEROUS: dict[str, tuple[str, ...]] = {
    "ls": ("-L", "--dereference", "-RL"),
    "grep": ("-R", "--dereference-recursive", "-rR"),
    "rg": ("-L", "--follow", "--pre=cat", "--pre", "--pre-glob=*", "-z", "--search-zip"),
    "tail": ("-f", "-F", "--follow", "--retry", "--pid=1", "-fn5"),
    "wc": ("--files0-from=notes.txt", "--files0-from=-"),
    "git": (
        *("--output=x", "--out=x", "--ext-diff", "--ext", "--textconv", "--no-index"),
        *("--show-signature", "--format=%G?", "--pretty=format:%GS", "-O", "-Lx"),
    ),
}
"""Options that run programs, write, follow links or never end: never under a built-in."""
UNKNOWN = ("--frobnicate", "-%", "--colo", "--rec")
INSIDE = ("README.md", "src/a.py", "src", ".", "inner-link", "missing.txt", "src/../README.md")
OUTSIDE = (
    *("notes.txt", "linked", "linked/key", "loop", "../outside/secret.txt", "/etc/passwd"),
    *("~/.ssh/id_rsa", "$HOME/x", "*.md", "src/../../outside/secret.txt"),
)


@dataclass(frozen=True)
class Workspace:
    root: Path
    outside: Path


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """A workspace (its own git repository) with links out of it, a link in, and a loop."""
    base = tmp_path_factory.mktemp("builtins")
    outside = base / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text("TOKEN secret key\n")
    (outside / "dir" / "key").write_text("TOKEN secret key in a folder\n")
    root = base / "ws"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "README.md").write_text("# TOKEN readme\n")
    (root / "src" / "a.py").write_text("TOKEN = 1\n")
    (root / "notes.txt").symlink_to(outside / "secret.txt")
    (root / "linked").symlink_to(outside / "dir", target_is_directory=True)
    (root / "inner-link").symlink_to(root / "src" / "a.py")
    (root / "loop").symlink_to(root / "loop")
    yield Workspace(root, outside)


def options_of(spec: ReadOptions) -> list[str]:
    """Every option spelling the table allows, values filled in."""

    def value(name: str) -> str:
        return "read" if name in spec.checks else "1"  # grep -d: read, skip or recurse

    words = [f"-{c}" for c in spec.flags] + sorted(spec.long_flags)
    words += [f"-{c}{value(f'-{c}')}" for c in spec.valued]
    words += [f"{n}={value(n)}" for n in sorted(spec.long_valued)]
    words += [f"-{c}" for c in spec.optional] + sorted(spec.long_optional)
    return [w for w in words if not w.startswith(("-f", "--file", "--ignore-file", "-e"))]


@dataclass(frozen=True)
class Made:
    command: str
    paths: tuple[str, ...]
    dangerous: bool
    unknown: bool


@st.composite
def built_in_commands(draw: st.DrawFn) -> Made:
    pattern = draw(st.sampled_from([p for p in READ_ONLY if p != "pwd"]))
    words = pattern.removesuffix(" *").split()
    program = words[0]
    spec = READ_ONLY[pattern]
    dangerous = unknown = False
    paths: list[str] = []
    args: list[str] = []
    if program in ("grep", "rg"):
        if draw(st.booleans()):
            args += ["-e", "TOKEN"]
        else:
            args.append("TOKEN")
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 9))
        if kind <= 3 and options_of(spec):
            args.append(draw(st.sampled_from(options_of(spec))))
        elif kind == 4:
            args.append(draw(st.sampled_from(DANGEROUS.get(program, ("--frobnicate",)))))
            dangerous |= program in DANGEROUS
            unknown |= program not in DANGEROUS
        elif kind == 5:
            args.append(draw(st.sampled_from(UNKNOWN)))
            unknown = True
        elif kind == 6 and program in ("grep", "rg"):
            path = draw(st.sampled_from(INSIDE + OUTSIDE))
            args += ["-f", path]
            paths.append(path)
        else:
            path = draw(st.sampled_from(INSIDE + OUTSIDE))
            args.append(path)
            paths.append(path)
    quoted = [a if a.startswith(("$", "~", "*")) else f"'{a}'" for a in args]
    return Made(" ".join([*words, *quoted]), tuple(paths), dangerous, unknown)


def allowed(command: str, root: Path, rules: tuple[Rule, ...] = BUILTIN_RULES) -> bool:
    preview = CommandPreview(command=command, cwd=str(root))
    return judge("bash", preview, list(rules), [root]).outcome == "allow"


@settings(
    max_examples=600,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(built_in_commands())
def test_a_built_in_allowed_command_has_only_allow_listed_options_and_confined_paths(
    workspace: Workspace, made: Made
) -> None:
    if not allowed(made.command, workspace.root):
        return
    assert not made.dangerous and not made.unknown, made.command
    for path in made.paths:
        assert path in INSIDE, (made.command, path)
        resolved = Path(os.path.realpath(workspace.root / path))
        assert resolved.is_relative_to(workspace.root), (made.command, path)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(built_in_commands())
def test_a_built_in_command_with_only_safe_words_is_allowed(
    workspace: Workspace, made: Made
) -> None:
    """The other half: the allow-list is not empty in practice."""
    if made.dangerous or made.unknown or any(p not in INSIDE for p in made.paths):
        return
    assert allowed(made.command, workspace.root), made.command


def run(command: str, root: Path) -> str:
    done = subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, timeout=20
    )
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    ("walk", "following"),
    [
        ("grep -r TOKEN .", "grep -R TOKEN ."),
        ("ls -R", "ls -RL"),
        ("grep -rl TOKEN", "grep -Rl TOKEN"),
    ],
)
def test_a_recursive_walk_allowed_does_not_follow_links_and_the_one_that_does_is_asked(
    workspace: Workspace, walk: str, following: str
) -> None:
    """Why ``grep -r`` and ``ls -R`` are allowed and ``grep -R`` and ``ls -L`` are not: the
    real programs, on a workspace with a link to a folder outside."""
    assert allowed(walk, workspace.root)
    assert "secret" not in run(walk, workspace.root) and "key" not in run(walk, workspace.root)
    assert not allowed(following, workspace.root)
    assert "secret" in run(following, workspace.root) or "key" in run(following, workspace.root)


@pytest.mark.parametrize(
    "command",
    [
        "cat notes.txt",  # a link to a key outside
        "head -n 3 notes.txt",
        "tail linked/key",  # through a linked folder
        "grep -r TOKEN linked",  # grep -r follows the links it is given
        "wc -l loop",
        "cat src/../../outside/secret.txt",
        "grep -f notes.txt README.md",  # a path in an option's value
        "git diff --no-index README.md notes.txt",
    ],
)
def test_a_path_read_file_would_refuse_is_asked(workspace: Workspace, command: str) -> None:
    assert not allowed(command, workspace.root)


def test_git_built_ins_hold_only_for_the_workspaces_own_repository(tmp_path: Path) -> None:
    parent = tmp_path / "home"
    (parent / ".git").mkdir(parents=True)
    inner = parent / "project"
    inner.mkdir()
    assert not allowed("git log -p", inner)  # a $HOME kept in git would be shown
    (inner / ".git").mkdir()
    assert allowed("git log -p", inner)


def test_a_line_that_changes_folder_first_is_not_allowed_by_the_built_ins(
    workspace: Workspace,
) -> None:
    cd = Rule(tool="bash", pattern="cd *", decision="allow", scope="user")
    assert allowed("cat README.md", workspace.root, (*BUILTIN_RULES, cd))
    assert not allowed("cd linked && cat key", workspace.root, (*BUILTIN_RULES, cd))
    assert not allowed("cd .. && cat outside/secret.txt", workspace.root, (*BUILTIN_RULES, cd))
