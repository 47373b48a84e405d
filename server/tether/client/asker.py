"""Answer the model's questions (``agent/ask``) at the terminal: the question, the choices
numbered, then a number or a typed answer and Enter.

It reads through the approver's question reader (``TerminalApprover``): the same terminal,
the same Ctrl-C (the turn's cancel ends the question at once) and Ctrl-D (no answer). The
question and the choices come from the model: they are shown escaped (the server sends them
so, and they are escaped again here: escaping an escaped text changes nothing).
"""

from __future__ import annotations

import os
from typing import Any

import anyio

from tether_protocol import AskParams

from ..text.display import shown
from .approver import TerminalApprover
from .terminal import open_terminal


def can_ask_here() -> bool:
    """Whether a person can be asked: a terminal (standard input, else the controlling
    one) is there to ask at."""
    terminal = open_terminal()
    if terminal is None:
        return False
    fd, opened = terminal
    if opened:
        os.close(fd)
    return True


class TerminalAsker:
    """``agent/ask``'s handler for a terminal front (the chat, ``tether run`` on a terminal)."""

    def __init__(self, approver: TerminalApprover) -> None:
        self.approver = approver

    async def __call__(self, raw: Any) -> dict[str, Any]:
        with self.approver.asking():
            return await self._question(raw)

    async def _question(self, raw: Any) -> dict[str, Any]:
        params = AskParams.model_validate(raw, strict=False)
        out = self.approver.out
        choices = params.choices or []
        out.write(f"\n? {shown(params.question, lines=True).replace(chr(10), chr(10) + '  ')}\n")
        for number, choice in enumerate(choices, 1):
            out.write(f"  {number}. {shown(choice)}\n")
        out.flush()
        if choices and params.free_text:
            prompt = f"  1–{len(choices)} or your answer > "
        elif choices:
            prompt = f"  1–{len(choices)} > "
        elif params.secret:
            prompt = "  your answer (hidden as you type) > "
        elif params.enter_alone:
            prompt = "  your answer (Enter alone: its default) > "
        else:
            prompt = "  your answer > "
        terminal = open_terminal() if self.approver._ask is None else None
        if self.approver._ask is None and terminal is None:
            out.write("  → no terminal to ask at: not answered\n")
            return {}
        fd, opened = terminal or (None, False)
        try:
            return await self._answer(params, prompt, fd)
        except anyio.get_cancelled_exc_class():  # withdrawn: the server no longer waits
            out.write("\n  → withdrawn (not answered in time, or the run ended)\n")
            out.flush()
            raise
        finally:
            if opened and fd is not None:
                os.close(fd)

    async def _answer(self, params: AskParams, prompt: str, fd: int | None) -> dict[str, Any]:
        """Read until a number or an answer comes; ``{}``: left unanswered."""
        out = self.approver.out
        choices = params.choices or []
        while True:
            typed = await self.approver._read(prompt, fd, line=True, hidden=params.secret is True)
            if typed is None:  # Ctrl-D, or the turn was cancelled
                out.write("  → not answered\n")
                out.flush()
                return {}
            if typed.isdigit() and 1 <= int(typed) <= len(choices):
                return {"answer": choices[int(typed) - 1]}
            if typed and (params.free_text or not choices):
                return {"answer": typed}
            if not typed and params.enter_alone and not choices:
                return {"answer": ""}
            hint = f"a number from 1 to {len(choices)}" if choices else "an answer"
            out.write(f"  (type {hint}; Ctrl-D leaves it unanswered)\n")
            out.flush()
