"""The tool registry: validates a call's arguments and runs the tool, failures as values."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio
from pydantic import ValidationError

from ..errors import ToolError
from ..host import FileEdit, ReportsDrift
from ..providers.base import ToolCall, ToolSpec
from .base import Proposal, Tool, ToolArgs, ToolDeps, ToolResult
from .progress import ReportProgress

if TYPE_CHECKING:
    from ..policy.gate import Verdict

log = logging.getLogger(__name__)


def describe_validation_error(tool: str, exc: ValidationError) -> str:
    """A short, model-readable account of what was wrong with the arguments."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        problems.append(f"{where}: {err['msg']}")
    return f"invalid arguments for {tool}: " + "; ".join(problems)


def with_drift_notes(result: ToolResult, deps: ToolDeps) -> ToolResult:
    """``result`` plus a note for each applied edit of the run whose buffer, when the editor
    reported it, differed from what was approved."""
    if not isinstance(deps.editor, ReportsDrift):
        return result
    found = deps.editor.take_drift(deps.run_id)
    if not found:
        return result
    notes = "\n\n".join(d.describe(deps.workspace.display(d.path)) for d in found)
    return replace(result, output=f"{result.output}\n\n{notes}")


@runtime_checkable
class TakesEditedText(Protocol):
    """A tool whose proposal the user may edit as text (its diff preview's window)."""

    def revise(
        self, args: Any, proposal: Proposal, edited_text: str
    ) -> tuple[ToolArgs, Proposal] | None:
        """The call with the user's text for the proposed window; None when unchanged."""
        ...


def changed_note(arguments: dict[str, Any]) -> str:
    """What the model is told when the user changed its call before allowing it."""
    shown = json.dumps(arguments, ensure_ascii=False)
    return f"Note: the user changed this call before allowing it; it ran with {shown}\n"


def noted(result: ToolResult, note: str) -> ToolResult:
    """``result`` with ``note`` before its output, everything else (its edits) kept."""
    return replace(result, output=note + result.output) if note else result


async def performed(
    tool: Tool[Any], args: ToolArgs, proposal: Proposal, call: ToolCall, deps: ToolDeps
) -> ToolResult:
    """``tool.perform``, between the checkpoint before the step and its change set after
    (taken even when the step fails or is cancelled: it may have changed files)."""
    checkpoints = deps.checkpoints
    if checkpoints is None or proposal.read_only:
        return await tool.perform(args, proposal, deps)
    taken = await checkpoints.before(
        call.name, call.call_id, proposal.title, proposal.change, deps.step
    )
    edits: tuple[FileEdit, ...] = ()
    try:
        result = await tool.perform(args, proposal, deps)
        edits = result.edits
        return result
    finally:
        with anyio.CancelScope(shield=True):
            await checkpoints.after(taken, edits)


