"""A shell command as the rules see it: its simple commands, each with argv and what else it does.

``bashlex`` parses the command with bash's grammar. Only lists (``;``, ``&&``, ``||``, ``&``),
pipelines (``!`` and the ``time`` keyword in front included) and simple commands are
understood; anything else (``if``, loops, functions, subshells, arithmetic, ANSI-C quoting, a
parse error) makes the command ``None``, and a command the rules cannot read is asked. A word
whose value bash decides at run time (``$VAR``, ``~``, an unquoted glob or brace) is *wild*:
no exact word of a rule matches it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

WILD = None
"""An argv entry bash computes at run time (stands for any word)."""

Word = str | None

HARMLESS_TARGETS = frozenset({"/dev/null"})
SHELL_SPECIALS = frozenset("*?[{~")
DQ_ESCAPES = frozenset('$`"\\\n')
"""What a backslash escapes inside double quotes (elsewhere there it stays)."""
TIME_MARK = "\x01ime"
"""What the ``time`` keyword is rewritten to before parsing (bashlex does not know it): a
word of the same length, so that positions in the text stay right; words are read from the
text itself, where it is still ``time``."""
PIPELINE_STARTS = frozenset(";&|(`!\n")


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple command: its assignments, argv (``WILD`` entries) and redirections."""

    argv: tuple[Word, ...]
    assignments: tuple[str, ...] = ()
    redirections: tuple[str, ...] = ()
    """Redirections that read or write a file, as ``op target`` (``> out``, ``<< EOF``)."""


@dataclass(slots=True)
class ParsedCommand:
    """Every simple command of a command line (those inside substitutions too) and the
    features no rule covers (``substitution``, ``background``, ``heredoc``)."""

    commands: list[SimpleCommand] = field(default_factory=list)
    uncovered: set[str] = field(default_factory=set)


class Unsupported(Exception):
    """A construct the rules do not read."""


def parse_command(text: str) -> ParsedCommand | None:
    """The command line's simple commands, or None when it cannot be read safely."""
    if not text.strip() or "\x00" in text:
        return None
    # Imported on first use: bashlex builds its parser tables at import (~60 ms), which
    # every `tether serve` start would pay before answering initialize.
    import bashlex

    parsed = ParsedCommand()
    try:
        for tree in bashlex.parse(_mark_time_keyword(text)):
            _walk(tree, text, parsed)
    except Unsupported as exc:
        log.debug("command %r not read by rules: %s", text[:200], exc)
        return None
    except Exception as exc:  # any failure of a third-party parser: unreadable, so asked
        log.debug("unreadable command %r: %s: %s", text[:200], type(exc).__name__, exc)
        return None
    return parsed if parsed.commands else None


def _walk(node: Any, text: str, out: ParsedCommand) -> None:
    kind = node.kind
    if kind in ("list", "pipeline"):
        for part in node.parts:
            _walk(part, text, out)
    elif kind == "operator":
        if node.op == "&":
            out.uncovered.add("background")
        elif node.op not in (";", "&&", "||", "\n"):
            raise Unsupported(f"operator {node.op!r}")
    elif kind == "pipe":
        if node.pipe not in ("|", "|&"):
            raise Unsupported(f"pipe {node.pipe!r}")
    elif kind == "command":
        out.commands.append(_simple(node, text, out))
    elif kind == "reservedword" and node.word == "!":
        pass  # `! cmd` only negates the status the pipeline returns
    else:
        raise Unsupported(kind)


def _mark_time_keyword(text: str) -> str:
    """``text`` with each ``time`` keyword (a word at a pipeline's start, outside quotes but
    inside ``$(…)`` and backquotes too) written ``TIME_MARK``; unchanged when it has none, or
    holds the mark's first character itself."""
    if "time" not in text or TIME_MARK[0] in text:
        return text
    out = list(text)
    nested: list[str] = []  # the open `"`, `$(`/`(` and backquote contexts, innermost last
    at_start = True  # only blanks since the text's start or an operator
    i = 0
    while i < len(text):
        c = text[i]
        inside = nested[-1] if nested else ""
        if c == "\\":
            i, at_start = i + 2, False
            continue
        if inside == '"':
            if c == '"':
                nested.pop()
            elif text.startswith("$(", i):
                nested.append("(")
                i, at_start = i + 2, True
                continue
            elif c == "`":
                nested.append("`")
                at_start = True
        elif c == "'":
            close = text.find("'", i + 1)
            i, at_start = (len(text) if close < 0 else close + 1), False
            continue
        elif c == '"':
            nested.append('"')
            at_start = False
        elif c == "`" and inside == "`":
            nested.pop()
        elif c in "`(":
            nested.append(c)
            at_start = True
        elif c == ")" and inside == "(":
            nested.pop()
        elif c in PIPELINE_STARTS:
            at_start = True
        elif c not in " \t":
            end = i + 4
            ends = end >= len(text) or text[end] in " \t\n;&|)`"
            if at_start and text[i:end] == "time" and ends:
                out[i] = TIME_MARK[0]
            at_start = False
        i += 1
    return "".join(out)


