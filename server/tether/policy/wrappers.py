"""What a simple command runs: itself, and every command a wrapper in it runs.

``env rm x``, ``nice -n 5 rm x``, ``sudo -u root rm x``, ``xargs rm``, ``sh -c 'rm x'``,
``git -C . push``: the command a deny rule names hides behind a wrapper. ``reach`` unwraps the
wrappers it knows option by option (``WRAPPERS``), parses ``sh -c``/``bash -c``/``eval``
strings again (``MAX_DEPTH`` levels), and scans the programs that run a command of their own
(``RUNNERS``: ``uv run``, ``npx``, ``docker exec``, ``ssh``, …) loosely: every word after them
may start the command they run. What it cannot see through — an option it does not know, a
computed word where the options or the command are, a shell reading its commands from its
input, a string that does not parse — makes the reach ``hidden``: a deny rule may be behind
it, so the command is asked, and no allow rule allows it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .shellparse import WILD, SimpleCommand, Word, parse_command
from .wrapper_options import (
    GIT_GLOBAL,
    GIT_HIDING,
    GIT_RUNNERS,
    HIDING,
    RUNNERS,
    SHELL_LONG,
    SHELL_LONG_VALUED,
    SHELL_SHORT,
    SHELLS,
    STDIN_FILES,
    WRAPPER_OPTIONS,
    Options,
)

MAX_DEPTH = 4
"""Wrappers and strings read through, nested, before the rest counts as hidden."""
MAX_LOOSE_WORDS = 64
"""Words of a runner's command line scanned loosely; beyond, the rest counts as hidden."""
MAX_RUNS = 512
"""Commands one simple command may be found to run; beyond, the rest counts as hidden."""
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
SCRIPT_CHARS = re.compile(r"[\s;&|()<>`$]")
"""A word holding one of these may be a command line given as one string."""


@dataclass(frozen=True, slots=True)
class Run:
    """A command the simple command may run: its words, as far as they are known."""

    argv: tuple[Word, ...]
    open: bool = False
    """More words, unknown here, may follow (``xargs`` appends what it reads)."""
    loose: bool = False
    """Found by a loose scan: it may be the command run, or only an argument."""


@dataclass(frozen=True, slots=True)
class Reach:
    """Every command one simple command may run, the first being the command itself."""

    runs: tuple[Run, ...]
    hidden: str | None = None
    """Why a command it runs cannot be seen (None: none is hidden)."""

    @property
    def wraps(self) -> bool:
        """It runs another command, or may: a ``*`` allow rule never covers it."""
        return len(self.runs) > 1 or self.hidden is not None


@dataclass(slots=True)
class _Found:
    runs: list[Run] = field(default_factory=list)
    hidden: str | None = None

    def hide(self, why: str) -> None:
        self.hidden = self.hidden or why


def reach(command: SimpleCommand) -> Reach:
    """The commands ``command`` runs, through every wrapper known here."""
    found = _Found()
    _unwrap(Run(command.argv), 0, found)
    return Reach(tuple(dict.fromkeys(found.runs)), found.hidden)


def program_name(word: str) -> str:
    """The program a command word names (``/usr/bin/env`` is ``env``)."""
    return posixpath.basename(word)


def _unwrap(run: Run, depth: int, found: _Found) -> None:
    if len(found.runs) >= MAX_RUNS:
        found.hide(f"more than {MAX_RUNS} commands in one")
        return
    found.runs.append(run)
    argv = run.argv
    if not argv or argv[0] is WILD:
        return  # a computed program: every rule's program may be it (the matcher says maybe)
    name = program_name(argv[0])
    if name in HIDING:
        found.hide(f"{name!r} runs commands the rules do not read")
        return
    unwrapper = UNWRAPPERS.get(name)
    runner = name in RUNNERS or (len(argv) > 1 and (name, argv[1]) in RUNNERS)
    if unwrapper is None and not runner:
        return
    if depth >= MAX_DEPTH:
        found.hide(f"wrappers nested deeper than {MAX_DEPTH}")
        return
    if unwrapper is not None:
        unwrapper(run, depth + 1, found)
    else:
        _scan_loosely(argv, 1, run, depth + 1, found)


def _inner(
    run: Run, argv: Sequence[Word], depth: int, found: _Found, *, open: bool = False
) -> None:
    """The wrapper runs ``argv`` (nothing when it is empty)."""
    if argv:
        _unwrap(Run(tuple(argv), run.open or open, run.loose), depth, found)


