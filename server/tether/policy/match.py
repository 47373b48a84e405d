"""Rules against calls: which rules match a command's simple commands or an edit's path.

A rule's pattern is compiled once (``compile_rule``); ``judge`` applies a set of rules to
one call. A ``deny`` or an ``ask`` is matched against every command the line may run —
each simple command and what its wrappers run (``wrappers.py``: ``env rm``, ``sh -c 'rm'``,
``git -C . push``): a certain match denies (or asks); a match that depends on what cannot be
known before it runs (a computed word, a loosely scanned runner, a wrapper not read through)
asks. The call is allowed only when every simple command (or the path) is allowed by a rule,
nothing escapes the rules (a substitution, a background job, a heredoc) and no wrapper hides
what it runs. Anything else: ask.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Literal

from tether_protocol import CommandPreview, DiffPreview, Preview, Rule

from ..text.linear_regex import LinearRegexError
from ..workspace.folders import path_from_uri
from ..workspace.ignore import compile_glob, wildmatch_regex
from .builtin import SHELL_STATE, allowed_read
from .shellparse import WILD, SimpleCommand, Word, parse_command
from .wrapper_options import HIDING, RUNNERS, SHELLS, WRAPPER_OPTIONS
from .wrappers import Reach, Run, program_name, reach

COMMAND_TOOLS = frozenset({"bash"})
PATH_TOOLS = frozenset({"edit_file", "write_file"})
MCP_PREFIX = "mcp__"
"""A rule (or an ``autoApprove`` entry) names an MCP server's tool ``mcp__<server>__<tool>``,
or every tool of a server ``mcp__<server>__*``, by the names the server is configured and
the tool listed under (``mcp_named``). Their pattern is ``*`` (any arguments): the arguments
of another program's tool are not matched."""
MCP_ANY = "*"
MAX_RULE_TOOL = 200
"""The longest ``Rule.tool`` (``tether_protocol.Rule``)."""

LAUNCHERS = frozenset(
    {
        *WRAPPER_OPTIONS,
        *SHELLS,
        *HIDING,
        *(r for r in RUNNERS if isinstance(r, str)),
        *("eval", "busybox", "source", "."),
    }
)
"""Programs that run another command from their arguments: only an exact rule allows them
(``bash *`` does not allow ``bash -c 'rm -rf ~'``, ``/usr/bin/env *`` not ``env rm``)."""

Outcome = Literal["allow", "deny", "ask", "none"]
Hit = Literal["yes", "maybe", "no"]


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
    """A built-in read-only rule: its options allow-listed and its paths confined."""

    def allows(self, cmd: SimpleCommand, reached: Reach, roots: Sequence[Path] = ()) -> bool:
        """The simple command is within this allow: the same words (or more after a ``*``),
        assignments and redirections, no wild word before the ``*``, nothing hidden by a
        wrapper, and no launcher or wrapper at all under a ``*``."""
        n = len(self.words)
        if cmd.assignments != self.assignments or cmd.redirections != self.redirections:
            return False
        if reached.hidden is not None:
            return False
        if self.star:
            if len(cmd.argv) < n or cmd.argv[:n] != self.words or reached.wraps:
                return False
            if program_name(str(cmd.argv[0])) in LAUNCHERS:
                return False
        elif cmd.argv != self.words:
            return False
        return not self.builtin or allowed_read(self.source, cmd, roots)

    def hits(self, run: Run) -> Hit:
        """Whether ``run`` is a command this deny or ask names: ``yes``; ``maybe`` when it
        depends on a word computed when it runs (which may stand for any words, none
        included), on words a wrapper adds, or on a loose scan; else ``no``. The program is
        compared by its name (``/bin/rm`` is ``rm``)."""
        found = _match(self.words, self.star, run.argv, run.open)
        return "maybe" if found == "yes" and run.loose else found


RANK: dict[Hit, int] = {"no": 0, "maybe": 1, "yes": 2}


