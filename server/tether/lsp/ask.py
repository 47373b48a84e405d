"""``ask_user`` over LSP: the server → client request ``agent/ask``, sent only to a client
that declared ``experimental.tether.ask``.

The model's question and choices are shown escaped before they leave (``text.display``): a
client shows them as they come. The answer is a choice as it was sent (mapped back to the
model's own text) or typed text; an error answer, a malformed one or an answer that is not
one of the choices when typing was not allowed is no answer (warned in the log).
"""

from __future__ import annotations

import logging

from pydantic import ValidationError

from tether_protocol import AskParams, AskResult
from tether_protocol.ask import MAX_CHOICE, MAX_QUESTION

from ..text.display import shown
from ..tools.ask import Question

log = logging.getLogger(__name__)


def _cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters (escapes make a shown text longer)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ask_params(question: Question) -> AskParams:
    """``agent/ask``'s params: the question and its choices as a person is shown them,
    within the protocol's lengths (an escaped text is cut with an ellipsis)."""
    return AskParams(
        run_id=question.run_id,
        call_id=question.call_id,
        question=_cut(shown(question.question, lines=True), MAX_QUESTION),
        choices=[_cut(shown(c), MAX_CHOICE) for c in question.choices] or None,
        free_text=question.free_text,
        secret=question.secret or None,
        enter_alone=question.enter_alone or None,
    )


def asked_answer(raw: object, question: Question, sent: AskParams) -> str | None:
    """The answer in a raw ``agent/ask`` answer: a choice as sent is the model's choice, any
    other text is typed (when typing is allowed); None: declined, or not usable."""
    try:
        answer = AskResult.model_validate(raw, strict=False).answer
    except ValidationError:
        shown_raw = "(a secret's answer, not shown)" if question.secret else repr(raw)[:200]
        log.warning("malformed agent/ask answer (no answer): %s", shown_raw)
        return None
    if answer is None:
        return None
    if not answer.strip():
        return question.blank(answer)
    if question.secret:
        return answer  # as typed: a password's spaces are part of it
    for choice, shown_choice in zip(question.choices, sent.choices or [], strict=False):
        if answer == shown_choice:
            return choice
    if question.choices and not question.free_text:
        log.warning("agent/ask answered with no choice offered (no answer): %.100r", answer)
        return None
    return answer.strip()