def _simple(node: Any, text: str, out: ParsedCommand) -> SimpleCommand:
    argv: list[Word] = []
    assignments: list[str] = []
    redirections: list[str] = []
    for part in node.parts:
        if part.kind == "word":
            argv.append(_word(part, text, out))
        elif part.kind == "assignment":
            value = _word(part, text, out)
            assignments.append(text[part.pos[0] : part.pos[1]] if value is WILD else value)
        elif part.kind == "redirect":
            shown = _redirection(part, text, out)
            if shown is not None:
                redirections.append(shown)
        else:
            raise Unsupported(f"{part.kind} in a command")
    if not argv:
        raise Unsupported("a command of assignments or redirections only")
    return SimpleCommand(tuple(argv), tuple(assignments), tuple(redirections))


def _word(node: Any, text: str, out: ParsedCommand) -> Word:
    """The word's value, or ``WILD``; substitutions inside are read as commands too."""
    wild = substituted = False
    for part in getattr(node, "parts", []) or []:
        if part.kind in ("commandsubstitution", "processsubstitution"):
            out.uncovered.add("substitution")
            _walk(part.command, text, out)
            wild = substituted = True
        elif part.kind in ("parameter", "tilde"):
            if _hides_command(text[part.pos[0] : part.pos[1]]):
                raise Unsupported("a substitution inside a parameter expansion")
            wild = True
        else:
            raise Unsupported(f"{part.kind} in a word")
    raw = text[node.pos[0] : node.pos[1]]
    if not substituted and _hides_command(raw):
        raise Unsupported("a substitution bashlex did not report")
    state = _scan(raw)
    if state == "expansion" and not wild:
        raise Unsupported("an expansion bashlex did not report")
    return WILD if wild or state != "literal" else _literal(raw)


def _literal(raw: str) -> str:
    """The value of a word without expansions, its quotes removed as bash removes them
    (bashlex's own value is wrong for some: ``""'x'`` is ``x``, not ``'x'``)."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(raw):
        c = raw[i]
        if quote == "'":
            if c == "'":
                quote = ""
            else:
                out.append(c)
        elif c == "\\" and i + 1 < len(raw) and (quote == "" or raw[i + 1] in DQ_ESCAPES):
            if raw[i + 1] != "\n":  # a backslash-newline joins lines
                out.append(raw[i + 1])
            i += 1
        elif quote == '"':
            if c == '"':
                quote = ""
            else:
                out.append(c)
        elif c in "'\"":
            quote = c
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _hides_command(raw: str) -> bool:
    """``raw`` may run a command: ``$(``, a backquote, ``<(`` or ``>(`` (quotes aside,
    over-counting is safe: it only makes the command asked)."""
    return any(opener in raw for opener in ("$(", "`", "<(", ">("))


def _scan(raw: str) -> str:
    """``literal``, ``glob`` (an unquoted glob, brace or tilde) or ``expansion`` ($ or `)."""
    quote = ""
    result = "literal"
    brace = False
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and quote != "'":
            i += 2
            continue
        if quote == "'":
            if c == "'":
                quote = ""
        elif c in "$`":
            if c == "$" and raw[i + 1 : i + 2] in ("'", '"') and quote == "":
                raise Unsupported("ANSI-C or locale quoting")
            return "expansion"
        elif quote == '"':
            if c == '"':
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "{":
            brace = True
        elif c in SHELL_SPECIALS and (c != "~" or i == 0 or raw[i - 1] in "=:"):
            result = "glob"  # ``~`` expands only at a word's start or after = and :
        i += 1
    # A brace expands only with a comma or a `..` in it: `{}` (find, xargs -I) is a word.
    return "glob" if brace and ("," in raw or ".." in raw) else result


def _redirection(node: Any, text: str, out: ParsedCommand) -> str | None:
    """``op target`` of a redirection that touches a file; None for a duplicated descriptor
    or ``/dev/null``, which write nothing anywhere."""
    if node.type == "<<" or node.type == "<<-":
        out.uncovered.add("heredoc")  # its body may hold expansions bash runs
    target = node.output
    if isinstance(target, int):
        return None
    if node.type in (">&", "<&") and target.word == "-":
        return None  # closing a descriptor
    word = _word(target, text, out)
    if word is WILD:
        raise Unsupported("a redirection to a computed target")
    if word in HARMLESS_TARGETS and node.type in (">", ">>", "<", ">|", "&>", ">&"):
        return None
    return f"{node.type} {word}"