def _best(a: Hit, b: Hit) -> Hit:
    return a if RANK[a] >= RANK[b] else b


def _match(words: tuple[str, ...], star: bool, argv: tuple[Word, ...], open_end: bool) -> Hit:
    """The pattern ``words`` (``star``: then anything) against ``argv``, where a computed
    word may be any number of words (none included) and ``open_end`` lets unknown words
    follow. Walks ``argv`` once, keeping how many pattern words each way has matched."""
    n = len(words)
    ways: dict[int, Hit] = {0: "yes"}
    found: Hit = "no"
    for i, actual in enumerate(argv):
        after: dict[int, Hit] = {}
        for j, sure in ways.items():
            if j == n and star:
                found = _best(found, sure)  # the * takes the rest, whatever it is
            elif actual is WILD:  # no word, or pattern words j.. up to all of them
                for k in range(j, n + 1):
                    after[k] = _best(after.get(k, "no"), "maybe")
            elif j < n and (actual == words[j] or (i == 0 and program_name(actual) == words[j])):
                after[j + 1] = _best(after.get(j + 1, "no"), sure)
        ways = after
    for j, sure in ways.items():
        if j == n:
            found = _best(found, "maybe" if open_end and not star else sure)
        elif open_end:
            found = _best(found, "maybe")
    return found


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


def is_mcp_tool(tool: str) -> bool:
    """Whether ``tool`` is spelled as an MCP tool's name or rule (``mcp__…``)."""
    return tool.startswith(MCP_PREFIX) and len(tool) > len(MCP_PREFIX)


def mcp_named(named: str) -> tuple[str, str] | None:
    """The server and the tool (``*``: every tool) that a rule's or ``autoApprove``'s
    ``mcp__<server>__<tool>`` names, or None when it names no one server and tool.

    The server's and the tool's own names, not the model-facing name (``mcp/names.py``
    changes characters and cuts long names, so different servers can share one): the text
    after ``mcp__`` must split at exactly one ``__`` into two non-empty names. A name that
    could be read two ways — a server whose name holds ``__`` or ends in ``_``, a tool whose
    name holds ``__`` or starts with ``_`` — names nothing (its calls are asked): no rule
    can be read as naming a server it was not written for.
    """
    if not named.startswith(MCP_PREFIX):
        return None
    rest = named[len(MCP_PREFIX) :]
    splits = [i for i in range(1, len(rest) - 2) if rest.startswith("__", i)]
    if len(splits) != 1:
        return None
    [at] = splits
    return rest[:at], rest[at + 2 :]


def mcp_rule_tool(server: str, tool: str) -> str | None:
    """The rule's ``tool`` naming exactly ``tool`` of ``server`` (None: no rule can)."""
    named = f"{MCP_PREFIX}{server}__{tool}"
    if tool == MCP_ANY or len(named) > MAX_RULE_TOOL or mcp_named(named) != (server, tool):
        return None
    return named


def mcp_name_covers(named: str, server: str, tool: str) -> bool:
    """Whether ``named`` (in a rule or ``autoApprove``) names the tool ``tool`` of the server
    configured as ``server``: that tool, or every tool of that server (``mcp__server__*``)."""
    found = mcp_named(named)
    return found is not None and found[0] == server and found[1] in (tool, MCP_ANY)