class ToolRegistry:
    """The tools a run may call, by name."""

    def __init__(self, tools: Iterable[Tool[Any]]) -> None:
        self._tools: dict[str, Tool[Any]] = {t.name: t for t in tools}

    @property
    def names(self) -> list[str]:
        """Tool names in registration order."""
        return list(self._tools)

    def get(self, name: str) -> Tool[Any] | None:
        """The tool called ``name``, if there is one."""
        return self._tools.get(name)

    async def ready(self, progress_of: Callable[[str, str], ReportProgress]) -> str | None:
        """Before a run's first model call, wait (bounded) for tools still being made
        available — a session's MCP servers starting — reporting the wait as the progress
        of the call ``progress_of(call_id, tool)`` names; what the model should be told of
        the tools still missing (None: nothing is)."""
        return None

    async def label(self, name: str) -> str | None:
        """What the fronts call the tool ``name`` when its name is no name for people
        (waiting, where the tool's source is still starting, until it is known)."""
        tool = self.get(name)
        return None if tool is None else tool.label

    def presented(self, name: str, arguments: dict[str, Any]) -> tuple[str, str]:
        """A call's kind and title as a front shows them (the tool's own; ``other`` and
        the name for a tool not here)."""
        tool = self.get(name)
        return ("other", name) if tool is None else (tool.kind, tool.title(arguments))

    def specs(self) -> Sequence[ToolSpec]:
        """The tools as the model sees them."""
        return [
            ToolSpec(t.name, t.description, t.parameters_schema()) for t in self._tools.values()
        ]

    def parse(self, call: ToolCall) -> tuple[Tool[Any], ToolArgs]:
        """The tool and validated arguments of a call; ``ToolError`` when unusable."""
        tool = self.get(call.name)
        if tool is None:
            raise ToolError(f"unknown tool {call.name!r}; available tools: {', '.join(self.names)}")
        if call.arguments_error is not None:
            raise ToolError(
                f"the arguments of {call.name} were not valid JSON: {call.arguments_error}"
            )
        try:
            return tool, tool.args_model.model_validate(call.arguments)
        except ValidationError as exc:
            raise ToolError(describe_validation_error(call.name, exc)) from exc

    async def execute(self, call: ToolCall, deps: ToolDeps) -> ToolResult:
        """Run one call. Every failure, expected or not, comes back as a ``ToolResult``.

        A read-only tool runs directly; a call that needs approval is proposed (its diff or
        command computed), decided by the approval gate, and only then performed. The
        result also carries what the editor reported since about the run's applied edits.
        """
        return with_drift_notes(await self._execute(call, deps), deps)

    async def _execute(self, call: ToolCall, deps: ToolDeps) -> ToolResult:
        try:
            tool, args = self.parse(call)
            if not tool.needs_approval:
                return await tool.run(args, deps)
            return await self._approved(tool, args, call, deps)
        except ToolError as exc:
            return ToolResult.failure(str(exc))
        except Exception as exc:  # a bug in a tool must not end the run or the server
            log.exception("tool %s failed", call.name)
            return ToolResult.failure(f"{call.name} failed: {type(exc).__name__}: {exc}")

    async def _approved(
        self, tool: Tool[Any], args: ToolArgs, call: ToolCall, deps: ToolDeps
    ) -> ToolResult:
        proposal = await tool.propose(args, deps)
        if deps.gate is None:
            return ToolResult.failure(f"{call.name} is not allowed here (no one to approve it)")
        verdict = await deps.gate.decide(
            call_id=call.call_id,
            tool=call.name,
            title=proposal.title,
            arguments=call.arguments,
            preview=proposal.preview,
            roots=deps.workspace.roots,
            read_only=proposal.read_only,
            change=proposal.change,
            effect=tool.effect,
            effect_note=tool.effect_note,
            mcp=tool.mcp_name,
        )
        if not verdict.allowed:
            if verdict.refused is not None:
                reason = verdict.refused
            elif verdict.decision == "deny":
                reason = "the user denied it"
            elif verdict.denied_by is not None:
                rule, _, named = verdict.denied_by.partition(" (")
                reason = f"{rule} denies it ({named}" if named else f"{rule} denies it"
            else:
                reason = "no one allowed it"
            message = f"Not done: {reason}; nothing was changed."
            if verdict.note:
                message += f" {verdict.note}"
            if verdict.feedback:
                message += f" The user said: {verdict.feedback}"
            return ToolResult.failure(message)
        note = ""
        if verdict.edited_text is not None:
            if not isinstance(tool, TakesEditedText):
                return ToolResult.failure(f"Not done: {call.name} cannot take edited text.")
            revised = tool.revise(args, proposal, verdict.edited_text)
            if revised is not None:  # performed as approved: the window as the user left it
                args, proposal = revised
                note = changed_note(args.model_dump(exclude_defaults=True))
        else:
            args, proposal, note = await self._as_changed(tool, args, proposal, call, verdict, deps)
        proposal = replace(proposal, sandbox=verdict.sandbox, builtin=verdict.builtin)
        result = await performed(tool, args, proposal, call, deps)
        if result.blocked is not None and proposal.sandbox is not None:
            result = await self._outside(tool, args, proposal, call, deps, result, result.blocked)
        return noted(result, note)

    async def _as_changed(
        self,
        tool: Tool[Any],
        args: ToolArgs,
        proposal: Proposal,
        call: ToolCall,
        verdict: Verdict,
        deps: ToolDeps,
    ) -> tuple[ToolArgs, Proposal, str]:
        """The call with the arguments the user changed in the answer, proposed again, and
        the note telling the model so; as it was (and no note) when the user changed none."""
        if verdict.arguments is None or verdict.arguments == call.arguments:
            return args, proposal, ""
        if not tool.takes_changed_arguments:
            raise ToolError(
                f"Not done: the user changed the arguments of {call.name}, which cannot be "
                "run changed; nothing was called."
            )
        changed = {**call.arguments, **verdict.arguments}
        _, args = self.parse(ToolCall(call.call_id, call.name, changed))
        return args, await tool.propose(args, deps), changed_note(changed)

    async def _outside(
        self,
        tool: Tool[Any],
        args: ToolArgs,
        proposal: Proposal,
        call: ToolCall,
        deps: ToolDeps,
        failed: ToolResult,
        reason: str,
    ) -> ToolResult:
        """A call that failed in the sandbox for lack of reach: ask whether it may run
        outside, showing why; run it there only if the user allows."""
        assert deps.gate is not None  # the sandbox was the gate's verdict
        verdict = await deps.gate.reconsider(
            call_id=call.call_id,
            tool=call.name,
            title=proposal.title,
            arguments=call.arguments,
            preview=proposal.preview,
            roots=deps.workspace.roots,
            reason=reason,
        )
        if not verdict.allowed:
            said = f" The user said: {verdict.feedback}" if verdict.feedback else ""
            if verdict.refused is not None:
                said = f" {verdict.refused[:1].upper()}{verdict.refused[1:]}."
            message = (
                f"It ran in the sandbox and failed: {reason}. Running it outside the sandbox "
                f"was not allowed.{said}"
            )
            return replace(failed, output=f"{failed.output}\n{message}", blocked=None)
        outside = (
            f"Note: in the sandbox {reason}; the user allowed it outside, and this is that run.\n"
        )
        unsandboxed = replace(proposal, sandbox=None)
        args, unsandboxed, note = await self._as_changed(
            tool, args, unsandboxed, call, verdict, deps
        )
        return noted(await performed(tool, args, unsandboxed, call, deps), outside + note)
