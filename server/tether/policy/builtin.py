"""The built-in read-only command rules (on unless the user config turns them off).

They allow commands that only read, and only inside the workspace:

- every option must be on the command's allow-list (``builtin_options.py``): none that runs a
  program, writes, follows links while walking, or never ends; an option not listed — an
  abbreviation included — is asked;
- every path (an operand, or an option's value such as ``grep -f FILE``) is held to
  ``read_file``'s confinement: resolved from the workspace root, links and ``..`` followed,
  it must land in a workspace folder (``cat link`` where ``link`` points at ``~/.ssh/id_rsa``
  is asked); a word the shell computes (``$X``, ``~``, ``*.py``) is asked;
- no path is a place of secrets, whatever the workspace root (``workspace/personal.py``:
  ``~/.ssh``, ``~/.gnupg``, credentials files, shell histories, ``/proc/*/environ``, devices):
  with a root of ``/`` or the home folder, ``cat ~/.ssh/id_rsa`` is still asked;
- a recursive walk (``grep -r``, ``rg``, ``ls -R``) starts inside and does not follow the
  links it meets (``grep -R``, ``rg -L`` and ``ls -L`` are not allowed); a ``grep`` or ``rg``
  whose folder holds a place of secrets (``grep -r x .`` in the home folder) is asked;
- built-in git runs only for a repository of the workspace: a ``.git`` found above every
  workspace folder (a folder inside another repository, a ``$HOME`` kept in git) is asked;
- none of it holds after a command that changes the shell (``cd``, ``export``, …) earlier in
  the same line, so such a line is not allowed by the built-ins at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from tether_protocol import Rule

from ..errors import ToolError
from ..workspace.folders import confined_path
from ..workspace.personal import holds_secrets, secret_reason
from ..workspace.places import UserPlaces, user_places
from .builtin_options import READ_ONLY, ReadOptions
from .shellparse import WILD, SimpleCommand, Word

BUILTIN_RULES: tuple[Rule, ...] = tuple(
    Rule(tool="bash", pattern=p, decision="allow", scope="builtin") for p in READ_ONLY
)

SHELL_STATE = frozenset(
    {
        *("cd", "pushd", "popd", "export", "declare", "typeset", "local", "readonly", "set"),
        *("shopt", "alias", "unalias", "source", ".", "enable", "hash", "unset", "umask"),
        *("ulimit", "trap", "read", "mapfile", "readarray", "getopts", "let", "printf", "eval"),
        *("exec", "builtin", "command", "shift", "compgen", "complete", "fc"),
    }
)
"""bash builtins that change what a later command of the line reads or runs: the folder,
variables (``printf -v PATH``), options, aliases, the command lookup."""
NUMBER = re.compile(r"-\d+")
WALKS = frozenset({"grep *", "rg *"})
"""Built-ins that read the files of a folder they are given (or the current one)."""


def allowed_read(pattern: str, command: SimpleCommand, roots: Sequence[Path]) -> bool:
    """``command``, matched by the built-in ``pattern``, only reads inside ``roots`` (the
    first being the folder it runs in)."""
    spec = READ_ONLY.get(pattern)
    if spec is None or not roots:
        return False
    fixed = len(pattern.removesuffix(" *").split())
    paths = read_paths(command.argv[fixed:], spec)
    if paths is None:
        return False
    if command.argv[0] == "git":
        if not _repository_inside(roots):
            return False
        # ``git show HEAD:.ssh/id_rsa`` reads that path of the repository
        paths = [*paths, *(p.partition(":")[2] for p in paths if ":" in p)]
    if pattern in WALKS and not paths:
        paths = ["."]
    places = user_places()
    return all(_readable(path, roots, places, walks=pattern in WALKS) for path in paths)


def read_paths(words: Sequence[Word], spec: ReadOptions) -> list[str] | None:
    """The paths ``words`` (the arguments) name, or None when an option is not allowed or a
    word is computed by the shell."""
    paths: list[str] = []
    operands: list[str] = []
    pattern_given = False
    ended = False
    i = 0
    while i < len(words):
        word = words[i]
        if word is WILD:
            return None
        i += 1
        if ended or word == "-" or not word.startswith("-"):
            operands.append(word)
            continue
        if word == "--":
            ended = True
            continue
        if spec.numeric and NUMBER.fullmatch(word):
            continue
        taken = _option(word, words, i, spec)
        if taken is None:
            return None
        name, value, used = taken
        i += used
        if value is not None:
            check = spec.checks.get(name)
            if check is not None and not check(value):
                return None
            if name in spec.path_values:
                paths.append(value)
        pattern_given |= name in spec.pattern_options
    if spec.pattern_first and not pattern_given and operands:
        operands = operands[1:]
    return paths + [o for o in operands if o != "-"]


def _option(
    word: str, words: Sequence[Word], i: int, spec: ReadOptions
) -> tuple[str, str | None, int] | None:
    """The option ``word`` as ``(name, value, words used after it)``; None: not allowed.
    In a short cluster (``-inr``) the last option with a value names it."""
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        if name in spec.long_flags and not eq:
            return name, None, 0
        if name in spec.long_optional:
            return name, value if eq else None, 0
        if name in spec.long_valued:
            if eq:
                return name, value, 0
            return _next(name, words, i)
        return None
    found = ""
    for j, letter in enumerate(word[1:], 1):
        if letter in spec.flags:
            found = found or f"-{letter}"
            continue
        name = f"-{letter}"
        if letter in spec.valued:
            rest = word[j + 1 :]
            return (name, rest, 0) if rest else _next(name, words, i)
        if letter in spec.optional:
            return name, word[j + 1 :] or None, 0
        return None
    return found, None, 0


def _next(name: str, words: Sequence[Word], i: int) -> tuple[str, str, int] | None:
    """The option ``name``'s value in the next word (None: missing or computed)."""
    if i >= len(words) or words[i] is WILD:
        return None
    value = words[i]
    assert value is not None
    return name, value, 1


def _readable(path: str, roots: Sequence[Path], places: UserPlaces, *, walks: bool) -> bool:
    """``path`` lands in a workspace folder and is no place of secrets (``walks``: nor
    holds one, for a command that reads what a folder holds)."""
    try:
        resolved = confined_path(roots, path)
    except ToolError:
        return False
    if secret_reason(resolved, places) is not None:
        return False
    return not (walks and holds_secrets(resolved, places))


def _repository_inside(roots: Sequence[Path]) -> bool:
    """The repository git finds from the first root is inside a workspace folder (or none)."""
    start = roots[0]
    for folder in (start, *start.parents):
        if (folder / ".git").exists() or (folder / ".git").is_symlink():
            return any(folder.is_relative_to(root) for root in roots)
    return True
