"""Rules against calls: which rules match a command's simple commands or an edit's path.

A rule's pattern is compiled once (``compile_rule``); ``judge`` applies a set of rules to
one call: a ``deny`` that matches any part wins, then an ``ask``; the call is allowed only
when every simple command (or the path) is allowed by a rule and nothing in the command
escapes the rules (a substitution, a background job, a heredoc). Anything else: ask.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Literal

from tether_protocol import CommandPreview, DiffPreview, Preview, Rule

from ..text.linear_regex import LinearRegexError
from ..workspace.folders import path_from_uri
from ..workspace.ignore import compile_glob, wildmatch_regex
from .builtin import BUILTIN_LIMITS, confined
from .shellparse import WILD, SimpleCommand, Word, parse_command

COMMAND_TOOLS = frozenset({"bash"})
PATH_TOOLS = frozenset({"edit_file", "write_file"})

LAUNCHERS = frozenset(
    {
        *("eval", "exec", "source", ".", "command", "builtin", "env", "xargs"),
        *("sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "busybox"),
        *("sudo", "doas", "su", "nohup", "timeout", "nice", "time", "setsid", "stdbuf"),
        *("chroot", "unshare", "nsenter", "watch", "parallel", "ionice", "flock"),
    }
)
"""Commands that run another command from their arguments: only an exact rule allows them
(``bash *`` does not allow ``bash -c 'rm -rf ~'``)."""

Outcome = Literal["allow", "deny", "ask", "none"]


class InvalidPattern(ValueError):
    """A pattern the rules cannot use; the message says why."""


@dataclass(frozen=True, slots=True)
class CommandPattern:
    """A ``bash`` pattern: a simple command's words, a last ``*`` allowing more arguments."""

    words: tuple[str, ...]
    star: bool
    source: str = ""
    assignments: tuple[str, ...] = ()
    redirections: tuple[str, ...] = ()
    builtin: bool = False
    """A built-in read-only rule: its arguments confined and its writing options refused."""

    def allows(self, cmd: SimpleCommand) -> bool:
        """The simple command is within this allow: the same words (or more after a ``*``),
        assignments and redirections, no wild word before the ``*``, no launcher under it."""
        n = len(self.words)
        if cmd.assignments != self.assignments or cmd.redirections != self.redirections:
            return False
        if self.star:
            if len(cmd.argv) < n or cmd.argv[:n] != self.words or cmd.argv[0] in LAUNCHERS:
                return False
        elif cmd.argv != self.words:
            return False
        if not self.builtin:
            return True
        refused = BUILTIN_LIMITS.get(self.source, ())
        return all(
            a is not WILD and confined(a) and not (refused and a.startswith(refused))
            for a in cmd.argv[1:]
        )

    def hits(self, cmd: SimpleCommand) -> bool:
        """The simple command may be one this deny or ask names (a wild word may be anything;
        the program is compared by its base name, ``/bin/rm`` is ``rm``)."""
        n = len(self.words)
        if len(cmd.argv) < n or (not self.star and len(cmd.argv) != n):
            return False
        return all(
            _same_word(a, w, program=i == 0)
            for i, (a, w) in enumerate(zip(cmd.argv, self.words, strict=False))
        )


def _same_word(actual: Word, word: str, *, program: bool) -> bool:
    if actual is WILD:
        return True
    return actual == word or (program and posixpath.basename(actual) == word)


@dataclass(frozen=True, slots=True)
class PathPattern:
    """An edit pattern: some glob matches the path and no ``!`` glob does."""

    include: tuple[Callable[[str], bool], ...]
    exclude: tuple[Callable[[str], bool], ...]

    def matches(self, rel: str) -> bool:
        """``rel``, a workspace-relative ``/`` path, is under this pattern."""
        if any(m(rel) for m in self.exclude):
            return False
        return not self.include or any(m(rel) for m in self.include)


@lru_cache(maxsize=1024)
def compile_command_pattern(pattern: str) -> CommandPattern:
    """The ``bash`` pattern's words; ``InvalidPattern`` when it is not one plain command."""
    text = pattern.strip()
    star = text == "*" or text.endswith((" *", "\t*"))
    if star:
        text = text[:-1].rstrip()
    parsed = parse_command(text) if text else None
    if parsed is None or len(parsed.commands) != 1 or parsed.uncovered:
        raise InvalidPattern(
            f"{pattern!r}: a pattern is one simple command (words, then optionally ' *')"
        )
    [cmd] = parsed.commands
    words = tuple(w for w in cmd.argv if w is not WILD)
    if len(words) != len(cmd.argv):
        raise InvalidPattern(f"{pattern!r}: only the last word may be a '*', alone")
    return CommandPattern(words, star, pattern, cmd.assignments, cmd.redirections)


