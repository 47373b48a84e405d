"""The agent loop: build context → call the model → run the tools it asks for → repeat.

Guards (steps, timeout, budget, no-progress, cancel) are plain checks around it, and the
outcome is returned, never thrown: a cancelled or failed run still says what it did.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import anyio

from tether_protocol import Outcome

from ..errors import ContextTooLongError, ProviderError
from ..events import RunEvents
from ..prompt.untrusted import find_markers, frame
from ..providers.base import (
    AssistantMessage,
    Message,
    ModelRequest,
    Provider,
    Reasoning,
    ReasoningReady,
    RetryNotice,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallReady,
    ToolResultMessage,
    UsageDelta,
    UserMessage,
)
from ..text.cut import cut_middle
from ..tools.base import EditJournal, ToolDeps
from ..tools.registry import ToolRegistry
from .window import (
    ContextWindow,
    compact,
    conversation_tokens,
    result_limit,
    stated_limit,
    tools_tokens,
)

log = logging.getLogger(__name__)

REPEAT_LIMIT = 3
"""The third identical call in a run is not executed: the run ends ``no-progress``."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What a run may spend."""

    max_steps: int = 40
    timeout_seconds: float = 900.0
    max_tokens: int | None = None
    max_cost_usd: float | None = None


@dataclass(slots=True)
class RunState:
    """What a run has done so far; the result is built from it whatever the outcome."""

    steps: int = 0
    answer: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    changed_files: list[str] = field(default_factory=list)
    outcome: Outcome | None = None
    error: str | None = None


def call_key(call: ToolCall) -> str:
    """A call's identity for repeat detection: tool name + canonical JSON arguments."""
    return call.name + "\0" + json.dumps(call.arguments, sort_keys=True, separators=(",", ":"))


class Recorder(EditJournal, Protocol):
    """Where the conversation and edits are kept (the session log)."""

    def message(self, message: Message) -> None: ...

    def history(self, messages: Sequence[Message]) -> None: ...

    def error(self, text: str) -> None: ...


