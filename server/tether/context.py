"""Keep the conversation inside the model's context: cut big outputs, compact old turns."""

from __future__ import annotations

from collections.abc import Sequence

from .providers.base import (
    AssistantMessage,
    Message,
    ModelRequest,
    Provider,
    TextDelta,
    ToolResultMessage,
    UserMessage,
    estimate_tokens,
)

MAX_RESULT_CHARS = 24_000
"""A tool result longer than this is cut (head and tail kept) before it enters history."""

DEFAULT_CONTEXT_WINDOW = 128_000
BUDGET_SHARE = 0.75
"""Without a configured budget, compact when the conversation fills this share of the window."""

SUMMARY_PROMPT = """\
Summarize the conversation below so that the work can continue from the summary alone.
Keep: the user's task and every requirement they stated; decisions taken and why; files
read or changed and what matters in them; the latest tool results that are still relevant;
what remains to be done. Be concise and concrete.

<conversation>
{transcript}
</conversation>"""


def cut_middle(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """``text`` with its middle replaced by a marker when longer than ``limit``."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n… [{cut} characters cut] …\n{text[-half:]}"


def conversation_tokens(system: str, history: Sequence[Message]) -> int:
    """A rough size of what one model call sends."""
    size = len(system)
    for message in history:
        if isinstance(message, ToolResultMessage):
            size += len(message.content)
        else:
            size += len(message.text)
            if isinstance(message, AssistantMessage):
                size += sum(len(str(c.arguments)) + len(c.name) for c in message.tool_calls)
    return estimate_tokens("x" * size)


def default_budget(provider: Provider) -> int:
    """The budget from the provider's context window (or a common default)."""
    window = getattr(provider, "context_window", None) or DEFAULT_CONTEXT_WINDOW
    return int(window * BUDGET_SHARE)


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
) -> list[Message] | None:
    """A shorter conversation: the task and a model-made summary, then the recent turns.

    None when there is nothing old enough to summarize.
    """
    cut = forced_point(history) if force else split_point(history, budget)
    if cut <= 1 or len(history) < 2:
        return None
    task = next((m.text for m in history if isinstance(m, UserMessage)), "")
    request = ModelRequest(
        system="You summarize coding-agent sessions.",
        messages=(UserMessage(SUMMARY_PROMPT.format(transcript=_transcript(history[:cut]))),),
        tools=(),
    )
    pieces = [d.text async for d in provider.stream(request) if isinstance(d, TextDelta)]
    summary = "".join(pieces).strip() or "(no summary)"
    head = UserMessage(f"{task}\n\n[Earlier work in this session, summarized]\n{summary}")
    tail = list(history[cut:])
    first = tail[0] if tail else None
    if isinstance(first, UserMessage):  # keep user and assistant turns alternating
        head = UserMessage(f"{head.text}\n\n{first.text}")
        tail = tail[1:]
    return [head, *tail]
