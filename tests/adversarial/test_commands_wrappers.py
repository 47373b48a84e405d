"""Promise: a command that would delete is never allowed by an allow rule, nor passes a deny
rule ``rm *``, in any wrapper spelling (issue 24, break 4). Spelled with options the wrappers
are known to take it is denied; spelled so that what runs cannot be seen (an option no table
lists, a computed word, a shell of another grammar, a shell reading its input) it is asked —
never allowed, and never run unasked in the sandbox. Likewise ``git push`` behind git's global
options against a deny ``git push *``.

Commands are generated over wrappers (nested) × their option spellings × quoting × separators
× substitutions; the generator knows which spellings it made unreadable.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.policy.match import InvalidPattern, compile_command_pattern, judge
from tether_protocol import CommandPreview, Rule

ROOTS = [Path("/w")]
DENY_RM = Rule(tool="bash", pattern="rm *", decision="deny", scope="user")
DENY_PUSH = Rule(tool="bash", pattern="git push *", decision="deny", scope="user")
WIDE_ALLOWS = tuple(
    Rule(tool="bash", pattern=f"{p} *", decision="allow", scope="user")
    for p in (
        *("env", "/usr/bin/env", "nice", "sudo", "sh", "bash", "xargs", "timeout", "command"),
        *("exec", "nohup", "stdbuf", "setsid", "ionice", "time", "find", "git", "eval", "ls"),
        *("echo", "busybox", "uv run", "npx", "docker exec", "ssh", "zsh", "true"),
    )
)
"""``*`` rules a user might have, none of them for ``rm``."""


@dataclass(frozen=True)
class Spelled:
    """A command as generated, and whether every wrapper in it is spelled readably."""

    text: str
    readable: bool
    wrapped: bool = True


def word(draw: st.DrawFn, text: str) -> str:
    """``text`` as one shell word, quoted one of the ways bash reads as the same word."""
    style = draw(st.integers(0, 3))
    if style == 1:
        return "'" + text.replace("'", "'\\''") + "'"
    if style == 2 and not any(c in text for c in '"$`\\!'):
        return f'"{text}"'
    if style == 3 and text.isalnum() and len(text) > 1:
        return f"{text[0]}''{text[1:]}"  # r''m
    return shlex.quote(text)


READABLE_OPTIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "command": ((), ("-p",), ("--",), ("-p", "--")),
    "env": ((), ("-i",), ("-",), ("-u", "HOME"), ("--unset=HOME",), ("-C", "."), ("FOO=1",)),
    "nice": ((), ("-n", "5"), ("-n5",), ("-5",), ("--adjustment=3",), ("-n", "-5")),
    "timeout": (("5",), ("-s", "KILL", "5"), ("-k", "1", "5s"), ("--foreground", "5")),
    "xargs": ((), ("-0",), ("-n", "1"), ("-P4",), ("-r",), ("-I{}",), ("--null", "-n1")),
    "sudo": ((), ("-u", "root"), ("-E",), ("-n", "--"), ("FOO=1",), ("-s",), ("--user=root",)),
    "exec": ((), ("-c",), ("-a", "name"), ("-cl",)),
    "nohup": ((), ("--",)),
    "stdbuf": (("-o0",), ("-oL",), ("--output=L",), ("-e", "0")),
    "setsid": ((), ("-f",), ("-w",), ("--fork",)),
    "ionice": ((), ("-c", "3"), ("-c3",), ("-c", "2", "-n", "7")),
    "time": ((), ("-p",)),
    "builtin": ((),),
    "busybox": ((),),
}
UNREADABLE_OPTIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "env": (("-S",), ("--split-string",), ("$OPTS",)),
    "nice": (("--frobnicate",), ("-Z",), ("-n", "$N")),
    "timeout": (("$T",), ("--kill-now", "5")),
    "sudo": (("-u", "$WHO"), ("--frobnicate",)),
    "xargs": (("-I", "$R"), ("--frob",)),
    "stdbuf": (("-q0",),),
}
"""Spellings a wrapper takes (or might) whose reach the rules cannot see: asked."""
SHELLS = ("sh", "bash", "dash", "/bin/sh", "/usr/bin/bash")
SHELL_FLAGS = (
    ("-c",),
    ("-lc",),
    ("-ec",),
    ("-c", "-e"),
    ("--norc", "-c"),
    ("-o", "pipefail", "-c"),
)


@st.composite
def deletions(draw: st.DrawFn, depth: int = 0) -> Spelled:
    """``rm -rf x`` (or a spelling of its program), under up to three wrappers."""
    if depth >= 3 or draw(st.integers(0, 3)) == 0:
        program = draw(st.sampled_from(["rm", "/bin/rm", "\\rm", "rm"]))
        args = draw(st.sampled_from([["-rf", "x"], ["x"], [], ["--", "-x"], ["$TARGET"]]))
        first = program if program.startswith(("\\", "/")) else word(draw, program)
        words = [first, *(word(draw, a) if a[0] != "$" else a for a in args)]
        return Spelled(" ".join(words), readable=True, wrapped=False)
    inner = draw(deletions(depth + 1))
    kind = draw(st.integers(0, 9))
    if kind <= 4:
        name = draw(st.sampled_from(sorted(READABLE_OPTIONS)))
        if name == "time" and depth > 0:
            name = "nohup"  # the `time` keyword only starts a pipeline
        unreadable = name in UNREADABLE_OPTIONS and draw(st.integers(0, 4)) == 0
        table = UNREADABLE_OPTIONS if unreadable else READABLE_OPTIONS
        options = draw(st.sampled_from(table[name]))
        opts = [o if o.startswith("$") else word(draw, o) for o in options]
        return Spelled(" ".join([name, *opts, inner.text]), inner.readable and not unreadable)
    if kind <= 6:
        shell = draw(st.sampled_from(SHELLS))
        flags = [word(draw, f) for f in draw(st.sampled_from(SHELL_FLAGS))]
        tail = draw(st.sampled_from(["", " sh", " _ a b"]))
        return Spelled(f"{shell} {' '.join(flags)} {shlex.quote(inner.text)}{tail}", inner.readable)
    if kind == 7:
        return Spelled(f"eval {shlex.quote(inner.text)}", inner.readable)
    # A find in a find's -exec ends it early; and the path find adds after the inner command
    # turns `echo rm | sh` (rm read from sh's input) into `sh PATH`, which runs that file.
    if kind == 8 and "-exec" not in inner.text and "| sh" not in inner.text:
        end = draw(st.sampled_from(["\\;", "';'", "+"]))
        return Spelled(f"find . -name x -exec {inner.text} {{}} {end}", inner.readable)
    hiding = draw(st.sampled_from(["zsh -c {}", "fish -c {}", "echo {} | sh", "su -c {}"]))
    return Spelled(hiding.format(shlex.quote(inner.text)), False)


@st.composite
def lines(draw: st.DrawFn) -> Spelled:
    """A deletion among other commands, maybe inside a substitution."""
    found = draw(deletions())
    text = found.text
    if draw(st.integers(0, 4)) == 0:
        text = draw(st.sampled_from(["echo $({})", 'echo "$({})"', "cat <({})"])).format(text)
    before = draw(st.sampled_from(["", "", "ls && ", "true; ", "echo a | ", "pwd || "]))
    after = draw(st.sampled_from(["", "", " || true", " 2>&1", " > /dev/null", "; ls"]))
    return Spelled(before + text + after, found.readable, found.wrapped)


def exact_allows(text: str) -> list[Rule]:
    """An exact allow of the line's first command, when a pattern can say it."""
    head = text.split("&&")[0].split("|")[0].split(";")[0].strip()
    try:
        compile_command_pattern(head)
    except InvalidPattern:
        return []
    return [Rule(tool="bash", pattern=head, decision="allow", scope="session")]


