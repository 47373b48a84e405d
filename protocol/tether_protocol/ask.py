"""Server → client request ``agent/ask``: a question the model asks the user.

The model's ``ask_user`` tool asks it when it needs the user's decision to go on (which of
two approaches, what a name should be): never for an approval, which is ``agent/approve``.
With ``commandInput: "ask"`` a ``bash`` command that stops to ask for input has its question
asked the same way (its ``call_id`` the ``bash`` call's; ``secret`` for a password prompt).
Only a client that declares ``experimental.tether.ask`` is asked; for any other the tool
answers the model at once that no one can be asked. Everything in the params is the model's
text: a client shows it as text from outside (escaped controls, no markup acted on).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from .base import WireModel

MAX_QUESTION = 2000
"""The longest question, in characters."""
MAX_CHOICES = 10
"""The most choices a question offers."""
MAX_CHOICE = 200
"""The longest choice, in characters."""
MAX_ANSWER = 4000
"""The longest answer the model is given (a longer one is cut)."""


class AskParams(WireModel):
    """Params of ``agent/ask``."""

    run_id: str
    call_id: str
    """The ``ask_user`` call asking (its ``tool-call`` event came first)."""
    question: Annotated[str, Field(min_length=1, max_length=MAX_QUESTION)]
    choices: (
        Annotated[
            list[Annotated[str, Field(min_length=1, max_length=MAX_CHOICE)]],
            Field(max_length=MAX_CHOICES),
        ]
        | None
    ) = None
    """The answers offered, in order (distinct); absent: the answer is typed."""
    free_text: bool = True
    """With ``choices``: the user may type an answer of their own instead. Without choices
    an answer is always typed."""
    secret: bool | None = None
    """``true``: the answer is a secret (a command's password prompt), typed where it is not
    shown (a password field, no echo) and kept nowhere by the client; absent otherwise."""
    enter_alone: bool | None = None
    """``true``: an empty answer answers — Enter alone, as a command's question takes its
    default (``[Y/n]``, "press Enter"); the client sends ``""`` for it and leaves closing the
    question as no answer. Absent: an empty answer is no answer."""


class AskResult(WireModel):
    """The user's answer: ``answer`` is a choice as given or the text they typed; absent, the
    user declined to answer (closed the question)."""

    model_config = ConfigDict(extra="ignore")

    answer: str | None = None
