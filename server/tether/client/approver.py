"""Ask the user in the terminal: a coloured diff or the command, then allow / always / deny."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

import anyio.to_thread

from tether_protocol import ApproveParams, CommandPreview

from ..textmodel import split_lines

PROMPT = "[a] allow  [A] allow always  [d] deny > "


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
    """Answers ``agent/approve``: shows the change, asks (or approves it all with ``yes``)."""

    def __init__(
        self,
        *,
        yes: bool,
        out: TextIO | None = None,
        ask: Callable[[str], str] | None = None,
        color: bool | None = None,
        yes_reason: str = "--yes",
    ) -> None:
        self.yes = yes
        self.yes_reason = yes_reason
        self.out = out or sys.stdout
        self.color = self.out.isatty() if color is None else color
        self._ask = ask or input

    def show(self, params: ApproveParams) -> None:
        """Print what the call would do."""
        self.out.write(f"\n{params.title}\n")
        preview = params.preview
        if isinstance(preview, CommandPreview):
            self.out.write(f"  $ {preview.command}\n  (in {preview.cwd})\n")
        else:
            self.out.write(colour_diff(preview.diff, self.color))
        self.out.flush()

    async def __call__(self, raw: Any) -> dict[str, Any]:
        params = ApproveParams.model_validate(raw, strict=False)
        self.show(params)
        if self.yes:
            self.out.write(f"  → allowed ({self.yes_reason})\n")
            return {"decision": "allow"}
        if not sys.stdin.isatty() and self._ask is input:
            self.out.write("  → denied (no terminal to ask; use --yes to allow)\n")
            return {"decision": "deny", "feedback": "no one was there to approve it"}
        while True:
            answer = (await anyio.to_thread.run_sync(self._ask, PROMPT)).strip()
            if answer == "a":
                return {"decision": "allow"}
            if answer == "A":
                return {"decision": "allow-always"}
            if answer == "d":
                feedback = (await anyio.to_thread.run_sync(self._ask, "why (optional) > ")).strip()
                return {"decision": "deny", **({"feedback": feedback} if feedback else {})}