def _script(run: Run, text: Word, depth: int, found: _Found) -> None:
    """The wrapper runs ``text`` as a command line (``sh -c``, ``eval``)."""
    if text is WILD:
        found.hide("a command string computed when it runs")
        return
    parsed = parse_command(text) if text.strip() else None
    if parsed is None:
        if text.strip():
            found.hide(f"a command string the rules cannot read: {text[:80]!r}")
        return
    for cmd in parsed.commands:
        _unwrap(Run(cmd.argv, loose=run.loose), depth, found)


def _scan_loosely(argv: Sequence[Word], start: int, run: Run, depth: int, found: _Found) -> None:
    """Every word from ``start`` on may begin the command run, and every word that looks like
    a command line may be one (a runner's own options are not known here)."""
    words = argv[start:]
    if len(words) > MAX_LOOSE_WORDS:
        found.hide(f"more than {MAX_LOOSE_WORDS} words after {argv[0]!r}")
        return
    loose = Run(run.argv, run.open, loose=True)
    for i, word in enumerate(words):
        if word is WILD:
            found.hide(f"a computed word in what {argv[0]!r} runs")
            return
        if word.startswith("-"):
            continue
        _unwrap(Run(tuple(words[i:]), run.open, loose=True), depth, found)
        if SCRIPT_CHARS.search(word):
            _script(loose, word, depth, found)


def _options(argv: Sequence[Word], start: int, spec: Options, found: _Found) -> int | None:
    """The index of the first word after ``argv[start:]``'s options (as ``spec`` knows
    them), or None (and the reach hidden) when one is not known or is computed."""
    i = start
    while i < len(argv):
        word = argv[i]
        if word is WILD or any(w is WILD for w in argv[start:i]):  # or a value skipped
            found.hide(f"a computed word among {argv[0]!r}'s options")
            return None
        if word == "--":
            return i + 1
        if word == "-" and spec.dash:
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            return i
        if spec.numeric and re.fullmatch(r"--?\d+", word):
            i += 1
            continue
        if word.startswith("--"):
            name, eq, _ = word.partition("=")
            if (name in spec.long_flags and not eq) or name in spec.long_optional:
                i += 1
            elif name in spec.long_valued:
                i += 1 if eq else 2
            else:
                found.hide(f"{argv[0]!r} option {name!r} is not known to the rules")
                return None
            continue
        i = _short_cluster(argv, i, spec, found)
        if i < 0:
            return None
    if any(w is WILD for w in argv[start:i]):
        found.hide(f"a computed word among {argv[0]!r}'s options")
        return None
    return i


def _short_cluster(argv: Sequence[Word], i: int, spec: Options, found: _Found) -> int:
    """The index after the short option cluster ``argv[i]`` (and its value); -1: unknown."""
    word = argv[i]
    assert word is not None
    for j, letter in enumerate(word[1:], 1):
        if letter in spec.flags:
            continue
        if letter in spec.valued:
            return i + 1 if j + 1 < len(word) else i + 2
        if letter in spec.optional:
            return i + 1
        found.hide(f"{argv[0]!r} option -{letter} is not known to the rules")
        return -1
    return i + 1


def _seen(argv: Sequence[Word], start: int, stop: int, letters: str, longs: frozenset[str]) -> bool:
    """One of the options (short ``letters``, or ``longs``) is among ``argv[start:stop]``."""
    for word in argv[start:stop]:
        if word is None or not word.startswith("-") or word == "--":
            continue
        if word.startswith("--"):
            if word.partition("=")[0] in longs:
                return True
        elif any(c in letters for c in word[1:]):
            return True
    return False


def _plain_wrapper(run: Run, depth: int, found: _Found) -> None:
    """``nice``, ``nohup``, ``stdbuf``, ``setsid``, ``exec``, ``time``, ``builtin``, …: options,
    then the command."""
    argv = run.argv
    spec = WRAPPER_OPTIONS[program_name(str(argv[0]))]
    at = _options(argv, 1, spec, found)
    if at is None:
        return
    if spec.quiet and _seen(argv, 1, at, spec.quiet, spec.quiet_long):
        return  # `command -v rm`, `ionice -p 1`: names a program or a process, runs nothing
    if spec.operands:  # `timeout 5 rm`: a duration first
        if len(argv) < at + spec.operands or any(w is WILD for w in argv[at : at + spec.operands]):
            found.hide(f"{argv[0]!r} without its operands, or with computed ones")
            return
        at += spec.operands
    if spec.assignments:  # `env A=1 rm`, `sudo A=1 rm`
        while at < len(argv) and argv[at] is not WILD and ASSIGNMENT.match(str(argv[at])):
            at += 1
        if at < len(argv) and argv[at] is WILD:
            found.hide(f"a computed word where {argv[0]!r} takes its command")
            return
    rest = argv[at:]
    if spec.stdin and not rest:
        found.hide(f"{argv[0]!r} runs what it reads")
        return
    _inner(run, rest or spec.default, depth, found, open=spec.appends)


