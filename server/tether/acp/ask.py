"""``ask_user`` over ACP: the spec's form elicitation (``elicitation/create``), asked only
of a client that declared ``clientCapabilities.elicitation.form``.

The form has one string field ``answer`` (the typed answer) and, for a question with
choices, a field ``choice`` whose options are numbered (``const`` ``"1"``, ``"2"``…, the
choice as its ``title``): the model's text is only ever a title or the message, shown
escaped (``text.display``), never a value the client sends back. Choices only: ``choice``
is required and there is no ``answer``; choices or typed text: both optional, a typed
answer winning; no choices: ``answer`` required, except for a question Enter alone answers (a
command's), where the form submitted empty is that Enter.
"""

from __future__ import annotations

import logging
from typing import Any

from ..text.display import shown
from ..tools.ask import Question

log = logging.getLogger(__name__)


def elicitation(session_id: str, tool_call_id: str | None, question: Question) -> dict[str, Any]:
    """The params of ``elicitation/create`` for ``question``, tied to its tool call."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    if question.choices:
        options = [
            {"const": str(number), "title": shown(choice)}
            for number, choice in enumerate(question.choices, 1)
        ]
        properties["choice"] = {"type": "string", "title": "Choose", "oneOf": options}
        if not question.free_text:
            required.append("choice")
    if not question.choices or question.free_text:
        title = "Or type your own answer" if question.choices else "Your answer"
        empty = "empty: Enter alone" if question.enter_alone else ""
        if question.secret:  # a form has no hidden field: say so
            title = f"Password (this form shows what you type{'; ' + empty if empty else ''})"
        elif empty:
            title += f" ({empty})"
        properties["answer"] = {"type": "string", "title": title}
        if not question.choices and not question.enter_alone:
            required.append("answer")
    params: dict[str, Any] = {
        "sessionId": session_id,
        "mode": "form",
        "message": shown(question.question, lines=True),
        "requestedSchema": {"type": "object", "properties": properties, "required": required},
    }
    if tool_call_id is not None:
        params["toolCallId"] = tool_call_id
    return params


def elicited(raw: object, question: Question) -> str | None:
    """The answer in an ``elicitation/create`` response: the typed ``answer``, else the
    picked ``choice``; None when the user declined or cancelled, or the response holds no
    usable answer (warned once in the log)."""
    action = raw.get("action") if isinstance(raw, dict) else None
    if action in ("decline", "cancel"):
        return None
    if action != "accept":
        shown_raw = "(a secret's answer, not shown)" if question.secret else repr(raw)[:200]
        log.warning("elicitation/create answered with no known action: %s", shown_raw)
        return None
    content = raw.get("content") if isinstance(raw, dict) else None
    content = content if isinstance(content, dict) else {}
    typed = content.get("answer")
    said = isinstance(typed, str) and bool(typed.strip())
    if question.enter_alone and not question.choices and not said:
        return ""  # Enter alone: submitted empty (or without the optional field)
    if question.secret and isinstance(typed, str) and typed.strip():
        return typed  # as typed: a password's spaces are part of it
    if isinstance(typed, str) and typed.strip() and (question.free_text or not question.choices):
        return typed.strip()
    picked = content.get("choice")
    if isinstance(picked, str) and picked.isdigit() and 1 <= int(picked) <= len(question.choices):
        return question.choices[int(picked) - 1]
    if content and not question.secret:
        log.warning("elicitation/create accepted with no usable answer: %.200r", content)
    return None
