"""Ask the user in the terminal: a coloured diff or the command, then allow / always / deny."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from tether_protocol import ApproveParams, CommandPreview

from ..text.model import split_lines
from .render import styled_terminal
from .terminal import TextOut, read_line

PROMPT = "[a] allow  [A] allow always  [d] deny > "
"""The question for an edit the server offers no rule for ("always": that tool, for this
session)."""
ASKED = "[d] deny > "
"""How every question ends (a command's offers more choices before it)."""


@dataclass(frozen=True)
class Offer:
    """The allow-always rules the server offered (``suggestedPatterns``), as the prompt
    uses them: ``exact`` for ``[A]`` (the command's words, or the file), ``wide`` for ``[p]``
    (``pytest *``, ``src/*.py``). The client computes none itself."""

    exact: str | None = None
    wide: str | None = None


def offer_of(params: ApproveParams) -> Offer:
    """Split the server's suggestions (narrowest first) into the exact and the wider rule."""
    patterns = [p for p in params.suggested_patterns or [] if p.strip()]
    if not patterns:
        return Offer()
    exact: str | None = patterns[0]
    preview = params.preview
    if isinstance(preview, CommandPreview) and exact != " ".join(preview.command.split()):
        exact = None  # only a wider rule (`git commit *` for a quoted command): [p] offers it
    wide = patterns[-1] if patterns[-1] != exact else None
    return Offer(exact, wide)


def command_prompt(pattern: str | None) -> str:
    """The question for a command: always this exact command, or by the offered rule."""
    offer = f"  [p] always `{pattern}` in this project" if pattern else ""
    return f"[a] allow  [A] always this exact command{offer}  {ASKED}"


def edit_prompt(offer: Offer) -> str:
    """The question for an edit: always this file (this session), or the offered folder
    rule in this project; the bare one when the server offered none."""
    if offer.exact is None:
        return PROMPT
    wide = f"  [p] always `{offer.wide}` in this project" if offer.wide else ""
    return f"[a] allow  [A] always `{offer.exact}`{wide}  {ASKED}"


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
        offer = offer_of(params)
        if isinstance(params.preview, CommandPreview):
            prompt = command_prompt(offer.wide)
        else:
            prompt = edit_prompt(offer)
        while True:
            answer = await self._read(prompt)
            if answer is None:
                return self._denied("cancelled" if self.interrupted else "ended the input")
            if answer == "a":
                return {"decision": "allow"}
            if answer == "A":
                if offer.exact is None:
                    return {"decision": "allow-always"}
                return {
                    "decision": "allow-always",
                    "rule": {"pattern": offer.exact, "scope": "session"},
                }
            if answer == "p" and offer.wide is not None:
                self.out.write(
                    f"  → always allowed in this project: {params.tool} `{offer.wide}`\n"
                )
                self.out.flush()
                rule = {"pattern": offer.wide, "scope": "project"}
                return {"decision": "allow-always", "rule": rule}
            if answer == "d":
                feedback = await self._read("why (optional) > ")
                return {"decision": "deny", **({"feedback": feedback} if feedback else {})}
