"""Context limits that see the real model: the window of known and unknown models, requests
kept within it, a refusal lowering it for the session, and compaction's usage counted."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tether.config.assemble import assemble
from tether.config.layers import Config, ConfigError, resolve
from tether.errors import ContextTooLongError
from tether.events import RunEvents
from tether.host import NoBuffers
from tether.providers import make_provider
from tether.providers.base import (
    AssistantMessage,
    Message,
    ModelDelta,
    ModelRequest,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolResultMessage,
    UsageDelta,
    UserMessage,
)
from tether.run.loop import AgentLoop, Limits
from tether.run.window import ContextWindow, SessionWindows, stated_limit
from tether.tools.base import ToolDeps
from tether.tools.files import READ_TOOLS
from tether.tools.registry import ToolRegistry
from tether.workspace.folders import Workspace
from tether_protocol import RunEvent, TetherSettings, UsageEvent

ROOT = Path("/tmp")
KEY = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}


def config(**settings: object) -> Config:
    return resolve(TetherSettings(**settings), {"XDG_STATE_HOME": "/x"})  # type: ignore[arg-type]


def test_a_known_model_gets_its_window_from_the_table() -> None:
    def window(provider: str, model: str, **settings: object) -> int:
        made = make_provider(
            provider, config(provider=provider, model=model, **settings), ROOT, environ=KEY
        )
        return made.context_window

    assert window("openai", "gpt-4o-mini") == 128_000
    assert window("openai", "gpt-4") == 8_192
    assert window("openai", "gpt-4.1-2025-04-14") == 1_047_576
    assert window("anthropic", "claude-sonnet-4-5-20250929") == 200_000
    # behind a gateway the name still finds the model
    assert window("openai", "gpt-4o", base_url="http://127.0.0.1:4000/v1") == 128_000


def test_an_unknown_model_takes_the_configured_window_or_a_small_default() -> None:
    local = {"provider": "openai", "model": "llama3.1:8b", "base_url": "http://127.0.0.1:1/v1"}
    assert make_provider("openai", config(**local), ROOT, environ={}).context_window == 8_192
    configured = config(**local, context_window_tokens=32_768)
    assert make_provider("openai", configured, ROOT, environ={}).context_window == 32_768
    # the configured window is for models the table does not know
    known = config(provider="openai", model="gpt-4o-mini", context_window_tokens=32_768)
    assert make_provider("openai", known, ROOT, environ=KEY).context_window == 128_000
    # an unknown name on the vendor's own API is a newer model: a large window
    newer = config(provider="anthropic", model="claude-next")
    assert make_provider("anthropic", newer, ROOT, environ=KEY).context_window == 128_000
    scripted = config(provider="scripted", script={"turns": []}, context_window_tokens=4_000)
    assert make_provider("scripted", scripted, ROOT).context_window == 4_000


def test_the_window_setting_from_the_environment() -> None:
    settings = assemble(None, {"TETHER_CONTEXT_WINDOW_TOKENS": "16384"}).settings
    assert settings.context_window_tokens == 16_384
    with pytest.raises(ConfigError, match="^TETHER_CONTEXT_WINDOW_TOKENS: expected a whole"):
        assemble(None, {"TETHER_CONTEXT_WINDOW_TOKENS": "16k"})
    with pytest.raises(ConfigError, match="^TETHER_CONTEXT_WINDOW_TOKENS: .*1024"):
        assemble(None, {"TETHER_CONTEXT_WINDOW_TOKENS": "100"})


@pytest.mark.parametrize(
    ("refusal", "limit"),
    [
        ("This model's maximum context length is 8192 tokens. However, you requested", 8192),
        ("prompt is too long: 210000 tokens > 200000 maximum", 200_000),
        ("request (9000 tokens) exceeds the available context size (4096 tokens)", 4096),
        ("This model's maximum context length is 128,000 tokens.", 128_000),
        ("the prompt is too long", None),
    ],
)
def test_the_window_a_refusal_states(refusal: str, limit: int | None) -> None:
    assert stated_limit(refusal) == limit


def test_a_refusal_always_lowers_the_window() -> None:
    stated = ContextWindow(128_000)
    stated.lower(refused=30_000, stated=8_192)
    assert (stated.tokens, stated.lowered) == (8_192, True)
    unstated = ContextWindow(128_000)
    unstated.lower(refused=40_000, stated=None)
    assert unstated.tokens == 30_000
    # the estimate undercounted: the stated window is not below ours, so shrink anyway
    undercount = ContextWindow(200_000)
    undercount.lower(refused=150_000, stated=200_000)
    assert undercount.tokens == 150_000
    floor = ContextWindow(1_200)
    floor.lower(refused=100, stated=None)
    assert floor.tokens == 1_024


Reply = tuple[str, tuple[ToolCall, ...], tuple[int, int]] | Exception


class RecordingProvider:
    """A model that answers from a list and keeps every request it was sent."""

    name = "fake"
    model = "fake-model"

    def __init__(self, context_window: int, replies: list[Reply]) -> None:
        self.context_window = context_window
        self.replies = replies
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        self.requests.append(request)
        reply = self.replies.pop(0) if self.replies else ("done", (), (10, 1))
        if isinstance(reply, Exception):
            raise reply
        text, calls, usage = reply
        yield TextDelta(text)
        for call in calls:
            yield ToolCallReady(call)
        yield UsageDelta(*usage)


def request_tokens(request: ModelRequest) -> int:
    """What a request holds, four characters a token, counted independently of the server."""
    chars = len(request.system)
    for message in request.messages:
        if isinstance(message, ToolResultMessage):
            chars += len(message.content)
        else:
            chars += len(message.text)
        if isinstance(message, AssistantMessage):
            chars += sum(len(c.name) + len(json.dumps(c.arguments)) for c in message.tool_calls)
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return chars // 4


def long_history(turns: int, size: int) -> list[Message]:
    """A finished session of ``turns`` file reads of ``size`` characters each."""
    history: list[Message] = [UserMessage("read every file and report")]
    for n in range(turns):
        call = ToolCall(f"c{n}", "read_file", {"path": f"f{n}.txt"})
        history += [
            AssistantMessage(f"reading f{n}", (call,)),
            ToolResultMessage(
                call.call_id, "read_file", f"line of file {n}\n" * (size // 16), False
            ),
        ]
    history.append(AssistantMessage("all read"))
    return history


class Sink:
    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def publish(self, event: RunEvent) -> None:
        self.events.append(event)


def make_loop(
    tmp_path: Path,
    provider: RecordingProvider,
    history: list[Message],
    *,
    window: ContextWindow | None = None,
    limits: Limits | None = None,
) -> tuple[AgentLoop, Sink]:
    sink = Sink()
    loop = AgentLoop(
        provider=provider,
        tools=ToolRegistry(READ_TOOLS),
        deps=ToolDeps(workspace=Workspace([tmp_path], NoBuffers()), run_id="r"),
        events=RunEvents("r", [sink]),
        limits=limits or Limits(),
        system="You are a coding agent.",
        history=history,
        window=window,
    )
    return loop, sink


async def test_a_small_window_keeps_every_request_within_it(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("a line of the big file\n" * 2_000)
    read_big = ToolCall("c-big", "read_file", {"path": "big.txt"})
    provider = RecordingProvider(
        4_000,
        [
            ("SUMMARY of the reads", (), (100, 10)),
            ("reading big.txt", (read_big,), (100, 10)),
            ("it holds lines", (), (100, 10)),
        ],
    )
    loop, sink = make_loop(tmp_path, provider, long_history(turns=12, size=8_000))
    state = await loop.run("what is in big.txt?", "s")
    sizes = [request_tokens(r) for r in provider.requests]
    assert max(sizes) <= 4_000, sizes  # the history alone is ~24,000 tokens
    assert state.outcome == "done" and state.answer == "it holds lines"
    assert "compacted" in [e.kind for e in sink.events]


async def test_a_refusal_lowers_the_window_for_the_next_runs_of_the_session(
    tmp_path: Path,
) -> None:
    (tmp_path / "big.txt").write_text("a line of the big file\n" * 2_000)
    windows = SessionWindows()
    refusing = RecordingProvider(
        200_000,
        [
            ContextTooLongError("maximum context length is 8192 tokens"),
            ("SUMMARY", (), (100, 10)),
            ("answer", (), (100, 10)),
        ],
    )
    history = long_history(turns=4, size=8_000)
    window = windows.window("s", refusing)
    loop, _ = make_loop(tmp_path, refusing, history, window=window)
    assert (await loop.run("go on", "s")).outcome == "done"
    assert window.tokens == 8_192
    # The next run of the session, with a fresh provider of the same model, starts lowered:
    # the big file it reads is cut to fit, so its requests stay within 8,192 tokens.
    read_big = ToolCall("c-big", "read_file", {"path": "big.txt"})
    later = RecordingProvider(200_000, [("reading", (read_big,), (1, 1)), ("done", (), (1, 1))])
    assert windows.window("s", later).tokens == 8_192
    assert windows.window("another session", later).tokens == 200_000
    loop, _ = make_loop(tmp_path, later, history, window=windows.window("s", later))
    assert (await loop.run("read big.txt", "s")).outcome == "done"
    sizes = [request_tokens(r) for r in later.requests]
    assert len(sizes) == 2 and max(sizes) <= 8_192, sizes


async def test_compaction_usage_counts_in_the_run_totals(tmp_path: Path) -> None:
    provider = RecordingProvider(4_000, [("SUMMARY", (), (3_000, 200)), ("answer", (), (100, 10))])
    loop, sink = make_loop(tmp_path, provider, long_history(turns=6, size=8_000))
    state = await loop.run("go on", "s")
    assert state.outcome == "done" and len(provider.requests) == 2
    assert (state.input_tokens, state.output_tokens) == (3_100, 210)
    usage = [e for e in sink.events if isinstance(e, UsageEvent)]
    assert (usage[0].input_tokens, usage[0].output_tokens) == (3_000, 200)  # after the summary
    assert (usage[-1].input_tokens, usage[-1].output_tokens) == (3_100, 210)


async def test_compaction_alone_can_end_the_run_on_its_token_budget(tmp_path: Path) -> None:
    provider = RecordingProvider(4_000, [("SUMMARY", (), (3_000, 200)), ("answer", (), (100, 10))])
    loop, _ = make_loop(
        tmp_path, provider, long_history(turns=6, size=8_000), limits=Limits(max_tokens=2_000)
    )
    state = await loop.run("go on", "s")
    assert state.outcome == "budget" and state.steps == 1
    assert len(provider.requests) == 1  # the summary; the model was not asked again
    assert (state.input_tokens, state.output_tokens) == (3_000, 200)
