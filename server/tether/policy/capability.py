"""What a call may do, and the one check of a read-only session.

Every tool that needs approval says what its calls may do beyond reading (``Tool.effect``):

- ``none``: nothing — an MCP tool its server annotates ``readOnlyHint: true`` and not
  ``destructiveHint: true`` (the server's word: see below);
- ``command``: runs a shell command, which only reads when the built-in read-only command
  rules (``builtin.py``: allow-listed options, paths confined to the workspace) allow it —
  and runs it as they do, git's program-running settings off;
- ``changes``: may change files or another program's state (the edit tools, every other MCP
  tool, and any tool that does not say).

A read-only session (``ApprovalPolicy.read_only``) refuses a call that may change anything
before any rule, ``autoApprove``, "allow always" or trusted hint is consulted: whatever the
tool is called, whoever provides it, whatever the user allowed. Tools that need no approval
(reads, searches, the plan) change nothing by the registry's contract.

An MCP server's annotations are claims by that server's code. Tether cannot see what a tool
does; it believes ``readOnlyHint`` for this check because the server is one the user
configured (or the user's editor passed), so a server that lies is the user's choice of
server — the same trust as running it at all. ``destructiveHint: true`` outweighs
``readOnlyHint`` (a server contradicting itself is taken at its worse word).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from tether_protocol import CommandPreview, DiffPreview, Preview

from .builtin import BUILTIN_RULES
from .match import COMMAND_TOOLS, judge

Effect = Literal["none", "command", "changes"]
"""What a call may do beyond reading (see the module docstring)."""

READ_ONLY_ADVICE = "Tell the user what you would do; they can switch the session's mode."


def proven_read(tool: str, preview: Preview | None, roots: Sequence[Path]) -> bool:
    """The built-in read-only command rules allow this command (whether or not the user
    turned them on as allows): every part of it only reads inside the workspace."""
    if tool not in COMMAND_TOOLS or not isinstance(preview, CommandPreview):
        return False
    return judge(tool, preview, BUILTIN_RULES, roots).outcome == "allow"


def read_only_refusal(
    tool: str,
    effect: Effect,
    preview: Preview | None,
    roots: Sequence[Path],
    note: str | None = None,
) -> str | None:
    """Why the call may not run in a read-only session (None: it only reads). ``note``: the
    tool's own words for what it may change (an MCP tool's annotations)."""
    if effect == "none":
        return None
    if effect == "command" and proven_read(tool, preview, roots):
        return None
    if effect == "command":
        why = "the command is not one the built-in read-only rules allow (ls, cat, git log, …)"
    elif note is not None:
        why = note
    elif isinstance(preview, DiffPreview):
        why = f"{tool} changes files"
    else:
        why = f"{tool} may change something"
    return f"the session is read-only, and {why}"
