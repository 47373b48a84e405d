"""The rules an approval offers for "allow always": the exact call and, rarely, a wider one.

``suggest_patterns`` is what the server sends in ``agent/approve`` (``suggestedPatterns``),
so every client offers the same rules: for ``bash`` the exact command (its words) and, only
for a program on the ``WIDER_RULES`` allow-list, ``program *``; for an edit the file and its
folder's files of its kind (``src/*.py``).

A wider rule lets any arguments through at one keypress, so it is offered only for programs
that, whatever their arguments, run no program, change no file and print no file's content.
Everything else — launchers, interpreters, runners, package managers, build tools, test
runners, git — is offered exactly as shown: ``uv run *`` would allow ``uv run sh -c '…'``.
Computed from the parsed command, never its text, and checked against the matcher, so a rule
is offered only when the server would store it (it allows the very call shown).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from tether_protocol import CommandPreview, DiffPreview, Preview, Rule

from .match import COMMAND_TOOLS, MCP_ANY, PATH_TOOLS, is_mcp_tool, judge, relative_path
from .shellparse import WILD, parse_command

WIDER_RULES: Mapping[str, str] = {
    "echo": "prints its arguments (a redirection is matched on its own, never under the *)",
    "pwd": "prints the folder it runs in",
    "true": "does nothing",
    "false": "does nothing",
    "sleep": "waits, within the command's timeout",
    "ls": "lists names and attributes: no option of ls runs a program, writes or shows "
    "a file's content",
    "which": "prints where programs are on PATH",
    "uname": "prints the system's name",
    "whoami": "prints the user's name",
    "id": "prints the user's and groups' ids",
    "nproc": "prints the number of processors",
    "basename": "prints part of its argument, a string",
    "dirname": "prints part of its argument, a string",
}
"""Programs whose ``program *`` rule is offered, each with why any arguments are harmless.

Kept out, and why (docs/approvals.md has the table): ``pytest`` (``--basetemp`` empties the
folder named, ``-p`` imports any module, ``conftest.py`` runs), ``git commit`` (hooks run;
``-F`` puts any file in history), ``make`` (``make CC='sh -c …'``), ``npm test``/``npm run``
(``--script-shell``, ``--node-options``), ``cargo``/``go`` (``--config`` runners,
``-exec``, ``-toolexec``), ``python -m`` (any module), ``printf`` (``-v PATH`` changes what
runs next), ``date``/``wc``/``du`` (``-f``/``--files0-from`` print a file's content in their
errors), ``cat``/``grep`` (the built-in rules already read the workspace; a wider rule would
read outside it)."""


def propose_command_pattern(command: str) -> str | None:
    """The wider ``bash`` allow pattern to offer for ``command`` (None: only the exact one)."""
    parsed = parse_command(command)
    if parsed is None or parsed.uncovered or len(parsed.commands) != 1:
        return None
    [cmd] = parsed.commands
    if cmd.assignments or cmd.redirections or cmd.argv[0] is WILD:
        return None
    program = cmd.argv[0]
    if program not in WIDER_RULES:
        return None
    pattern = f"{shlex.quote(program)} *"
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
    elif is_mcp_tool(tool):
        candidates = [MCP_ANY]  # this tool of this server, with any arguments
    else:
        return []
    offered: list[str] = []
    for pattern in candidates:
        rule = Rule(tool=tool, pattern=pattern, decision="allow", scope="session")
        if pattern not in offered and judge(tool, preview, [rule], roots).outcome == "allow":
            offered.append(pattern)
    return offered
