""".gitignore rules and wildmatch globs, matched the way git (and ripgrep) match them.

Written here rather than taken from pathspec: a walk must decide whether a *folder* is
ignored before descending into it, and pathspec's GitIgnoreSpec decides per file (it got
idioms such as ``*`` / ``!*/`` / ``!*.py`` wrong). ``tests/unit/test_workspace.py``
compares these rules with ``git ls-files --others --exclude-standard``.

The rules come from whoever wrote the repository, so matching them must stay cheap whatever
they say: ``compile_glob`` gives Python's ``re`` only regexes it cannot backtrack badly on
(one star, no alternatives), and RE2 (linear time) the rest, such as ``*a*a*a*a*a*a*!``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..text.linear_regex import LinearRegex, LinearRegexError, backtracking_free
from ..text.model import split_lines

__all__ = [
    "IgnoreChain",
    "IgnoreRule",
    "compile_glob",
    "is_ignored_by",
    "parse_gitignore",
    "wildmatch_regex",
]

IgnoreChain = tuple[tuple[Path, tuple["IgnoreRule", ...]], ...]
"""The rules in force at a folder: each .gitignore from the root down, with its folder."""


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One line of a ``.gitignore``, as git reads it."""

    fullmatch: Callable[[str], bool]  # compile_glob's matcher of the pattern
    negate: bool  # "!pattern": re-include
    dir_only: bool  # "pattern/": folders only
    anchored: bool  # has a "/" before its end: matched from the .gitignore's folder

    def matches(self, rel: str, name: str, is_dir: bool) -> bool:
        """Whether the entry (path from the rule's folder, its name) matches this rule."""
        if self.dir_only and not is_dir:
            return False
        return self.fullmatch(rel if self.anchored else name)


def parse_gitignore(text: str) -> tuple[IgnoreRule, ...]:
    """The rules of a ``.gitignore`` file (git's syntax; malformed lines are skipped)."""
    rules = []
    for raw in split_lines(text):  # never cut at \f or U+2028: git keeps them in a pattern
        line = _strip_trailing_spaces(raw)
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        line = line[1:] if negate else line
        dir_only = line.endswith("/")
        line = line.rstrip("/") if dir_only else line
        anchored = "/" in line
        line = line.removeprefix("/")
        regex = wildmatch_regex(line, gitignore=True)
        if not line or regex is None:
            continue
        try:
            matcher = compile_glob(regex)
        except LinearRegexError:
            continue  # beyond RE2's memory budget: skipped, like a line git cannot parse
        rules.append(IgnoreRule(matcher, negate, dir_only, anchored))
    return tuple(rules)


def compile_glob(regex: str) -> Callable[[str], bool]:
    """A ``fullmatch`` test for a ``wildmatch_regex`` regex that runs in bounded time.

    Python's ``re`` (faster per call) when the regex cannot backtrack more than
    quadratically, else RE2. ``LinearRegexError`` when RE2 cannot compile it.
    """
    if backtracking_free(regex):
        compiled = re.compile(regex, re.S)
        return lambda text: compiled.fullmatch(text) is not None
    return LinearRegex("(?s)" + regex).fullmatch


def _strip_trailing_spaces(line: str) -> str:
    """Drops trailing spaces, except one escaped with a backslash (git's rule)."""
    end = len(line)
    while end > 0 and line[end - 1] == " ":
        backslashes = len(line[: end - 1]) - len(line[: end - 1].rstrip("\\"))
        if backslashes % 2:
            break
        end -= 1
    return line[:end]


def is_ignored_by(chain: IgnoreChain, path: Path, is_dir: bool) -> bool:
    """Git's verdict for one entry: the innermost .gitignore with a matching rule decides,
    and within a file the last matching rule wins. Callers check the folders above first."""
    for folder, rules in reversed(chain):
        rel = path.relative_to(folder).as_posix()
        for rule in reversed(rules):
            if rule.matches(rel, path.name, is_dir):
                return not rule.negate
    return False