def check_pattern(tool: str, pattern: str) -> None:
    """Raise ``InvalidPattern`` unless ``pattern`` is usable for ``tool``."""
    if tool in COMMAND_TOOLS:
        compile_command_pattern(pattern)
    elif tool in PATH_TOOLS:
        compile_path_pattern(pattern)
    elif is_mcp_tool(tool):
        if mcp_named(tool) is None:
            raise InvalidPattern(
                f"{tool!r} names no one MCP server and tool: mcp__<server>__<tool> or "
                "mcp__<server>__*, by the server's configured name (one whose name holds "
                "'__' or ends in '_', or a tool whose name holds '__' or starts with '_', "
                "cannot be named)"
            )
        if pattern != MCP_ANY:
            raise InvalidPattern(f"{pattern!r}: an MCP tool's rule takes the pattern '*'")
    else:
        raise InvalidPattern(
            f"no rules for tool {tool!r} (bash, edit_file, write_file, mcp__<server>__<tool>)"
        )


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
    mcp: tuple[str, str] | None = None,
) -> Judgement:
    """The rules' verdict on a call: ``deny``, ``ask``, ``allow`` or ``none`` (no say).
    ``mcp``: the call is the tool ``mcp[1]`` of the server configured as ``mcp[0]`` (without
    it, an ``mcp__`` name is read as a rule names a tool)."""
    if preview is None:
        return Judgement("none")
    if mcp is not None or is_mcp_tool(tool):
        return _judge_mcp(mcp_identity(tool, mcp), rules)
    mine = [r for r in rules if r.tool == tool]
    if tool in COMMAND_TOOLS and isinstance(preview, CommandPreview):
        # Parsed even without rules: the sandbox runs unasked only what could be read.
        return _judge_command(preview.command, mine, roots)
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


def _judge_command(command: str, rules: Sequence[Rule], roots: Sequence[Path]) -> Judgement:
    parsed = parse_command(command)
    if parsed is None:
        return Judgement("none", unreadable=True)  # asked (no rule can be sure of it)
    compiled = [(r, p) for r in rules if (p := _command_pattern(r)) is not None]
    reached = [reach(c) for c in parsed.commands]
    runs = [run for r in reached for run in r.runs]
    hidden = any(r.hidden is not None for r in reached)
    limiting = [(r, p) for r, p in compiled if r.decision in ("deny", "ask")]
    for decision in ("deny", "ask"):
        for named, pattern in limiting:
            if named.decision == decision and any(pattern.hits(run) == "yes" for run in runs):
                return Judgement(decision, (named,))
    for named, pattern in limiting:  # it may be what a deny or an ask names: the user decides
        if hidden or any(pattern.hits(run) == "maybe" for run in runs):
            return Judgement("ask", (named,))
    if parsed.uncovered or hidden:
        return Judgement("none")
    # A command changing the shell (`cd`) makes the built-ins' path checks meaningless.
    shell_changed = any(
        run.argv[0] is WILD or program_name(run.argv[0]) in SHELL_STATE for run in runs
    )
    used: list[Rule] = []
    for cmd, cmd_reach in zip(parsed.commands, reached, strict=True):
        rule = next(
            (
                r
                for r, p in compiled
                if r.decision == "allow"
                and not (p.builtin and shell_changed)
                and p.allows(cmd, cmd_reach, roots)
            ),
            None,
        )
        if rule is None:
            return Judgement("none")
        if rule not in used:
            used.append(rule)
    return Judgement("allow", tuple(used))


def mcp_identity(tool: str, mcp: tuple[str, str] | None) -> tuple[str, str] | None:
    """The server and tool a call is of: ``mcp`` when given (what the registry gives);
    else, for a caller with only an ``mcp__`` name, the one tool it names as a rule would
    (None for any other name)."""
    if mcp is not None or not is_mcp_tool(tool):
        return mcp
    named = mcp_named(tool)
    return None if named is None or named[1] == MCP_ANY else named


def _judge_mcp(mcp: tuple[str, str] | None, rules: Sequence[Rule]) -> Judgement:
    """An MCP call (its server's and its tool's names) against the rules naming its tool or
    its server's ``mcp__server__*``: deny first, then ask, then allow."""
    if mcp is None:  # not one tool of one server: no rule names it
        return Judgement("none")
    server, name = mcp
    matching = [r for r in rules if r.pattern == MCP_ANY and mcp_name_covers(r.tool, server, name)]
    for decision in ("deny", "ask", "allow"):
        found = next((r for r in matching if r.decision == decision), None)
        if found is not None:
            return Judgement(decision, (found,))
    return Judgement("none")


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
