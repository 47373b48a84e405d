"""Keep the conversation inside the model's context: cut big outputs, compact old turns.

Every request must fit the model's window (``Provider.context_window``, from the model
table or ``contextWindowTokens``). A session whose model refuses a prompt as too long
keeps a lowered window (``SessionWindows``), so its later calls fit without a refusal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..providers.base import (
    CHARS_PER_TOKEN,
    AssistantMessage,
    Message,
    ModelRequest,
    Provider,
    TextDelta,
    ToolResultMessage,
    ToolSpec,
    UsageDelta,
    UserMessage,
    tokens_for_chars,
)
from ..text.cut import MAX_RESULT_CHARS, cut_middle

BUDGET_SHARE = 0.75
"""Without a configured budget, compact when a request fills this share of the window
(the rest is left for the reply)."""

MIN_WINDOW = 1_024
"""A refusal never lowers a window below this."""

SUMMARY_PROMPT = """\
Summarize the conversation below so that the work can continue from the summary alone.
Keep: the user's task and every requirement they stated; decisions taken and why; files
read or changed and what matters in them; the latest tool results that are still relevant;
what remains to be done. Be concise and concrete.

<conversation>
{transcript}
</conversation>"""
SUMMARIZER = "You summarize coding-agent sessions."

# How APIs state the window in a prompt-too-long answer: OpenAI and vLLM ("maximum context
# length is 8192 tokens"), Anthropic ("210000 tokens > 200000 maximum"), llama.cpp
# ("the available context size (4096 tokens)").
_STATED_LIMIT = re.compile(
    r"maximum context length is (\d+)|> ?(\d+) maximum|context size \((\d+) tokens\)"
)


def conversation_tokens(system: str, history: Sequence[Message]) -> int:
    """A rough size of what one model call sends (without the tool definitions)."""
    size = len(system)
    for message in history:
        if isinstance(message, ToolResultMessage):
            size += len(message.content)
        else:
            size += len(message.text)
            if isinstance(message, AssistantMessage):
                size += sum(len(str(c.arguments)) + len(c.name) for c in message.tool_calls)
    return tokens_for_chars(size)


def tools_tokens(tools: Sequence[ToolSpec]) -> int:
    """A rough size of the tool definitions every request carries."""
    size = sum(len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in tools)
    return tokens_for_chars(size)


def stated_limit(refusal: str) -> int | None:
    """The window a prompt-too-long answer states, when it states one."""
    found = _STATED_LIMIT.search(refusal.replace(",", ""))
    if found is None:
        return None
    return int(next(group for group in found.groups() if group))


@dataclass(slots=True)
class ContextWindow:
    """The tokens one request of a session may hold: the model's window, lowered when the
    model refuses a prompt as too long."""

    tokens: int
    lowered: bool = False

    def budget(self, configured: int | None, tools: int) -> int:
        """How big the conversation may grow before it is compacted.

        ``configured`` (``contextBudgetTokens``) wins until the model has refused a prompt;
        from then on the lowered window caps it. ``tools`` is the size of the tool
        definitions, which every request carries besides the conversation.
        """
        from_window = max(int(self.tokens * BUDGET_SHARE) - tools, self.tokens // 4)
        if configured is None:
            return from_window
        return min(configured, from_window) if self.lowered else configured

    def lower(self, refused: int, stated: int | None) -> None:
        """Shrink after the model refused a request of about ``refused`` tokens.

        A window the answer states is believed; without one, three quarters of what was
        refused. Either way the window shrinks, as the estimate may undercount tokens.
        """
        target = min(self.tokens, stated) if stated else min(self.tokens, refused) * 3 // 4
        if target >= self.tokens:
            target = self.tokens * 3 // 4
        self.tokens = max(MIN_WINDOW, target)
        self.lowered = True


class SessionWindows:
    """The window of each session and model; a lowered one lasts while the server runs."""

    def __init__(self) -> None:
        self._windows: dict[tuple[str, str, str], ContextWindow] = {}

    def window(self, session_id: str, provider: Provider) -> ContextWindow:
        """The window the next run of ``session_id`` on ``provider``'s model works in."""
        key = (session_id, provider.name, provider.model)
        known = self._windows.get(key)
        # A window never lowered follows the provider (the configuration may have changed).
        if known is None or not known.lowered or known.tokens > provider.context_window:
            known = self._windows[key] = ContextWindow(provider.context_window)
        return known


def result_limit(budget: int) -> int:
    """Characters a tool result may keep: at most half the conversation budget."""
    return min(MAX_RESULT_CHARS, budget * CHARS_PER_TOKEN // 2)


def _transcript(messages: Sequence[Message]) -> str:
    lines = []
    for message in messages:
        if isinstance(message, UserMessage):
            lines.append(f"USER: {message.text}")
        elif isinstance(message, AssistantMessage):
            calls = "; ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
            lines.append(f"ASSISTANT: {message.text}" + (f" [calls: {calls}]" if calls else ""))
        else:
            lines.append(f"TOOL {message.tool}: {cut_middle(message.content, 4000)}")
    return "\n".join(lines)


def split_point(history: Sequence[Message], budget: int) -> int:
    """Where the kept recent part starts: the newest messages that fit in half the budget,
    and never between a call and its results."""
    index, size = len(history), 0
    while index > 1:
        size += conversation_tokens("", history[index - 1 : index])
        if size > budget // 2:
            break
        index -= 1
    while index < len(history) and isinstance(history[index], ToolResultMessage):
        index += 1
    return index


def forced_point(history: Sequence[Message]) -> int:
    """For a model that refused the prompt: summarize all but the latest user turn."""
    last_user = max((i for i, m in enumerate(history) if isinstance(m, UserMessage)), default=0)
    return last_user if last_user > 1 else len(history)


async def compact(
    provider: Provider,
    system: str,
    history: Sequence[Message],
    budget: int,
    *,
    force: bool = False,
    on_usage: Callable[[UsageDelta], None] | None = None,
) -> list[Message] | None:
    """A shorter conversation: the task and a model-made summary, then the recent turns.

    The summary request itself stays within ``budget`` (the transcript's middle is cut);
    ``on_usage`` receives what that model call used. None when there is nothing old
    enough to summarize.
    """
    cut = forced_point(history) if force else split_point(history, budget)
    if cut <= 1 or len(history) < 2:
        return None
    chars = budget * CHARS_PER_TOKEN
    task = next((m.text for m in history if isinstance(m, UserMessage)), "")
    task = cut_middle(task, chars // 4)
    room = max(chars - len(SUMMARY_PROMPT) - len(SUMMARIZER), chars // 2)
    transcript = cut_middle(_transcript(history[:cut]), room)
    request = ModelRequest(
        system=SUMMARIZER,
        messages=(UserMessage(SUMMARY_PROMPT.format(transcript=transcript)),),
        tools=(),
    )
    pieces: list[str] = []
    async for delta in provider.stream(request):
        if isinstance(delta, TextDelta):
            pieces.append(delta.text)
        elif isinstance(delta, UsageDelta) and on_usage is not None:
            on_usage(delta)
    summary = "".join(pieces).strip() or "(no summary)"
    head = UserMessage(f"{task}\n\n[Earlier work in this session, summarized]\n{summary}")
    tail = list(history[cut:])
    first = tail[0] if tail else None
    if isinstance(first, UserMessage):  # keep user and assistant turns alternating
        head = UserMessage(f"{head.text}\n\n{first.text}")
        tail = tail[1:]
    return [head, *tail]