@lru_cache(maxsize=1024)
def compile_path_pattern(pattern: str) -> PathPattern:
    """An edit pattern's globs; ``InvalidPattern`` when one cannot be compiled."""
    include: list[Callable[[str], bool]] = []
    exclude: list[Callable[[str], bool]] = []
    for glob in pattern.split():
        negated = glob.startswith("!")
        body = glob[1:] if negated else glob
        regex = wildmatch_regex(body.lstrip("/")) if body else None
        if regex is None:
            raise InvalidPattern(f"{pattern!r}: {glob!r} is not a glob")
        try:
            matcher = compile_glob(regex)
        except LinearRegexError as exc:
            raise InvalidPattern(f"{pattern!r}: {exc}") from exc
        (exclude if negated else include).append(matcher)
    if not include and not exclude:
        raise InvalidPattern(f"{pattern!r}: no glob")
    return PathPattern(tuple(include), tuple(exclude))


def check_pattern(tool: str, pattern: str) -> None:
    """Raise ``InvalidPattern`` unless ``pattern`` is usable for ``tool``."""
    if tool in COMMAND_TOOLS:
        compile_command_pattern(pattern)
    elif tool in PATH_TOOLS:
        compile_path_pattern(pattern)
    else:
        raise InvalidPattern(f"no rules for tool {tool!r} (bash, edit_file, write_file)")


@dataclass(frozen=True, slots=True)
class Judgement:
    """What the rules say about one call, and which rules said it."""

    outcome: Outcome
    rules: tuple[Rule, ...] = ()
    unreadable: bool = False
    """A command the parser could not read: no deny rule could be checked against it."""


def relative_path(preview: DiffPreview, roots: Sequence[Path]) -> str | None:
    """The changed file relative to the workspace folder holding it (None: outside)."""
    path = path_from_uri(preview.uri)
    if path is None:
        return None
    for root in roots:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            continue
    return None


def judge(
    tool: str,
    preview: Preview | None,
    rules: Sequence[Rule],
    roots: Sequence[Path],
) -> Judgement:
    """The rules' verdict on a call: ``deny``, ``ask``, ``allow`` or ``none`` (no say)."""
    mine = [r for r in rules if r.tool == tool]
    if preview is None:
        return Judgement("none")
    if tool in COMMAND_TOOLS and isinstance(preview, CommandPreview):
        # Parsed even without rules: the sandbox runs unasked only what could be read.
        return _judge_command(preview.command, mine)
    if mine and tool in PATH_TOOLS and isinstance(preview, DiffPreview):
        rel = relative_path(preview, roots)
        return Judgement("none") if rel is None else _judge_path(rel, mine)
    return Judgement("none")


def _command_pattern(rule: Rule) -> CommandPattern | None:
    try:
        pattern = compile_command_pattern(rule.pattern)
    except InvalidPattern:
        return None  # checked when stored; a hand-edited file's bad line matches nothing
    return replace(pattern, builtin=True) if rule.scope == "builtin" else pattern


def _judge_command(command: str, rules: Sequence[Rule]) -> Judgement:
    parsed = parse_command(command)
    if parsed is None:
        return Judgement("none", unreadable=True)  # asked (no rule can be sure of it)
    compiled = [(r, p) for r in rules if (p := _command_pattern(r)) is not None]
    for decision in ("deny", "ask"):
        for named, pattern in compiled:
            if named.decision == decision and any(pattern.hits(c) for c in parsed.commands):
                return Judgement(decision, (named,))
    if parsed.uncovered:
        return Judgement("none")
    used: list[Rule] = []
    for cmd in parsed.commands:
        rule = next((r for r, p in compiled if r.decision == "allow" and p.allows(cmd)), None)
        if rule is None:
            return Judgement("none")
        if rule not in used:
            used.append(rule)
    return Judgement("allow", tuple(used))


def _judge_path(rel: str, rules: Sequence[Rule]) -> Judgement:
    matching: list[Rule] = []
    for rule in rules:
        try:
            if compile_path_pattern(rule.pattern).matches(rel):
                matching.append(rule)
        except InvalidPattern:
            continue
    for decision in ("deny", "ask", "allow"):
        found = next((r for r in matching if r.decision == decision), None)
        if found is not None:
            return Judgement(decision, (found,))
    return Judgement("none")
