"""The rules an approval offers for "allow always": the exact call and a wider one.

``suggest_patterns`` is what the server sends in ``agent/approve`` (``suggestedPatterns``),
so every client offers the same rules: for ``bash`` the exact command (its words) and
``pytest *``; for an edit the file and its folder's files of its kind (``src/*.py``).

Computed from the parsed command, never its text: one simple command, with no assignment,
redirection or substitution, whose program (and subcommand, for the tools that have them:
``git commit *``, ``python -m pytest *``) is kept and whose further arguments become the
``*``. The proposal is checked against the matcher, so it is offered only when the server
would store it (it allows the very call shown).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from tether_protocol import CommandPreview, DiffPreview, Preview, Rule

from .match import COMMAND_TOOLS, LAUNCHERS, PATH_TOOLS, judge, relative_path
from .shellparse import WILD, parse_command

SUBCOMMANDS = frozenset(
    {
        *("git", "gh", "npm", "pnpm", "yarn", "bun", "npx", "cargo", "go", "uv", "pip", "pip3"),
        *("poetry", "hatch", "pdm", "docker", "podman", "kubectl", "make", "just", "dotnet"),
        *("mvn", "gradle", "deno", "rustup", "tox", "nox", "brew", "apt", "conda", "mix"),
    }
)
"""Programs whose first argument names what they do: the rule keeps it."""

NEVER_WIDENED = frozenset(
    {"rm", "rmdir", "dd", "shred", "mkfs", "chmod", "chown", "kill", "killall", "pkill"}
)
"""Programs no one should allow with any arguments at a keypress: only the exact command."""

INTERPRETERS = frozenset(
    {
        "node",
        "nodejs",
        "perl",
        "ruby",
        "php",
        "lua",
        "luajit",
        "Rscript",
        "tclsh",
        "pwsh",
        "osascript",
    }
)
"""Programs that run code given in their arguments (``node -e``): ``node *`` would allow any
program, so only the exact command is offered (Python: only ``python -m module *``)."""

PYTHON = re.compile(r"python(3(\.\d+)?)?")
SUBCOMMAND = re.compile(r"[A-Za-z][\w.:-]*")


def propose_command_pattern(command: str) -> str | None:
    """The ``bash`` allow pattern to offer for ``command`` (None: only the exact command)."""
    parsed = parse_command(command)
    if parsed is None or parsed.uncovered or len(parsed.commands) != 1:
        return None
    [cmd] = parsed.commands
    argv = cmd.argv
    if cmd.assignments or cmd.redirections or not argv or argv[0] is WILD:
        return None
    program = argv[0]
    if program in LAUNCHERS or program in NEVER_WIDENED or "/" in program:
        return None
    if program in INTERPRETERS:
        return None
    kept = 1
    if PYTHON.fullmatch(program):
        if len(argv) <= 2 or argv[1] != "-m":
            return None  # python -c '...', python script.py: code chosen by the arguments
        kept = 3  # python -m pytest: the module is what runs
    elif program in SUBCOMMANDS and len(argv) > 1:
        kept = 2
    words = argv[:kept]
    if any(w is WILD for w in words) or (kept > 1 and not SUBCOMMAND.fullmatch(words[-1] or "")):
        return None
    pattern = " ".join(shlex.quote(w) for w in words if w is not None) + " *"
    rule = Rule(tool="bash", pattern=pattern, decision="allow", scope="project")
    preview = CommandPreview(command=command, cwd=".")
    if judge("bash", preview, [rule], []).outcome != "allow":
        return None
    return pattern


PLAIN_WORD = re.compile(r"[\w./:=@%+,-]+")
"""A word a pattern holds as it is (no quoting, expansion, glob or operator)."""
GLOB_CHARS = re.compile(r"[*?\[\]{}!\\\s]")
PLAIN_EXTENSION = re.compile(r"\.[\w-]+")


def exact_command_pattern(command: str) -> str | None:
    """The ``bash`` pattern allowing exactly ``command`` (its words, no ``*``), or None when
    a pattern cannot say it (quotes, globs, operators, expansions, assignments)."""
    words = command.split()
    if not words or "=" in words[0] or not all(PLAIN_WORD.fullmatch(w) for w in words):
        return None
    return " ".join(words)


def file_patterns(rel: str) -> list[str]:
    """Edit patterns for a workspace-relative file: the file, then its folder's files of its
    kind (``src/*.py``); none for a name a glob cannot say."""
    if GLOB_CHARS.search(rel):
        return []
    folder, name = posixpath.split(rel)
    ext = posixpath.splitext(name)[1]
    if name.startswith(".") or not PLAIN_EXTENSION.fullmatch(ext or "-"):
        return [rel]
    return [rel, posixpath.join(folder, "*" + ext)]


def suggest_patterns(tool: str, preview: Preview | None, roots: Sequence[Path]) -> list[str]:
    """The allow patterns to offer for this call, narrowest first; each allows the call."""
    if tool in COMMAND_TOOLS and isinstance(preview, CommandPreview):
        found = [exact_command_pattern(preview.command), propose_command_pattern(preview.command)]
        candidates = [p for p in found if p is not None]
    elif tool in PATH_TOOLS and isinstance(preview, DiffPreview):
        rel = relative_path(preview, roots)
        candidates = [] if rel is None else file_patterns(rel)
    else:
        return []
    offered: list[str] = []
    for pattern in candidates:
        rule = Rule(tool=tool, pattern=pattern, decision="allow", scope="session")
        if pattern not in offered and judge(tool, preview, [rule], roots).outcome == "allow":
            offered.append(pattern)
    return offered
