"""``commandInput: "ask"``: a command's question put to the user, their answer typed into it.

A ``bash`` command that stops to ask for input (``tools/input_wait.py``) is ended by default,
its question named. With ``commandInput`` set to ``ask`` (the user's own settings, an
editor's, a trusted project's: never an untrusted project's), the runner asks first: the
line the command left unfinished, after its last lines (a menu above it; escapes left out),
goes to the user through the front's question — the same
one ``ask_user`` uses (``AsksUser``: LSP's ``agent/ask``, ACP's form elicitation, the
terminal's prompt) — tied to the ``bash`` call, shown as text from outside by each front.
The answer and a newline are typed into the command's terminal, and it goes on; the time
the user takes is not counted against the command's timeout, and the wait is bounded by
``approvalTimeoutSeconds`` like any question. An empty answer is Enter alone (a ``[Y/n]``'s
default, "press Enter to go on"): the question says so (``enter_alone``) and each front sends
it as ``""``. A question dismissed or left unanswered, a front that cannot ask: the command is
ended as by default, its question named.

When the command turned its terminal's echo off (a password prompt: ``getpass``, ``read
-s``), or its question says password or passphrase, the question is a secret:
the front takes the answer where it is not shown when it can (``agent/ask``'s ``secret``),
and the answer is typed into the command with its terminal's echo off (turned off first
when the question only said password) and kept nowhere — not in the result, an event, the
session log or a log line. An answer is one line of text: a line break refuses it (it would
answer twice), control characters (``^U``, ``^D``: line editing) are not typed. A background
job is never asked: no one watches it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from .ask import AsksUser, Question
from .base import ToolDeps, one_line
from .input_wait import asked_line

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Answer:
    """What to type into a command: the user's answer, and whether it is a secret (typed
    with the terminal's echo off)."""

    text: str
    secret: bool

    def __repr__(self) -> str:  # never shown, should it reach a log line
        return f"Answer(secret={self.secret})" if self.secret else f"Answer({self.text!r})"


AnswersInput = Callable[[str, bool], Awaitable[Answer | None]]
"""Given the end of a command's output (its question last) and whether its typing is hidden:
the user's answer, or None."""

MAX_TYPED = 1000
"""The longest answer typed into a command (a terminal's line holds 4,095 bytes)."""
COMMAND_CHARS = 120
CONTEXT_LINES = 8
"""Lines of output before the question shown with it (a menu, what it is about)."""
CONTEXT_CHARS = 400
_SECRET_WORDS = re.compile(r"pass(?:word|phrase)|\bpin\b", re.IGNORECASE)
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?)")
"""Terminal escape sequences (CSI: colours, cursor; OSC: titles)."""


def input_answerer(deps: ToolDeps, command: str) -> AnswersInput | None:
    """Who answers ``command``'s questions: the user through the front, when
    ``commandInput`` is ``ask`` and the front can ask; else None (it is ended)."""
    editor = deps.editor
    if deps.command_input != "ask" or not isinstance(editor, AsksUser) or not editor.can_ask():
        return None
    timeout = deps.gate.answer_timeout if deps.gate is not None else None

    async def answer(recent: str, hidden: bool) -> Answer | None:
        secret = hidden or bool(_SECRET_WORDS.search(asked_line(recent)))
        question = Question(
            deps.run_id,
            deps.call_id,
            command_question(command, recent),
            secret=secret,
            enter_alone=True,
        )
        with anyio.move_on_after(timeout) as waited:
            reply = await editor.ask_user(question)
        if waited.cancelled_caught:
            log.info("a command's question was not answered within %g s", timeout)
            return None
        if reply is None:
            return None  # dismissed
        text = reply.strip("\r\n")
        if "\n" in text or "\r" in text:
            return None  # a line break would type two answers
        text = _CONTROLS.sub("", text)[:MAX_TYPED]  # no line editing (^U, ^D, DEL): text
        return Answer(text if text.strip() else "", secret)  # blank: Enter alone

    return answer


NOT_ANSWERED = (
    "Its question was put to the user, who did not answer it: do not run it again to ask "
    "them; give it its answer another way (a flag such as --yes, a here-string), or go on "
    "without it and say what it needs"
)
"""Why a command whose question the user left unanswered was ended (to the model)."""


def command_question(command: str, recent: str) -> str:
    """The question the user is shown for ``command`` waiting after printing ``recent``:
    its last lines (a menu above its prompt), the question last."""
    head = f"The command `{one_line(_printable(command), COMMAND_CHARS)}` is waiting for input."
    tail = (
        "\nYour answer is typed into it, then Enter (an empty answer: Enter alone); dismiss "
        "this to end the command."
    )
    asked = asked_line(recent)
    if not asked:
        return f"{head} It printed no question.{tail}"
    lines = [_printable(line) for line in recent.split("\n")[:-1][-CONTEXT_LINES:]]
    context = "\n".join(line for line in lines if line.strip())
    if len(context) > CONTEXT_CHARS:
        context = "…" + context[-CONTEXT_CHARS:]
    return f"{head} It printed:\n{context + chr(10) if context else ''}{asked}{tail}"


def _printable(line: str) -> str:
    """A line of context (or the command, shown whole in its call) without what a display
    would escape (controls, bidi, zero-width): only the question itself is shown escaped,
    so the question fits its length."""
    return "".join(c for c in _ESCAPES.sub("", line) if c.isprintable())


def answered_note(answered: tuple[bool, ...]) -> str:
    """What the model is told about the answers the user typed into the command."""
    if not answered:
        return ""
    count = len(answered)
    what = "its question" if count == 1 else f"{count} of its questions"
    hidden = "; a password's answer is not shown" if any(answered) else ""
    return f"(the user answered {what} on the command's input{hidden})"