def wildmatch_regex(pattern: str, *, gitignore: bool = False) -> str | None:
    """A regex (for ``fullmatch``) equal to a glob over ``/``-separated paths.

    ``*`` and ``?`` never match ``/``; ``**/`` matches any number of folders, ``/**`` at the
    end anything below; ``[abc]``, ``[a-z]``, ``[!abc]`` are classes; ``\\`` escapes.
    Other ``**`` are like ``*`` under ``gitignore`` (as in git) and match ``/`` otherwise;
    ``{a,b}`` alternatives exist only outside ``gitignore``. None for a malformed gitignore
    pattern (git never matches those); a malformed glob is taken literally.
    """
    try:
        regex, _ = _glob_part(pattern, 0, gitignore=gitignore, nested=False)
    except _Malformed:
        return None
    return regex


class _Malformed(Exception):
    """A ``{`` or ``[`` that is never closed."""


def _glob_part(p: str, i: int, *, gitignore: bool, nested: bool) -> tuple[str, int]:
    alternatives: list[str] = []
    out: list[str] = []
    while i < len(p):
        c = p[i]
        if p.startswith("**", i) and (i == 0 or p[i - 1] == "/") and p[i + 2 : i + 3] in ("/", ""):
            out.append("(?:.*/)?" if p[i + 2 : i + 3] == "/" else ".*")
            i += 3
        elif c == "*":
            stars = len(p[i:]) - len(p[i:].lstrip("*"))
            out.append("[^/]*" if gitignore or stars == 1 else ".*")
            i += stars
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = _class_end(p, i)
            if end < 0:
                if gitignore:
                    raise _Malformed
                out.append(re.escape(c))
                i += 1
                continue
            out.append(_class(p[i + 1 : end]))
            i = end + 1
        elif c == "{" and not gitignore:
            try:
                group, i = _glob_part(p, i + 1, gitignore=False, nested=True)
                out.append(group)
            except _Malformed:
                out.append(re.escape(c))
                i += 1
        elif nested and c == ",":
            alternatives.append("".join(out))
            out = []
            i += 1
        elif nested and c == "}":
            alternatives.append("".join(out))
            return "(?:" + "|".join(alternatives) + ")", i + 1
        elif c == "\\":
            if i + 1 == len(p) and gitignore:
                raise _Malformed
            out.append(re.escape(p[i + 1 : i + 2] or c))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    if nested:
        raise _Malformed
    return "".join(out), i


def _class_end(p: str, start: int) -> int:
    """The index of the ``]`` that closes the class opened at ``start``, or -1."""
    j = start + 1
    if p[j : j + 1] in ("!", "^"):
        j += 1
    if p[j : j + 1] == "]":
        j += 1  # a leading ] is a member, not the end
    while j < len(p) and p[j] != "]":
        if p.startswith("[:", j) and (close := p.find(":]", j + 2)) > 0:
            j = close + 2
            continue
        j += 2 if p[j] == "\\" else 1
    return j if j < len(p) else -1


def _class(body: str) -> str:
    negate = body[:1] in ("!", "^")
    body = body[1:] if negate else body
    members: list[str] = []
    i = 0
    while i < len(body):
        if body.startswith("[:", i) and (close := body.find(":]", i + 2)) > 0:
            if (named := _POSIX_CLASSES.get(body[i + 2 : close])) is None:
                raise _Malformed
            members.append(named)
            i = close + 2
            continue
        c, escaped = body[i], False
        if c == "\\" and i + 1 < len(body):
            c, escaped, i = body[i + 1], True, i + 1
        is_range = c == "-" and not escaped and bool(members) and i < len(body) - 1
        members.append("-" if is_range else re.escape(c))
        i += 1
    inner = "".join(members)
    return f"[^/{inner}]" if negate else f"[{inner}]"


_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": re.escape(string.punctuation),
    "space": " \\t\\n\\v\\f\\r",  # C isspace(), as git; not Unicode spaces
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}
