"""Ask the user in the terminal: a coloured diff or the command, then allow / always / deny."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from tether_protocol import ApproveParams, CommandPreview

from ..textmodel import split_lines
from .render import styled_terminal
from .terminal import TextOut, read_line

PROMPT = "[a] allow  [A] allow always  [d] deny > "
"""The question for an edit ("always": that tool, for this session)."""
ASKED = "[d] deny > "
"""How every question ends (a command's offers more choices before it)."""


def command_prompt(pattern: str | None) -> str:
    """The question for a command: always this exact command, or by the proposed rule."""
    offer = f"  [p] always `{pattern}` in this project" if pattern else ""
    return f"[a] allow  [A] always this exact command{offer}  {ASKED}"


def proposed_pattern(preview: CommandPreview) -> str | None:
    """The ``bash`` rule to offer for the command (None when only the exact one is safe)."""
    from ..rules.propose import propose_command_pattern  # bashlex: only when asked

    try:
        return propose_command_pattern(preview.command)
    except Exception:  # a proposal is a convenience: without one, the question still stands
        return None


def colour_diff(diff: str, color: bool) -> str:
    """A unified diff with additions green and removals red."""
    if not color:
        return diff
    out = []
    for line in split_lines(diff):  # a form feed inside a line stays inside it
        if line.startswith(("+++", "---")):
            out.append(f"\x1b[1m{line}\x1b[0m")
        elif line.startswith("+"):
            out.append(f"\x1b[32m{line}\x1b[0m")
        elif line.startswith("-"):
            out.append(f"\x1b[31m{line}\x1b[0m")
        elif line.startswith("@@"):
            out.append(f"\x1b[36m{line}\x1b[0m")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


class TerminalApprover:
    """Answers ``agent/approve``: shows the change, asks (or approves it all with ``yes``).

    The question waits on the event loop, so Ctrl-C (``interrupt``) ends it at once, and
    Ctrl-D (end of input) is a denial.
    """

    def __init__(
        self,
        *,
        yes: bool,
        out: TextOut | None = None,
        ask: Callable[[str], str] | None = None,
        color: bool | None = None,
        yes_reason: str = "--yes",
        diff_printer: Callable[[str, str], None] | None = None,
    ) -> None:
        self.yes = yes
        self.yes_reason = yes_reason
        self.out: TextOut = out or sys.stdout
        self.color = styled_terminal(self.out) if color is None else color
        self._ask = ask
        self.diff_printer = diff_printer
        """Shows a diff highlighted (Rich, on a colour terminal); else ``colour_diff``."""
        self._asking: anyio.CancelScope | None = None
        self.interrupted = False
        """After a Ctrl-C (or a closed output) every further question is denied unasked."""

    def interrupt(self) -> None:
        """Stop asking: the open question (if any) and every later one are denied."""
        self.interrupted = True
        if self._asking is not None:
            self._asking.cancel()

    def show(self, params: ApproveParams) -> None:
        """Print what the call would do."""
        self.out.write(f"\n{params.title}\n")
        preview = params.preview
        if isinstance(preview, CommandPreview):
            self.out.write(f"  $ {preview.command}\n  (in {preview.cwd})\n")
        elif self.diff_printer is not None:
            self.diff_printer(preview.diff, preview.uri)
        else:
            self.out.write(colour_diff(preview.diff, self.color))
        self.out.flush()

    async def _read(self, prompt: str) -> str | None:
        """The user's answer; None when they ended the input or interrupted."""
        if self.interrupted:
            return None
        with anyio.CancelScope() as scope:
            self._asking = scope
            try:
                if self._ask is not None:
                    return (await anyio.to_thread.run_sync(self._ask, prompt)).strip()
                answer = await read_line(prompt, self.out)
                return None if answer is None else answer.strip()
            finally:
                self._asking = None
        return None  # cancelled by ``interrupt``

    def _denied(self, why: str) -> dict[str, Any]:
        self.out.write(f"\n  → denied ({why})\n")
        self.out.flush()
        return {"decision": "deny", "feedback": f"the user {why}"}

    async def __call__(self, raw: Any) -> dict[str, Any]:
        params = ApproveParams.model_validate(raw, strict=False)
        self.show(params)
        if self.yes:
            self.out.write(f"  → allowed ({self.yes_reason})\n")
            return {"decision": "allow"}
        if self._ask is None and not sys.stdin.isatty():
            self.out.write("  → denied (no terminal to ask; use --yes to allow)\n")
            return {"decision": "deny", "feedback": "no one was there to approve it"}
        pattern: str | None = None
        prompt = PROMPT
        if isinstance(params.preview, CommandPreview):
            # bashlex's first import builds its tables (~60 ms): not on the event loop.
            pattern = await anyio.to_thread.run_sync(proposed_pattern, params.preview)
            prompt = command_prompt(pattern)
        while True:
            answer = await self._read(prompt)
            if answer is None:
                return self._denied("cancelled" if self.interrupted else "ended the input")
            if answer == "a":
                return {"decision": "allow"}
            if answer == "A":
                return {"decision": "allow-always"}
            if answer == "p" and pattern is not None:
                self.out.write(f"  → always allowed in this project: {params.tool} `{pattern}`\n")
                self.out.flush()
                rule = {"pattern": pattern, "scope": "project"}
                return {"decision": "allow-always", "rule": rule}
            if answer == "d":
                feedback = await self._read("why (optional) > ")
                return {"decision": "deny", **({"feedback": feedback} if feedback else {})}
