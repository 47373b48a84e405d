"""The rule the CLI offers beside "always this exact command": only for a program on the
wider-rule allow-list (issue 24), computed from the parsed command, and only one the server
would store (it allows the very command shown)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.policy.match import judge
from tether.policy.propose import propose_command_pattern, suggest_patterns
from tether_protocol import CommandPreview, DiffPreview, Rule


@pytest.mark.parametrize(
    ("command", "pattern"),
    [
        ("echo hello there", "echo *"),
        ("ls -la src", "ls *"),
        ("ls", "ls *"),
        ("sleep 1", "sleep *"),
        ("which python3", "which *"),
    ],
)
def test_a_wider_rule_is_offered_for_a_program_on_the_allow_list(
    command: str, pattern: str
) -> None:
    assert propose_command_pattern(command) == pattern


@pytest.mark.parametrize(
    "command",
    [
        "ls && pwd",  # two simple commands: one rule cannot cover both
        "ls > listing.txt",  # a redirection the pattern would not name
        "FOO=1 ls",  # an assignment
        "echo $(whoami)",  # a substitution
        "sleep 5 &",  # a background job
        "/bin/ls -la",  # a path for a program: not the allow-listed name
        "$EDITOR notes.txt",
        "if true; then ls; fi",  # not read by the rules at all
        # Off the allow-list: each runs code its arguments choose, or writes.
        "pytest -q tests/x.py",  # --basetemp empties a folder, -p imports a module
        "python -m pytest -k slow",
        "git commit -m 'a b'",  # hooks run
        "git config core.pager cat",
        "make test",  # make CC='sh -c …'
        "npm test",
        "npm run build",
        "npm exec eslint",
        "cargo build --release",
        "go run main.go",
        "uv run pytest",
        "poetry run pytest",
        "docker run alpine true",
        "kubectl exec pod -- ls",
        "deno eval 1",
        "python -m timeit 1",
        "python3 -c 'print(1)'",
        "node -e 'process.exit()'",
        "sudo make install",
        "bash -c 'make test'",
        "rm -rf build",
        "printf -v PATH /tmp",
        "date -f notes.txt",
        "cat README.md",
    ],
)
def test_nothing_wider_is_offered_off_the_allow_list(command: str) -> None:
    assert propose_command_pattern(command) is None


@pytest.mark.parametrize("command", ["ls -la", "echo hi", "sleep 2", "uname -a"])
def test_every_proposal_allows_the_command_it_was_made_for(command: str) -> None:
    pattern = propose_command_pattern(command)
    assert pattern is not None
    rule = Rule(tool="bash", pattern=pattern, decision="allow", scope="project")
    preview = CommandPreview(command=command, cwd="/w")
    assert judge("bash", preview, [rule], []).outcome == "allow"
    other = CommandPreview(command=command + " > out.txt", cwd="/w")
    assert judge("bash", other, [rule], []).outcome != "allow"  # a redirection: still asked


@pytest.mark.parametrize(
    ("command", "offered"),
    [
        ("pytest -q tests", ["pytest -q tests"]),
        ("git commit -m x", ["git commit -m x"]),
        ("ls -la src", ["ls -la src", "ls *"]),
        ("echo 'a b'", ["echo *"]),  # quotes: no exact pattern says it
        ("rm -rf build", ["rm -rf build"]),  # never widened, exact only
        ("ls | wc -l", []),
    ],
)
def test_a_command_question_offers_the_exact_command_then_the_wider_rule(
    command: str, offered: list[str]
) -> None:
    preview = CommandPreview(command=command, cwd="/w")
    assert suggest_patterns("bash", preview, [Path("/w")]) == offered
    for pattern in offered:
        rule = Rule(tool="bash", pattern=pattern, decision="allow", scope="session")
        assert judge("bash", preview, [rule], [Path("/w")]).outcome == "allow"


@pytest.mark.parametrize(
    ("uri", "offered"),
    [
        ("file:///w/src/app.py", ["src/app.py", "src/*.py"]),
        ("file:///w/Makefile", ["Makefile"]),
        ("file:///w/a[1].py", []),  # a name a glob cannot say
        ("file:///elsewhere/a.py", []),  # outside the workspace
    ],
)
def test_an_edit_question_offers_the_file_then_its_folders_files_of_its_kind(
    uri: str, offered: list[str]
) -> None:
    preview = DiffPreview(uri=uri, diff="")
    assert suggest_patterns("edit_file", preview, [Path("/w")]) == offered