def outcome(text: str, rules: list[Rule]) -> str:
    """``allow``, ``deny``, ``ask`` (a rule asks, or the rules cannot read it: the gate asks
    even with a sandbox) or ``unasked`` (no rule said anything: the sandbox may run it)."""
    judged = judge("bash", CommandPreview(command=text, cwd="/w"), rules, ROOTS)
    if judged.outcome == "none":
        return "ask" if judged.unreadable else "unasked"
    return judged.outcome


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines(), st.lists(st.sampled_from(WIDE_ALLOWS), max_size=6))
def test_a_deny_rm_stops_a_deletion_in_any_wrapper_spelling(
    line: Spelled, allows: list[Rule]
) -> None:
    rules = [*allows, *exact_allows(line.text), DENY_RM]
    got = outcome(line.text, rules)
    assert got in ("deny", "ask"), (line.text, got)  # never allowed, never run unasked
    if line.readable:
        assert got == "deny", (line.text, got)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines(), st.lists(st.sampled_from(WIDE_ALLOWS), max_size=8))
def test_no_allow_rule_of_a_wrapper_allows_what_it_runs(line: Spelled, allows: list[Rule]) -> None:
    """Without a deny: ``*`` rules of wrappers and an exact allow of ``rm`` itself still
    allow no deletion a wrapper runs."""
    inner_rm = Rule(tool="bash", pattern="rm -rf x", decision="allow", scope="user")
    got = outcome(line.text, [*allows, inner_rm])
    if line.wrapped:
        assert got != "allow", line.text


