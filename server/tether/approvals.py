"""The approval policy: the one place that decides whether a tool call may happen.

Every call of every tool passes ``ApprovalGate.decide``. Read-only tools pass silently;
a call that writes or runs a command passes only on ``autoApprove``, an earlier
``allow-always`` of this session, or the user's explicit ``allow``. Anything else — a
``deny``, an error, no answer, a malformed answer — means the call does not happen.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tether_protocol import Decision, Preview

from .events import RunEvents
from .host import ApprovalAnswer, ApprovalRequest, Editor

log = logging.getLogger(__name__)


@dataclass(slots=True)
class ApprovalPolicy:
    """What is allowed without asking: configured tools and this session's always-allows."""

    auto_approve: frozenset[str] = frozenset()
    always: set[str] = field(default_factory=set)

    def configure(self, auto_approve: Iterable[str]) -> None:
        """Use the configured ``autoApprove`` list (for the next decisions)."""
        self.auto_approve = frozenset(auto_approve)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision on one call."""

    decision: Decision
    feedback: str | None = None
    arguments: dict[str, Any] | None = None

    @property
    def allowed(self) -> bool:
        """The call may happen."""
        return self.decision in ("allow", "allow-always", "auto")


class ApprovalGate:
    """Decides the calls of one run and reports every decision as an ``approval`` event."""

    def __init__(self, policy: ApprovalPolicy, editor: Editor, events: RunEvents) -> None:
        self.policy = policy
        self.editor = editor
        self.events = events

    async def decide(
        self,
        *,
        call_id: str,
        tool: str,
        needs_approval: bool,
        title: str,
        arguments: dict[str, Any],
        preview: Preview | None,
    ) -> Verdict:
        """Decide one call; asks the user through the editor when the policy says so."""
        if not needs_approval:
            return Verdict("auto")
        if tool in self.policy.auto_approve or tool in self.policy.always:
            verdict = Verdict("auto")
        elif preview is None:
            verdict = Verdict("denied-by-default", "nothing to show the user")
        else:
            request = ApprovalRequest(self.events.run_id, call_id, tool, title, arguments, preview)
            verdict = await self._ask(request)
        self.events.approval(call_id, verdict.decision)
        return verdict

    async def _ask(self, request: ApprovalRequest) -> Verdict:
        try:
            answer = await self.editor.ask_approval(request)
        except Exception as exc:  # a broken client must not be able to approve by failing
            log.warning("asking for approval failed (denied): %s", exc)
            answer = None
        if not isinstance(answer, ApprovalAnswer):
            return Verdict("denied-by-default")
        if answer.decision == "allow-always":
            self.policy.always.add(request.tool)
        return Verdict(answer.decision, answer.feedback, answer.arguments)
