"""The ``agent/rules/*`` requests: list, add and remove rules of every scope.

One definition for both askers: the server's handlers (``lsp.handlers``) and ``tether
rules``, which answers in-process, with no server started. So this module imports no
transport, no provider SDK and no MCP SDK: only the store (its files written through the
confined writer, ``writes.disk``), the matcher's pattern check and the protocol's models.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from tether_protocol import (
    AGENT_RULES_ADD_METHOD,
    AGENT_RULES_LIST_METHOD,
    AGENT_RULES_REMOVE_METHOD,
    RulesAddParams,
    RulesAddResult,
    RulesListParams,
    RulesListResult,
    RulesRemoveParams,
    RulesRemoveResult,
)

from ..text.echo import clip
from ..text.params import ParamsError, validated
from .match import check_pattern
from .store import RuleStore, same_rule

if TYPE_CHECKING:
    from .gate import ApprovalPolicy

RulesParams = RulesListParams | RulesAddParams | RulesRemoveParams
RulesResult = RulesListResult | RulesAddResult | RulesRemoveResult


class RulesRequestError(ValueError):
    """A rules request that cannot be done; the message says why (an invalid-params error)."""


RULES_PARAMS: dict[str, type[RulesParams]] = {
    AGENT_RULES_LIST_METHOD: RulesListParams,
    AGENT_RULES_ADD_METHOD: RulesAddParams,
    AGENT_RULES_REMOVE_METHOD: RulesRemoveParams,
}
"""Each ``agent/rules/*`` method's params model."""


def rules_params(method: str, raw: Any) -> RulesParams:
    """The params of ``method`` from the wire; ``RulesRequestError`` naming the first bad
    field (the same check as every other request's, ``text.echo.validated``)."""
    try:
        return validated(RULES_PARAMS[method], raw)
    except ParamsError as exc:
        raise RulesRequestError(str(exc)) from exc


class RulesService:
    """Rules as the protocol sees them, over a store and the sessions' policies."""

    def __init__(self, store: RuleStore) -> None:
        self.store = store

    async def answer(
        self,
        method: str,
        raw: Any,
        roots: Sequence[Path],
        session_of: Callable[[str], ApprovalPolicy | None],
    ) -> dict[str, Any]:
        """The wire answer to one ``agent/rules/*`` request; ``RulesRequestError`` with
        the message to send after ``method: `` (a client's values in it cut short)."""
        params = rules_params(method, raw)
        session = session_of(params.session_id) if params.session_id else None
        try:
            result = await self.handle(params, roots, session)
        except RulesRequestError as exc:
            raise RulesRequestError(clip(str(exc))) from exc
        return result.to_wire()

    async def list(
        self, params: RulesListParams, roots: Sequence[Path], session: ApprovalPolicy | None
    ) -> RulesListResult:
        """Every rule in force (the session's first when asked for)."""
        stored = await anyio.to_thread.run_sync(self.store.rule_set, roots)
        mine = list(session.session_rules) if session is not None else []
        return RulesListResult(
            rules=[*mine, *stored.rules], read_only_defaults=stored.read_only_defaults
        )

    async def add(
        self, params: RulesAddParams, roots: Sequence[Path], session: ApprovalPolicy | None
    ) -> RulesAddResult:
        """Store a rule; ``RulesRequestError`` for a built-in scope, a bad pattern or a
        session rule of no session in memory."""
        rule = params.rule
        try:
            check_pattern(rule.tool, rule.pattern)
        except ValueError as exc:
            raise RulesRequestError(f"rule.pattern: {exc}") from exc
        if rule.scope == "builtin":
            raise RulesRequestError("rule.scope: built-in rules cannot be added")
        if rule.scope == "session":
            if session is None:
                raise RulesRequestError("sessionId: a session rule needs a session in memory")
            await session.store_rule(rule, roots)
            return RulesAddResult(rule=rule)
        try:
            stored = await anyio.to_thread.run_sync(self.store.add, rule, roots)
        except ValueError as exc:
            raise RulesRequestError(str(exc)) from exc
        return RulesAddResult(rule=stored)

    async def remove(
        self, params: RulesRemoveParams, roots: Sequence[Path], session: ApprovalPolicy | None
    ) -> RulesRemoveResult:
        """Revoke a rule as listed; ``removed`` is False when there was none."""
        rule = params.rule
        if rule.scope == "builtin":
            raise RulesRequestError(
                "rule.scope: built-in rules are turned off with settings.read_only_defaults "
                "in the user rules file"
            )
        if rule.scope == "session":
            if session is None:
                return RulesRemoveResult(removed=False)
            before = len(session.session_rules)
            session.session_rules[:] = [r for r in session.session_rules if not same_rule(r, rule)]
            return RulesRemoveResult(removed=len(session.session_rules) != before)
        try:
            removed = await anyio.to_thread.run_sync(self.store.remove, rule, roots)
        except ValueError as exc:
            raise RulesRequestError(str(exc)) from exc
        return RulesRemoveResult(removed=removed)

    async def handle(
        self, params: RulesParams, roots: Sequence[Path], session: ApprovalPolicy | None
    ) -> RulesResult:
        """Answer one ``agent/rules/*`` request."""
        if isinstance(params, RulesAddParams):
            return await self.add(params, roots, session)
        if isinstance(params, RulesRemoveParams):
            return await self.remove(params, roots, session)
        return await self.list(params, roots, session)
