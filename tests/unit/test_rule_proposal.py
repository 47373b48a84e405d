"""The rule the CLI offers beside "always this exact command": computed from the parsed
command, and only one the server would store (it allows the very command shown)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.policy.match import judge
from tether.policy.propose import propose_command_pattern, suggest_patterns
from tether_protocol import CommandPreview, DiffPreview, Rule


@pytest.mark.parametrize(
    ("command", "pattern"),
    [
        ("pytest -q tests/x.py", "pytest *"),
        ("pytest", "pytest *"),
        ("git commit -m 'a b'", "git commit *"),
        ("cargo build --release", "cargo build *"),
        ("python -m pytest -k slow", "python -m pytest *"),
        ("npm run build", "npm run *"),
        ("make test", "make test *"),
    ],
)
def test_the_program_and_its_subcommand_are_kept(command: str, pattern: str) -> None:
    assert propose_command_pattern(command) == pattern


@pytest.mark.parametrize(
    "command",
    [
        "ls && pytest",  # two simple commands: one rule cannot cover both
        "pytest > log.txt",  # a redirection the pattern would not name
        "FOO=1 pytest",  # an assignment
        "echo $(whoami)",  # a substitution
        "sleep 5 &",  # a background job
        "sudo make install",  # a launcher: only ever exact
        "bash -c 'make test'",
        "rm -rf build",  # never widened at a keypress
        "git $SUB x",  # a computed subcommand
        "git -C other status",  # an option where the subcommand goes
        "$EDITOR notes.txt",
        "if true; then ls; fi",  # not read by the rules at all
        "python3 -c 'print(1)'",  # an interpreter: `python3 *` would allow any program
        "python script.py",
        "node -e 'process.exit()'",
        "perl -e 1",
    ],
)
def test_nothing_is_offered_where_only_the_exact_command_is_safe(command: str) -> None:
    assert propose_command_pattern(command) is None


@pytest.mark.parametrize(
    "command", ["pytest -q", "git log --oneline -5", "python3 -m http.server 8000", "uv sync"]
)
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
        ("pytest -q tests", ["pytest -q tests", "pytest *"]),
        ("git commit -m x", ["git commit -m x", "git commit *"]),
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
