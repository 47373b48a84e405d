"""Promise: every rule an approval offers for a command is the exact command or, for a program
on the wider-rule allow-list, ``program *`` — never a ``*`` for a launcher, an interpreter, a
runner, a package manager or a build tool (issue 24, break 3).

Commands are generated over programs × subcommands × arguments × quoting × wrappers ×
separators; the test keeps its own list of programs that run code their arguments choose, so
adding one of them to the allow-list fails here too.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.policy.match import compile_command_pattern, judge
from tether.policy.propose import WIDER_RULES, suggest_patterns
from tether.policy.shellparse import parse_command
from tether_protocol import CommandPreview, Rule

RUNS_CODE = (
    *("uv", "uvx", "poetry", "pdm", "hatch", "pipx", "pip", "npm", "npx", "pnpm", "yarn", "bun"),
    *("docker", "podman", "kubectl", "deno", "go", "cargo", "make", "just", "gradle", "mvn"),
    *("python", "python3", "python3.12", "node", "ruby", "perl", "php", "sh", "bash", "zsh"),
    *("git", "pytest", "tox", "nox", "env", "xargs", "sudo", "nice", "timeout", "eval"),
    *("exec", "command", "find", "printf", "date", "wc", "du", "cat", "grep", "rg", "tar"),
)
"""Programs that, with some arguments, run code, write or show a file: never widened."""
SUBCOMMANDS = ("run", "exec", "eval", "test", "build", "config", "commit", "-m", "install", "x")
ARGUMENTS = ("-q", "pytest", "sh", "-c", "rm -rf ~", "timeit", "core.pager", "x.py", "--", "1")
ALLOWED = tuple(WIDER_RULES)


def quoted(word: str, style: int) -> str:
    if style == 1:
        return "'" + word.replace("'", "'\\''") + "'"
    if style == 2:
        return '"' + word + '"'
    return shlex.quote(word)


@st.composite
def simple_commands(draw: st.DrawFn) -> str:
    program = draw(st.sampled_from(RUNS_CODE + ALLOWED))
    words = [program]
    if draw(st.booleans()):
        words.append(draw(st.sampled_from(SUBCOMMANDS)))
    words += draw(st.lists(st.sampled_from(ARGUMENTS), max_size=3))
    text = " ".join(quoted(w, draw(st.integers(0, 2))) for w in words)
    wrapper = draw(st.sampled_from(["", "", "env ", "nice ", "sudo ", "command ", "FOO=1 "]))
    return wrapper + text


@st.composite
def command_lines(draw: st.DrawFn) -> str:
    parts = [draw(simple_commands())]
    for _ in range(draw(st.sampled_from([0, 0, 0, 1]))):
        parts.append(draw(st.sampled_from([" && ", " | ", "; "])))
        parts.append(draw(simple_commands()))
    suffix = draw(st.sampled_from(["", "", " > out.txt", " 2>&1", " &"]))
    return "".join(parts) + suffix


def exact_words(pattern: str, command: str) -> bool:
    """``pattern`` (no ``*``) has exactly the one simple command's words, nothing more."""
    compiled = compile_command_pattern(pattern)
    parsed = parse_command(command)
    assert parsed is not None and len(parsed.commands) == 1
    return not compiled.star and compiled.words == parsed.commands[0].argv


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command_lines())
def test_every_offered_rule_is_the_exact_command_or_on_the_allow_list(command: str) -> None:
    preview = CommandPreview(command=command, cwd="/w")
    for pattern in suggest_patterns("bash", preview, [Path("/w")]):
        compiled = compile_command_pattern(pattern)
        if compiled.star:
            assert " ".join(compiled.words) in WIDER_RULES, (command, pattern)
            assert compiled.words[0] not in RUNS_CODE, (command, pattern)
        else:
            assert exact_words(pattern, command), (command, pattern)
        rule = Rule(tool="bash", pattern=pattern, decision="allow", scope="session")
        assert judge("bash", preview, [rule], [Path("/w")]).outcome == "allow", (command, pattern)


def test_the_allow_list_says_why_for_each_entry() -> None:
    assert all(len(why) > 10 for why in WIDER_RULES.values())
    assert not set(WIDER_RULES) & set(RUNS_CODE)