GIT_GLOBALS = (
    ("-C", "."),
    ("-c", "x.y=z"),
    ("--git-dir=.git",),
    ("--git-dir", ".git"),
    ("--work-tree=.",),
    ("--no-pager",),
    ("-p",),
    ("-P",),
    ("--bare",),
    ("--namespace=n",),
    ("--literal-pathspecs",),
    ("--no-optional-locks",),
    ("--config-env=a.b=ENV",),
    ("--exec-path=/x",),
)


@st.composite
def pushes(draw: st.DrawFn) -> Spelled:
    groups = draw(st.lists(st.sampled_from(GIT_GLOBALS), max_size=3))
    unreadable = draw(st.integers(0, 5)) == 0
    if unreadable:  # between two options, never as one's value
        spot = draw(st.integers(0, len(groups)))
        groups.insert(spot, (draw(st.sampled_from(["--frob", "$G"])),))
    options = [w for group in groups for w in group]
    args = draw(st.sampled_from([[], ["origin"], ["origin", "main"], ["--force"]]))
    git = draw(st.sampled_from(["git", "/usr/bin/git", "g'it'"]))
    text = " ".join([git, *(o if o == "$G" else word(draw, o) for o in options), "push", *args])
    wrapper = draw(st.sampled_from(["", "env ", "sudo ", "command ", "nice -n 2 "]))
    text = wrapper + text
    if draw(st.booleans()):
        text = f"bash -c {shlex.quote(text)}"
    return Spelled(text, not unreadable)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pushes(), st.lists(st.sampled_from(WIDE_ALLOWS), max_size=6))
def test_a_deny_git_push_sees_through_gits_global_options(
    line: Spelled, allows: list[Rule]
) -> None:
    got = outcome(line.text, [*allows, *exact_allows(line.text), DENY_PUSH])
    assert got in ("deny", "ask"), (line.text, got)
    if line.readable:
        assert got == "deny", (line.text, got)


@pytest.mark.parametrize(
    "command",
    [
        "command rm x",
        "env rm x",
        "env -i FOO=1 rm x",
        "nice rm x",
        "nice -n 5 rm x",
        "timeout 5 rm x",
        "xargs rm",
        "sudo rm x",
        "exec rm x",
        "time rm x",
        "nohup rm x",
        "stdbuf -o0 rm x",
        "sh -c 'rm x'",
        "bash -c 'rm x'",
        "bash -lc 'rm x'",
        "/usr/bin/env rm x",
        "find . -exec rm {} +",
        "eval 'rm x'",
        "! rm x",
    ],
)
def test_each_wrapper_the_issue_names_is_denied(command: str) -> None:
    assert outcome(command, [DENY_RM]) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "env -S 'rm x'",  # an option that splits a string: not read
        "nice --frob rm x",  # an option no table lists
        "$PROGRAM x",  # a computed program
        "eval $CMD",  # a computed string
        'sh -c "$CMD"',
        "echo rm x | sh",  # a shell reading its input
        "echo rm x | bash /dev/stdin",
        "source <(echo rm x)",  # a script computed when it runs
        "zsh -c 'rm x'",  # another grammar
        "git -c alias.x='!rm x' x",  # configuration that runs programs
        "uv run rm x",  # a runner, scanned loosely: maybe its command
    ],
)
def test_what_cannot_be_seen_through_is_asked_under_a_deny(command: str) -> None:
    assert outcome(command, [DENY_RM]) == "ask"
    exact = exact_allows(command)
    assert outcome(command, [*exact, DENY_RM]) == "ask"  # an allow does not get past it


def test_the_property_catches_a_wrapper_not_read_through(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the wrappers read through, the deny property fails: it can fail."""
    from tether.policy import wrappers

    monkeypatch.setattr(wrappers, "UNWRAPPERS", {})
    with pytest.raises(AssertionError):
        test_a_deny_rm_stops_a_deletion_in_any_wrapper_spelling()