class AgentLoop:
    """One run of the agent over a conversation (``history`` is extended in place)."""

    def __init__(
        self,
        *,
        provider: Provider,
        tools: ToolRegistry,
        deps: ToolDeps,
        events: RunEvents,
        limits: Limits,
        system: str,
        history: list[Message],
        recorder: Recorder | None = None,
        context_budget: int | None = None,
        window: ContextWindow | None = None,
    ) -> None:
        self.provider = provider
        self.tools = tools
        # Edits are logged by the tools as they are sent, before any result exists.
        if recorder is not None and deps.journal is None:
            deps = replace(deps, journal=recorder)
        self.deps = deps
        self.events = events
        self.limits = limits
        self.system = system
        self.history = history
        self.recorder = recorder
        self.window = window or ContextWindow(provider.context_window)
        self._configured_budget = context_budget
        self._tools_tokens = tools_tokens(tools.specs())
        self.state = RunState()
        self._seen: Counter[str] = Counter()
        self._steers: list[str] = []
        self._cancel = anyio.CancelScope()

    @property
    def context_budget(self) -> int:
        """How big the conversation may grow before older turns are compacted."""
        return self.window.budget(self._configured_budget, self._tools_tokens)

    def cancel(self) -> None:
        """Stop the run now: the model stream and any running tool are aborted."""
        if self.state.outcome is None:
            self.state.outcome = "cancelled"
        self._cancel.cancel()

    def steer(self, message: str) -> None:
        """Add a user message at the next step boundary, without stopping the run."""
        self._steers.append(message)

    async def run(self, prompt: str, session_id: str, message: str | None = None) -> RunState:
        """Run to an outcome; never raises for anything the run itself did. ``message`` is
        what the model reads of the prompt when it differs (e.g. with files attached)."""
        self.events.run_started(prompt, session_id)
        self._remember(UserMessage(message or prompt))
        try:
            with self._cancel, anyio.move_on_after(self.limits.timeout_seconds) as deadline:
                try:
                    await self._tools_ready()
                    await self._steps()
                except ProviderError as exc:
                    self._finish("error", str(exc))
                except Exception as exc:  # a bug ends this run, not the server
                    log.exception("run %s failed", self.events.run_id)
                    self._finish("error", f"internal error: {type(exc).__name__}: {exc}")
            if deadline.cancelled_caught:
                self._finish("timeout")
        finally:
            if self.deps.checkpoints is not None:  # the last step's, finishing in a thread
                try:
                    await self.deps.checkpoints.settle()
                except Exception:  # the run has ended all the same
                    log.exception("run %s: the last checkpoint not recorded", self.events.run_id)
            self._close_open_calls()
            self._finish("cancelled")  # only takes effect when nothing else ended the run
            if self.state.error is not None and self.recorder is not None:
                self.recorder.error(self.state.error)  # before run-finished: the run's last line
            self.events.run_finished(self.state.outcome or "cancelled", self.state.steps)
        return self.state

    def _remember(self, message: Message) -> None:
        self.history.append(message)
        if self.recorder is not None:
            self.recorder.message(message)

    def _finish(self, outcome: Outcome, error: str | None = None) -> None:
        if self.state.outcome is None:
            self.state.outcome = outcome
            self.state.error = error

    async def _tools_ready(self) -> None:
        """Tools still being made available (a session's MCP servers starting) are waited
        for, bounded and shown as progress, before the first model call; what is still
        missing the model reads in the system prompt."""
        note = await self.tools.ready(self.events.progress_of)
        if note:
            self.system = f"{self.system}\n\n{note}"
        self._tools_tokens = tools_tokens(self.tools.specs())

    async def _steps(self) -> None:
        while True:
            if self.state.steps >= self.limits.max_steps:
                return self._finish("max-steps")
            for text in self._steers:
                self._remember(UserMessage(text))
            self._steers.clear()
            self.state.steps += 1
            self.events.step(self.state.steps)
            if conversation_tokens(self.system, self.history) > self.context_budget:
                await self._compact()
                if self._over_budget():  # the summary's own model call counts
                    return self._finish("budget")
            try:
                reply = await self._query()
            except ContextTooLongError as exc:
                sent = conversation_tokens(self.system, self.history) + self._tools_tokens
                self.window.lower(sent, stated_limit(str(exc)))  # for the rest of the session
                if not await self._compact(force=True):
                    raise
                if self._over_budget():
                    return self._finish("budget")
                reply = await self._query()
            if self._over_budget():
                return self._finish("budget")
            if not reply.tool_calls:
                return self._finish("done")
            for call in reply.tool_calls:
                tool = self.tools.get(call.name)
                if tool is None or not tool.answers_change:  # waiting on a job: it may
                    self._seen[call_key(call)] += 1
                    if self._seen[call_key(call)] >= REPEAT_LIMIT:
                        return self._finish("no-progress")
                await self._execute(call)

    async def _query(self) -> AssistantMessage:
        request = ModelRequest(self.system, tuple(self.history), self.tools.specs())
        pieces: list[str] = []
        calls: list[ToolCall] = []
        reasoning: list[Reasoning] = []
        async for delta in self.provider.stream(request):
            if isinstance(delta, TextDelta):
                pieces.append(delta.text)
                self.events.text_delta(delta.text)
            elif isinstance(delta, ThinkingDelta):
                self.events.thinking(delta.text)
            elif isinstance(delta, ReasoningReady):
                reasoning.append(delta.block)  # sent back unchanged, kept in the log
            elif isinstance(delta, ToolCallReady):
                calls.append(delta.call)
            elif isinstance(delta, UsageDelta):
                self._count(delta)
            elif isinstance(delta, RetryNotice):
                self.events.retry(delta.attempt, delta.delay_seconds, delta.reason)
        reply = AssistantMessage("".join(pieces), tuple(calls), tuple(reasoning))
        self._remember(reply)
        if reply.text:
            self.state.answer = reply.text
        self.events.assistant(reply.text)
        self.events.usage(self.state.input_tokens, self.state.output_tokens, self.state.cost_usd)
        return reply

    def _count(self, usage: UsageDelta) -> None:
        self.state.input_tokens += usage.input_tokens
        self.state.output_tokens += usage.output_tokens
        if usage.cost_usd is not None:
            self.state.cost_usd = (self.state.cost_usd or 0.0) + usage.cost_usd

    def _over_budget(self) -> bool:
        limits, state = self.limits, self.state
        tokens = state.input_tokens + state.output_tokens
        if limits.max_tokens is not None and tokens > limits.max_tokens:
            return True
        cost = state.cost_usd
        return limits.max_cost_usd is not None and cost is not None and cost > limits.max_cost_usd

    async def compact_now(self) -> tuple[int, int] | None:
        """Compact the conversation outside a run (``/compact``), as a run does when the
        model refuses a prompt as too long: every turn before the latest user turn becomes
        the summary. ``(tokens before, tokens after)``, or None when there is no earlier
        turn to summarize; ``ProviderError`` when the summary's model call fails."""
        users = [i for i, m in enumerate(self.history) if isinstance(m, UserMessage)]
        if len(users) < 2 or users[-1] <= 1:
            return None
        before = conversation_tokens(self.system, self.history)
        if not await self._compact(force=True):
            return None
        return before, conversation_tokens(self.system, self.history)

    async def _compact(self, force: bool = False) -> bool:
        """Replace older turns with a summary; False when there was nothing to compact."""
        before = conversation_tokens(self.system, self.history)
        shorter = await compact(
            self.provider,
            self.system,
            self.history,
            self.context_budget,
            force=force,
            on_usage=self._count,
        )
        if shorter is None:
            return False
        self.events.usage(self.state.input_tokens, self.state.output_tokens, self.state.cost_usd)
        self.history[:] = shorter
        if self.recorder is not None:
            self.recorder.history(shorter)
        self.events.compacted(before, conversation_tokens(self.system, self.history))
        return True

    async def _execute(self, call: ToolCall) -> None:
        label = await self.tools.label(call.name)
        self.events.tool_call(call.call_id, call.name, call.arguments, label)
        progress = self.events.progress_of(call.call_id, call.name)  # a command's, for people
        deps = replace(self.deps, progress=progress, step=self.state.steps, call_id=call.call_id)
        result = await self.tools.execute(call, deps)
        for edit in result.edits:
            if edit.uri not in self.state.changed_files:
                self.state.changed_files.append(edit.uri)
        self.events.tool_result(
            call.call_id, call.name, result.ok, result.output, result.error, label
        )
        if result.plan is not None:
            self.events.plan(result.plan)
        # Half of what the window leaves, so that one result fits (whatever the configured
        # budget); checked for injections as the model will read it (cheap on 1 MB).
        shown = cut_middle(
            result.output, result_limit(self.window.budget(None, self._tools_tokens))
        )
        markers = find_markers(shown)
        if markers:
            self.events.injection_flagged(call.call_id, call.name, markers)
        content = frame(call.name, call.call_id, shown, markers)
        self._remember(ToolResultMessage(call.call_id, call.name, content, not result.ok))

    def _close_open_calls(self) -> None:
        """Give every call of the last reply a result, so the history stays well-formed."""
        last = next((m for m in reversed(self.history) if isinstance(m, AssistantMessage)), None)
        if last is None:
            return
        answered = {m.call_id for m in self.history if isinstance(m, ToolResultMessage)}
        reason = self.state.outcome or "cancelled"
        for call in last.tool_calls:
            if call.call_id not in answered:
                note = f"not run: the run ended ({reason}) before this call"
                self._remember(ToolResultMessage(call.call_id, call.name, note, True))
