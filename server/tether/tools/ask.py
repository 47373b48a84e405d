"""``ask_user``: a question the model asks the user when it needs their decision to go on.

A question, optional choices, and whether an answer of the user's own may be typed besides
them. Never an approval: edits and commands are asked by the approval gate, whatever the
model says here. Read-only and asks no approval itself: it changes nothing.

Who answers is the front's (its editor implements ``AsksUser``): ACP's elicitation
(``elicitation/create``, form mode, to a client that declared ``elicitation.form``), LSP's
``agent/ask`` (to a client that declared ``experimental.tether.ask``: the terminal chat,
``tether run`` on a terminal). With no one to ask — ``tether run`` with no terminal, a client
that declared neither — the model is told so at once, and decides itself or says what it
needs. Each front shows the model's strings as text from outside (``text.display``); the
answer reaches the model as the call's result, framed as every result is.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Protocol, runtime_checkable

import anyio
from pydantic import Field, field_validator

from tether_protocol.ask import MAX_ANSWER, MAX_CHOICE, MAX_CHOICES, MAX_QUESTION

from .base import Tool, ToolArgs, ToolDeps, ToolResult, one_line

log = logging.getLogger(__name__)

NO_ONE_TO_ASK = (
    "No one to ask: no person can answer a question here (a run without a terminal, or a "
    "client that takes no questions). Decide yourself from what you know and say what you "
    "chose and why, or stop and say what you need to know."
)
DECLINED = (
    "The user closed the question without answering. Do not ask it again; go on with what "
    "you know, or stop and say what you need."
)


@dataclass(frozen=True, slots=True)
class Question:
    """What ``ask_user`` asks (the model's text, as it wrote it: each front shows it)."""

    run_id: str
    call_id: str
    question: str
    choices: tuple[str, ...] = ()
    free_text: bool = True
    """With choices, an answer of the user's own may be typed; without, it always is."""
    secret: bool = False
    """The answer is a secret (a command's password prompt: ``tools/command_input.py``):
    taken where it is not shown when the front can, never logged, kept as typed."""
    enter_alone: bool = False
    """An empty answer answers (a command's question: Enter alone takes its default); else
    an empty answer is no answer."""

    def accepts(self, answer: str) -> bool:
        """Whether ``answer`` may answer the question: any text when typing is allowed,
        else one of the choices."""
        return (self.enter_alone or bool(answer.strip())) and (
            not self.choices or self.free_text or answer in self.choices
        )

    def blank(self, answer: str) -> str | None:
        """What an empty (or blank) answer answers: ``""`` (Enter alone) when the question
        takes it, else None (no answer)."""
        return "" if self.enter_alone and not answer.strip() else None


@runtime_checkable
class AsksUser(Protocol):
    """An editor through which a person can be asked (the front's own request)."""

    def can_ask(self) -> bool:
        """Someone can be asked: the client declared it takes questions."""
        ...

    async def ask_user(self, question: Question) -> str | None:
        """The user's answer (a choice as given, or typed text); None when they declined
        or no usable answer came. Cancelling the wait withdraws the question."""
        ...


class AskArgs(ToolArgs):
    """Arguments of ``ask_user``."""

    question: Annotated[str, Field(min_length=1, max_length=MAX_QUESTION)] = Field(
        description="The question, complete and self-contained: what you need decided and why."
    )
    choices: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_CHOICE)]],
        Field(max_length=MAX_CHOICES),
    ] = Field(
        default_factory=list,
        description="The answers to offer, short and distinct (at most 10); empty: the "
        "user types the answer.",
    )
    free_text: bool = Field(
        default=True,
        description="With choices: whether the user may type an answer of their own instead.",
    )

    @field_validator("question")
    @classmethod
    def _said(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty")
        return value

    @field_validator("choices")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if any(not c.strip() for c in value):
            raise ValueError("a choice is empty")
        if len(set(value)) != len(value):
            raise ValueError("the choices repeat")
        return value


class AskUser(Tool[AskArgs]):
    """Asks the user a question and gives the model the answer."""

    name: ClassVar[str] = "ask_user"
    kind: ClassVar[str] = "other"
    description: ClassVar[str] = (
        "Ask the user a question when you need their decision to go on: which of several "
        "approaches, what they meant, a name or value only they know. Give choices when "
        "there are a few clear options. Ask only what you cannot find out yourself, one "
        "question at a time. Never ask for permission to edit files or run commands: those "
        "are asked of the user automatically when you call the tools."
    )
    args_model: ClassVar[type[ToolArgs]] = AskArgs

    def title(self, arguments: dict[str, Any]) -> str:
        question = arguments.get("question")
        return f"Ask: {one_line(question, 72)}" if isinstance(question, str) else "Ask"

    async def run(self, args: AskArgs, deps: ToolDeps) -> ToolResult:
        editor = deps.editor
        if not isinstance(editor, AsksUser) or not editor.can_ask():
            return ToolResult.failure(NO_ONE_TO_ASK)
        question = Question(
            deps.run_id, deps.call_id, args.question, tuple(args.choices), args.free_text
        )
        timeout = deps.gate.answer_timeout if deps.gate is not None else None
        with anyio.move_on_after(timeout) as waited:
            answer = await editor.ask_user(question)
        if waited.cancelled_caught:
            return ToolResult.failure(
                f"No answer came within {timeout:g} s (approvalTimeoutSeconds); the question "
                "was withdrawn. Go on with what you know, or stop and say what you need."
            )
        if answer is None:
            return ToolResult.failure(DECLINED)
        if not question.accepts(answer):
            log.warning("ask_user: an answer that is not one of the choices: %.100r", answer)
            return ToolResult.failure(DECLINED)
        if len(answer) > MAX_ANSWER:
            answer = answer[:MAX_ANSWER] + "… (cut)"
        said = "chose" if answer in question.choices else "answered"
        return ToolResult(ok=True, output=f"The user {said}: {answer}")
