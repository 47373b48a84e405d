"""The approval policy: the one place that decides whether a tool call may happen.

Every call of a tool that writes or runs a command passes ``ApprovalGate.decide`` (the
registry runs read-only tools directly, without asking). Such a call passes only on
``autoApprove``, an earlier ``allow-always`` of this session, or the user's explicit
``allow``. Anything else — a ``deny``, an error, no answer, a malformed answer — means the
call does not happen.

Approval rules (``rules/``) come first: a matching ``deny`` denies without asking, an
``ask`` asks whatever else allows the call, and an ``allow`` (of this session, the user,
the project or the built-in read-only commands) lets it pass. A change to a sensitive path
(``sensitive.py``) is always asked, whatever ``autoApprove``, a rule or "allow always" says.
An "allow always" answer stores the rule the user picked, once checked to cover the call;
without one it covers that exact command (or, for edits, the tool) for the session.

A read-only session (``ApprovalPolicy.read_only``) is decided first, by what the call may do
(``capability.py``): a call that may change anything is refused before any rule,
``autoApprove`` or "allow always" is consulted, and an allowed command runs as the built-in
read-only rules run theirs (git's program-running settings off).

An MCP tool is matched by its server's configured name and its own (``mcp``), never by the
model-facing name, which different servers can share once sanitised.

With a sandbox (``sandbox`` setting, ``tether.sandbox``), a ``bash`` command that would
have been asked runs unasked inside it instead — only one the rules could read, so that
no ``deny`` went unchecked — and every other allowed command runs inside it too (a rule,
``autoApprove`` or the user allowed the command, not what a sandboxed command may have
planted for it to run); when it fails for lack of reach, ``reconsider`` asks the user
whether it may run outside.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

from tether_protocol import (
    ApproveParams,
    ApproveResult,
    CommandPreview,
    Decision,
    DiffPreview,
    Preview,
    ProposedRule,
    Rule,
)

from ..events import RunEvents
from ..host import Editor, FileEdit
from ..sandbox import Sandbox
from ..workspace.sensitive import reason_for_preview
from .capability import READ_ONLY_ADVICE, Effect, read_only_refusal
from .match import MCP_ANY, Judgement, judge, mcp_identity, mcp_name_covers, mcp_rule_tool
from .propose import exact_command_pattern, suggest_patterns
from .store import RuleStore

log = logging.getLogger(__name__)


@dataclass(slots=True)
class ApprovalPolicy:
    """What is allowed without asking: configured tools and this session's always-allows.

    ``always`` holds tools whose changes were allowed always; ``always_commands`` holds
    ``(tool, command)`` pairs: an "allow always" on a command covers that exact string (an
    MCP tool is held by its server's and its own names, ``mcp``). Neither covers a
    sensitive path: the gate asks for those before consulting the policy.
    """

    auto_approve: frozenset[str] = frozenset()
    always: set[str] = field(default_factory=set)
    always_commands: set[tuple[str, str]] = field(default_factory=set)
    session_rules: list[Rule] = field(default_factory=list)
    store: RuleStore | None = None
    """The user's and the projects' rules (None: session rules only)."""
    read_only: bool = False
    """The session is read-only: no call that may change anything runs (``capability.py``),
    whatever the rules, ``autoApprove`` and this session's allows say."""

    def configure(self, auto_approve: Iterable[str], store: RuleStore | None = None) -> None:
        """Use the configured ``autoApprove`` list and rules (for the next decisions)."""
        self.auto_approve = frozenset(auto_approve)
        if store is not None:
            self.store = store

    async def rules(self, roots: Sequence[Path]) -> list[Rule]:
        """Every rule in force: this session's, the user's, the projects', the built-ins."""
        if self.store is None:
            return list(self.session_rules)
        stored = await anyio.to_thread.run_sync(self.store.rule_set, roots)
        return [*self.session_rules, *stored.rules]

    async def store_rule(self, rule: Rule, roots: Sequence[Path]) -> None:
        """Keep a rule the user picked: in memory for the session, else in its file."""
        if rule.scope == "session" or self.store is None:
            if rule not in self.session_rules:
                self.session_rules.append(rule.model_copy(update={"scope": "session"}))
            return
        await anyio.to_thread.run_sync(self.store.add, rule, roots)

    def covers(
        self, tool: str, preview: Preview | None, mcp: tuple[str, str] | None = None
    ) -> bool:
        """The call may happen without asking (the sensitive floor aside). ``mcp``: the call
        is the tool ``mcp[1]`` of the server configured as ``mcp[0]``, named by its names
        alone (never by ``tool``, the model-facing name)."""
        mcp = mcp_identity(tool, mcp)
        if mcp is not None:
            if any(mcp_name_covers(n, *mcp) for n in self.auto_approve):
                return True
        elif tool in self.auto_approve:
            return True
        key = _key(tool, mcp)
        if isinstance(preview, CommandPreview):
            return (key, preview.command) in self.always_commands
        return key in self.always

    def remember(
        self,
        tool: str,
        preview: Preview,
        *,
        changed: bool = False,
        mcp: tuple[str, str] | None = None,
    ) -> None:
        """Record an "allow always": the exact command for commands, else the tool.

        A command the user changed before allowing is not remembered: the one shown is
        not the one that ran, and remembering either would allow what was not agreed.
        """
        key = _key(tool, mcp_identity(tool, mcp))
        if isinstance(preview, CommandPreview):
            if not changed:
                self.always_commands.add((key, preview.command))
        else:
            self.always.add(key)


def _key(tool: str, mcp: tuple[str, str] | None) -> str:
    """What a session's "allow always" holds a tool by: its name, an MCP tool by its
    server's and its own names (as JSON: no two pairs give one key, no tool name either)."""
    return tool if mcp is None else json.dumps(["mcp", *mcp])


SANDBOXED_TOOLS = frozenset({"bash"})
"""The tools whose calls can run in the sandbox."""

EDITED_TEXT_SLACK = 1 << 20
"""How many characters an answer's ``editedText`` may exceed twice the proposed window by."""


def edited_text_problem(answer: ApproveResult, preview: Preview) -> str | None:
    """Why an answer's ``editedText`` cannot be used, or None (also when it has none)."""
    if answer.edited_text is None or answer.decision == "deny":
        return None
    if answer.arguments is not None:
        return "both editedText and arguments (send one)"
    if not isinstance(preview, DiffPreview) or preview.proposed is None:
        return "editedText for a preview without a proposed text"
    limit = 2 * len(preview.proposed.text) + EDITED_TEXT_SLACK
    if len(answer.edited_text) > limit:
        return f"editedText of {len(answer.edited_text)} characters (at most {limit})"
    return None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision on one call."""

    decision: Decision
    feedback: str | None = None
    arguments: dict[str, Any] | None = None
    edited_text: str | None = None
    """The user's text for the proposed window (a diff preview), checked by the gate."""
    note: str | None = None
    """Tether's own explanation of a call that did not pass (not the user's words)."""
    sandbox: Sandbox | None = None
    """Run the call inside this sandbox (every allowed command, with the sandbox on)."""
    builtin: bool = False
    """The built-in read-only rules alone allowed it (its git runs no configured program)."""
    denied_by: str | None = None
    """The rule that denied it, in words (``a project rule (bash: rm *)``)."""
    refused: str | None = None
    """Why it may not run at all here, in words (``the session is read-only, and …``)."""

    @property
    def allowed(self) -> bool:
        """The call may happen."""
        return self.decision in ("allow", "allow-always", "auto")


def _changed(verdict: Verdict, arguments: dict[str, Any]) -> bool:
    """The answer changes the call (its arguments, or the edit's text)."""
    changed_arguments = verdict.arguments is not None and verdict.arguments != arguments
    return changed_arguments or verdict.edited_text is not None


class ApprovalGate:
    """Decides the calls of one run and reports every decision as an ``approval`` event."""

    def __init__(
        self,
        policy: ApprovalPolicy,
        editor: Editor,
        events: RunEvents,
        answer_timeout: float | None = None,
        sandbox: Callable[[Sequence[Path]], Sandbox | None] | None = None,
    ) -> None:
        self.policy = policy
        self.editor = editor
        self.events = events
        self.answer_timeout = answer_timeout
        """Seconds an approval may wait for its answer (None: as long as the run lasts)."""
        self.sandbox_for = sandbox
        """The sandbox for commands in these workspace folders (None: no sandbox)."""

    async def decide(
        self,
        *,
        call_id: str,
        tool: str,
        title: str,
        arguments: dict[str, Any],
        preview: Preview | None,
        roots: Sequence[Path],
        read_only: bool = False,
        change: FileEdit | None = None,
        effect: Effect = "changes",
        effect_note: str | None = None,
        mcp: tuple[str, str] | None = None,
    ) -> Verdict:
        """Decide one call; asks the user through the editor when the policy says so
        (``change``: the proposed file change as a whole, handed to the editor with it).

        ``roots`` are the workspace folders, to place a changed file for the sensitive floor.
        ``read_only``: the call's tool says it changes nothing and the user chose to believe
        it (an MCP server's ``readOnlyHint`` under ``trustReadOnlyHints``): it passes like an
        ``autoApprove`` tool, after every ``deny`` and ``ask`` rule.
        ``effect``: what the call may do beyond reading (``capability.py``; ``effect_note``,
        the tool's words for it); in a read-only session, a call that may change anything
        is refused here, before anything else is consulted.
        ``mcp``: the call is the tool ``mcp[1]`` of the MCP server configured as ``mcp[0]``.
        """
        if self.policy.read_only:
            refusal = await anyio.to_thread.run_sync(
                read_only_refusal, tool, effect, preview, roots, effect_note
            )
            if refusal is not None:
                self.events.approval(call_id, "denied-by-default")
                return Verdict("denied-by-default", note=READ_ONLY_ADVICE, refused=refusal)
        floor = reason_for_preview(preview, roots)
        judged = await self._judge(tool, preview, roots, mcp)
        decided_by = judged.rules
        if judged.outcome == "deny":
            [rule] = judged.rules
            verdict = Verdict(
                "denied-by-default", denied_by=f"a {rule.scope} rule ({rule.tool}: {rule.pattern})"
            )
        elif floor is None and (
            judged.outcome == "allow"
            or (judged.outcome == "none" and (self.policy.covers(tool, preview, mcp) or read_only))
        ):
            builtin = judged.outcome == "allow" and all(r.scope == "builtin" for r in judged.rules)
            verdict = Verdict("auto", builtin=builtin)
            decided_by = judged.rules if judged.outcome == "allow" else ()
        elif (sandbox := self._sandbox(tool, preview, judged, floor, roots)) is not None:
            verdict = Verdict("auto", sandbox=sandbox)
        elif preview is None:
            verdict = Verdict("denied-by-default", note="there was nothing to show the user")
        else:
            # The user decides; an ``ask`` rule is named as what made the question.
            decided_by = judged.rules if judged.outcome == "ask" else ()
            shown = title if floor is None else f"{title} — {floor}"
            offered = await self._offer(tool, preview, roots, mcp) if floor is None else ()
            request = self._request(call_id, tool, shown, arguments, preview, offered)
            verdict = await self._ask(
                request, roots, remember=floor is None, change=change, mcp=mcp
            )
        if verdict.allowed and verdict.sandbox is None:
            verdict = replace(verdict, sandbox=self._walls(tool, preview, roots))
        if verdict.allowed and self.policy.read_only:
            if _changed(verdict, arguments):  # what was checked is not what would run
                refused = "the session is read-only, and the call was changed in the answer"
                verdict = Verdict("denied-by-default", note=READ_ONLY_ADVICE, refused=refused)
            elif effect == "command":  # proven to read only: run as the built-ins run theirs
                verdict = replace(verdict, builtin=True)
        backend = verdict.sandbox.backend if verdict.sandbox is not None else None
        self.events.approval(call_id, verdict.decision, decided_by, sandbox=backend)
        return verdict

    def _walls(self, tool: str, preview: Preview | None, roots: Sequence[Path]) -> Sandbox | None:
        """The sandbox an allowed call runs in: every command's, with the sandbox on."""
        if self.sandbox_for is None or tool not in SANDBOXED_TOOLS:
            return None
        return self.sandbox_for(roots) if isinstance(preview, CommandPreview) else None

    def _sandbox(
        self,
        tool: str,
        preview: Preview | None,
        judged: Judgement,
        floor: str | None,
        roots: Sequence[Path],
    ) -> Sandbox | None:
        """The sandbox a call that would be asked may run in unasked, or None."""
        if self.sandbox_for is None or tool not in SANDBOXED_TOOLS or floor is not None:
            return None
        if not isinstance(preview, CommandPreview) or judged.outcome != "none":
            return None
        if judged.unreadable:  # a deny rule could not be checked against it
            return None
        return self.sandbox_for(roots)

    async def reconsider(
        self,
        *,
        call_id: str,
        tool: str,
        title: str,
        arguments: dict[str, Any],
        preview: Preview,
        roots: Sequence[Path],
        reason: str,
    ) -> Verdict:
        """Ask whether a call that failed in the sandbox may run outside it, showing why."""
        shown = f"{title} — outside the sandbox: in it, {reason}"
        # The exact command at most: a wider rule (``echo *``) would let other commands
        # out of the sandbox the user allowed this one out of, and only this one.
        exact = (
            exact_command_pattern(preview.command) if isinstance(preview, CommandPreview) else None
        )
        offered = tuple(p for p in await self._offer(tool, preview, roots) if p == exact)
        request = self._request(call_id, tool, shown, arguments, preview, offered)
        verdict = await self._ask(request, roots, remember=True, only_offered=True)
        if verdict.allowed and self.policy.read_only and _changed(verdict, arguments):
            refused = "the session is read-only, and the call was changed in the answer"
            verdict = Verdict("denied-by-default", note=READ_ONLY_ADVICE, refused=refused)
        self.events.approval(call_id, verdict.decision)
        return verdict

    def _request(
        self,
        call_id: str,
        tool: str,
        title: str,
        arguments: dict[str, Any],
        preview: Preview,
        offered: Sequence[str],
    ) -> ApproveParams:
        return ApproveParams(
            run_id=self.events.run_id,
            call_id=call_id,
            tool=tool,
            title=title,
            arguments=arguments,
            preview=preview,
            suggested_patterns=list(offered) or None,
        )

    async def _offer(
        self,
        tool: str,
        preview: Preview,
        roots: Sequence[Path],
        mcp: tuple[str, str] | None = None,
    ) -> tuple[str, ...]:
        """The allow-always rules the question offers (parsing a command: off the loop); for
        an MCP tool, ``*`` when a rule can name it by its server's and its own names."""
        if mcp is not None:
            return (MCP_ANY,) if mcp_rule_tool(*mcp) is not None else ()
        return tuple(await anyio.to_thread.run_sync(suggest_patterns, tool, preview, roots))

    async def _judge(
        self,
        tool: str,
        preview: Preview | None,
        roots: Sequence[Path],
        mcp: tuple[str, str] | None = None,
    ) -> Judgement:
        try:
            rules = await self.policy.rules(roots)
        except Exception as exc:  # rules that cannot be read allow nothing; asking is safe
            log.warning("approval rules not read (asking): %s", exc)
            return Judgement("ask")
        # Parsing a long command takes a while (about 1 s for 250 KB): off the event loop.
        return await anyio.to_thread.run_sync(judge, tool, preview, rules, roots, mcp)

    async def _ask(
        self,
        request: ApproveParams,
        roots: Sequence[Path],
        *,
        remember: bool,
        only_offered: bool = False,
        change: FileEdit | None = None,
        mcp: tuple[str, str] | None = None,
    ) -> Verdict:
        """Ask the editor; ``remember``: store what allow-always picked; ``only_offered``: a
        picked rule is stored only if the question offered it."""
        try:
            # Cancelling the ask withdraws the question from the client (LspEditor sends
            # $/cancelRequest), so the editor closes it instead of keeping a stale Allow.
            with anyio.move_on_after(self.answer_timeout) as waited:
                answer = await self.editor.ask_approval(request, change)
            if waited.cancelled_caught:
                seconds = f"{self.answer_timeout:g}"
                log.info(
                    "no answer to the approval of %s within %s s (denied)", request.tool, seconds
                )
                return Verdict(
                    "denied-by-default",
                    note=f"No one answered the approval within {seconds} seconds, so it was "
                    "withdrawn; ask again only if it is still needed.",
                )
        except Exception as exc:  # a broken client must not be able to approve by failing
            log.warning("asking for approval failed (denied): %s", exc)
            answer = None
        if not isinstance(answer, ApproveResult):
            return Verdict("denied-by-default")
        problem = edited_text_problem(answer, request.preview)
        if problem is not None:  # the user changed something we cannot apply as they meant
            log.warning("unusable agent/approve answer (denied): %s", problem)
            return Verdict("denied-by-default")
        if answer.decision == "allow-always" and remember:  # never for a sensitive path
            changed = answer.arguments is not None and answer.arguments != request.arguments
            if answer.rule is not None:
                offered = request.suggested_patterns or []
                if only_offered and answer.rule.pattern not in offered:
                    log.warning(
                        "the picked rule %r was not offered: not stored", answer.rule.pattern
                    )
                elif not changed and answer.edited_text is None:
                    await self._store_picked(request, answer.rule, roots, mcp)
            else:
                self.policy.remember(request.tool, request.preview, changed=changed, mcp=mcp)
        return Verdict(answer.decision, answer.feedback, answer.arguments, answer.edited_text)

    async def _store_picked(
        self,
        request: ApproveParams,
        picked: ProposedRule,
        roots: Sequence[Path],
        mcp: tuple[str, str] | None = None,
    ) -> None:
        """Store the rule the user picked if it allows the very call shown; else nothing
        (the call itself was allowed once). An MCP tool's rule names it by its server's
        and its own names."""
        try:
            named = request.tool if mcp is None else mcp_rule_tool(*mcp)
            if named is None:
                log.warning("no rule can name %s: the picked rule is not stored", request.tool)
                return
            rule = Rule(tool=named, pattern=picked.pattern, decision="allow", scope=picked.scope)
            if judge(request.tool, request.preview, [rule], roots, mcp).outcome != "allow":
                log.warning(
                    "the picked rule %r does not cover the call: not stored", picked.pattern
                )
                return
            await self.policy.store_rule(rule, roots)
        except Exception as exc:  # a rule not stored must not turn the allow into a failure
            log.warning("the picked rule %r was not stored: %s", picked.pattern, exc)