def _shell(run: Run, depth: int, found: _Found) -> None:
    """``sh``/``bash``/``dash``: ``-c STRING`` is parsed again; a shell reading its input hides
    what it runs; a script file is a program like any other."""
    argv = run.argv
    command_string = reads_input = False
    i = 1
    while i < len(argv):
        word = argv[i]
        if word is WILD:
            found.hide(f"a computed word among {argv[0]!r}'s options")
            return
        if word in ("-", "--"):
            i += 1
            break
        if word.startswith("--"):
            if word in SHELL_LONG:
                i += 1
                continue
            if word in SHELL_LONG_VALUED:
                i += 2
                continue
            found.hide(f"{argv[0]!r} option {word!r} is not known to the rules")
            return
        if not word.startswith(("-", "+")) or len(word) == 1:
            break
        extra = 0
        for letter in word[1:]:
            if letter == "c":
                command_string = True
            elif letter == "s":
                reads_input = True
            elif letter in "oO":
                extra += 1  # `-o pipefail`: the option's name is the next word
            elif letter not in SHELL_SHORT:
                found.hide(f"{argv[0]!r} option -{letter} is not known to the rules")
                return
        i += 1 + extra
    operands = argv[i:]
    if command_string:
        if operands:
            _script(run, operands[0], depth, found)
    elif reads_input or not operands:
        found.hide(f"{argv[0]!r} runs the commands it reads from its input")
    else:
        _script_file(argv, operands[0], found)


def _script_file(argv: Sequence[Word], script: Word, found: _Found) -> None:
    """A script file is a program like any other, unless it is the input or computed."""
    if script is WILD or script in STDIN_FILES:
        found.hide(f"{argv[0]!r} runs a script computed when it runs, or its input")


def _source(run: Run, depth: int, found: _Found) -> None:
    """``source FILE`` (``. FILE``): a script, in this shell."""
    if len(run.argv) < 2:
        return
    _script_file(run.argv, run.argv[1], found)


def _eval(run: Run, depth: int, found: _Found) -> None:
    words = run.argv[1:]
    if any(w is WILD for w in words):
        found.hide("eval of a computed word")
    elif words:
        _script(run, " ".join(str(w) for w in words), depth, found)


def _find(run: Run, depth: int, found: _Found) -> None:
    """``find … -exec CMD {} ;`` (and ``-execdir``, ``-ok``, ``-okdir``) runs CMD."""
    argv = run.argv
    i = 1
    while i < len(argv):
        word = argv[i]
        if word is WILD:
            found.hide("a computed word in find's expression")
            return
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(argv)) if argv[j] in (";", "+")), None)
            if end is None:
                found.hide(f"find {word} without its ';' or '+'")
                return
            _inner(run, argv[i + 1 : end], depth, found)
            i = end
        i += 1


def _git(run: Run, depth: int, found: _Found) -> None:
    """git's global options (``-C``, ``-c``, ``--git-dir``, …) before its subcommand; a
    subcommand that runs commands of its own (``rebase -x``, ``bisect run``) is scanned."""
    argv = run.argv
    at = _options(argv, 1, GIT_GLOBAL, found)
    if at is None:
        return
    if _seen(argv, 1, at, "c", GIT_HIDING):
        found.hide("git -c, --config-env or --exec-path: configuration that may run programs")
    if at > 1:
        _unwrap(Run(("git", *argv[at:]), run.open, run.loose), depth, found)
    elif at < len(argv) and argv[at] in GIT_RUNNERS:
        _scan_loosely(argv, at + 1, run, depth, found)


def _busybox(run: Run, depth: int, found: _Found) -> None:
    rest = run.argv[1:]
    if rest and (rest[0] is WILD or str(rest[0]).startswith("-")):
        found.hide("busybox with an option or a computed applet")
    else:
        _inner(run, rest, depth, found)


Unwrapper = Callable[[Run, int, _Found], None]

UNWRAPPERS: dict[str, Unwrapper] = {
    **dict.fromkeys(WRAPPER_OPTIONS, _plain_wrapper),
    **dict.fromkeys(SHELLS, _shell),
    "eval": _eval,
    "find": _find,
    "git": _git,
    "busybox": _busybox,
    "source": _source,
    ".": _source,
}
"""The wrappers read through option by option, by program name."""
