"""Approval rules on the wire: ``agent/rules/list``, ``agent/rules/add``, ``agent/rules/remove``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from .base import WireModel

RuleDecision = Literal["allow", "deny", "ask"]
RuleScope = Literal["session", "project", "user"]
ListedScope = Literal["session", "project", "user", "builtin"]

Pattern = Annotated[str, Field(min_length=1, max_length=4096)]


class Rule(WireModel):
    """What to do with the calls of ``tool`` that ``pattern`` matches.

    ``bash``: a simple command's words (``git status``, ``pytest *``: a last ``*`` allows any
    further arguments); ``edit_file``/``write_file``: globs relative to the workspace,
    separated by spaces, ``!glob`` excluding (``src/** !**/.env*``).
    """

    tool: Annotated[str, Field(min_length=1, max_length=200)]
    pattern: Pattern
    decision: RuleDecision
    scope: ListedScope = "session"
    """``builtin`` only in lists and events: the read-only defaults (never added)."""


class ProposedRule(WireModel):
    """In an ``allow-always`` answer: the rule the user picked (an allow for the call's tool)."""

    model_config = ConfigDict(extra="ignore")

    pattern: Pattern
    scope: RuleScope = "session"


class RulesListParams(WireModel):
    """Params of ``agent/rules/list``."""

    session_id: str | None = None
    """Also list the rules of this session."""


class RulesListResult(WireModel):
    """Every rule in force, the read-only defaults included when they are on."""

    rules: list[Rule]
    read_only_defaults: bool
    """The built-in read-only command rules apply (the user config can turn them off)."""


class RulesAddParams(WireModel):
    """Params of ``agent/rules/add``: a ``project`` or ``user`` rule (or ``session`` with
    ``session_id``)."""

    rule: Rule
    session_id: str | None = None


class RulesAddResult(WireModel):
    """The rule as stored."""

    rule: Rule


class RulesRemoveParams(WireModel):
    """Params of ``agent/rules/remove``: the rule as listed (tool, pattern, decision, scope)."""

    rule: Rule
    session_id: str | None = None


class RulesRemoveResult(WireModel):
    """Whether a stored rule was removed."""

    removed: bool
