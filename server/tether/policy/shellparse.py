"""A shell command as the rules see it: its simple commands, each with argv and what else it does.

``bashlex`` parses the command with bash's grammar. Only lists (``;``, ``&&``, ``||``, ``&``),
pipelines and simple commands are understood; anything else (``if``, loops, functions,
subshells, arithmetic, ANSI-C quoting, a parse error) makes the command ``None``, and a
command the rules cannot read is asked. A word whose value bash decides at run time
(``$VAR``, ``~``, an unquoted glob or brace) is *wild*: no exact word of a rule matches it.
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
        for tree in bashlex.parse(text):
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
    else:
        raise Unsupported(kind)


def _simple(node: Any, text: str, out: ParsedCommand) -> SimpleCommand:
    argv: list[Word] = []
    assignments: list[str] = []
    redirections: list[str] = []
    for part in node.parts:
        if part.kind == "word":
            argv.append(_word(part, text, out))
        elif part.kind == "assignment":
            if _word(part, text, out) is WILD:
                assignments.append(text[part.pos[0] : part.pos[1]])
            else:
                assignments.append(part.word)
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
    return WILD if wild or state != "literal" else str(node.word)


def _hides_command(raw: str) -> bool:
    """``raw`` may run a command: ``$(``, a backquote, ``<(`` or ``>(`` (quotes aside,
    over-counting is safe: it only makes the command asked)."""
    return any(opener in raw for opener in ("$(", "`", "<(", ">("))


def _scan(raw: str) -> str:
    """``literal``, ``glob`` (an unquoted glob, brace or tilde) or ``expansion`` ($ or `)."""
    quote = ""
    result = "literal"
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
        elif c in SHELL_SPECIALS and (c != "~" or i == 0 or raw[i - 1] in "=:"):
            result = "glob"  # ``~`` expands only at a word's start or after = and :
        i += 1
    return result


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
