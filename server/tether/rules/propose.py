"""The rule a client offers beside "allow always (this exact command)": ``pytest *``.

Computed from the parsed command, never its text: one simple command, with no assignment,
redirection or substitution, whose program (and subcommand, for the tools that have them:
``git commit *``, ``python -m pytest *``) is kept and whose further arguments become the
``*``. The proposal is checked against the matcher, so it is offered only when the server
would store it (it allows the very call shown).
"""

from __future__ import annotations

import re
import shlex

from tether_protocol import CommandPreview, Rule

from .match import LAUNCHERS, judge
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
    kept = 1
    if PYTHON.fullmatch(program) and len(argv) > 2 and argv[1] == "-m":
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
