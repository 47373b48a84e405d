"""How the test client answers ``session/request_permission``, and what it saw.

A policy is one of the option kinds (the client picks the agent's option of that kind),
``never`` (no answer until the agent withdraws the request with ``$/cancel_request`` or
the test cancels the turn), ``cancelled`` (answered ``{outcome: cancelled}`` at once),
``cancel_turn`` (the client sends ``session/cancel`` and then answers ``cancelled``, as
the spec asks of a client that cancels with a permission pending), or a callable that
gets the request and returns one of those (or an awaitable of one).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

OptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
OPTION_KINDS: tuple[OptionKind, ...] = (
    "allow_once",
    "allow_always",
    "reject_once",
    "reject_always",
)
Choice = OptionKind | Literal["never", "cancelled", "cancel_turn"]
Policy = Choice | Callable[["PermissionAsked"], Choice | Awaitable[Choice]]


@dataclass
class PermissionAsked:
    """One ``session/request_permission`` the agent sent, and how it ended."""

    request_id: Any
    session_id: str
    tool_call: dict[str, Any]
    options: list[dict[str, Any]]
    at_ns: int = field(default_factory=time.monotonic_ns)
    answer: dict[str, Any] | None = None
    """The ``outcome`` the client sent (None while pending)."""
    answered_ns: int | None = None
    withdrawn: bool = False
    """The agent sent ``$/cancel_request`` for it."""
    missing: OptionKind | None = None
    """The policy wanted an option kind the agent did not offer."""
    claimed: bool = False
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the request is withdrawn or its turn cancelled (ends a ``never``)."""

    @property
    def tool_call_id(self) -> str | None:
        return self.tool_call.get("toolCallId")

    @property
    def pending(self) -> bool:
        return self.answer is None

    @property
    def kinds(self) -> list[str]:
        """The option kinds offered, in order."""
        return [str(option.get("kind")) for option in self.options]

    def option(self, kind: str) -> dict[str, Any] | None:
        """The first offered option of ``kind``."""
        return next((o for o in self.options if o.get("kind") == kind), None)

    def outcome_for(self, choice: str) -> dict[str, Any]:
        """The ``outcome`` object answering with ``choice`` (an option kind or cancelled)."""
        if choice == "cancelled":
            return {"outcome": "cancelled"}
        option = self.option(choice)
        if option is None:
            self.missing = choice  # type: ignore[assignment]
            return {"outcome": "cancelled"}
        return {"outcome": "selected", "optionId": option["optionId"]}


async def decide(policy: Policy, asked: PermissionAsked) -> Choice:
    """The policy's choice for this request."""
    if not callable(policy):
        return policy
    choice = policy(asked)
    if isinstance(choice, Awaitable):
        return await choice
    return choice
