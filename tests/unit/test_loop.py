"""The agent loop with the scripted provider and in-memory tools: outcomes and history."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from tether.events import RunEvents
from tether.host import NoBuffers
from tether.prompt.untrusted import frame
from tether.providers.base import (
    AssistantMessage,
    Message,
    ModelRequest,
    ToolResultMessage,
    UserMessage,
)
from tether.providers.scripted import ScriptedProvider, split_text
from tether.run.loop import AgentLoop, Limits
from tether.tools.base import Tool, ToolArgs, ToolDeps, ToolError, ToolResult
from tether.tools.registry import ToolRegistry
from tether.workspace.folders import Workspace
from tether_protocol import RunEvent, Script

from ..waiting import wait_until


class EchoArgs(ToolArgs):
    text: str


class Echo(Tool[EchoArgs]):
    name: ClassVar[str] = "echo"
    description: ClassVar[str] = "Say it back."
    args_model: ClassVar[type[ToolArgs]] = EchoArgs

    async def run(self, args: EchoArgs, ctx: ToolDeps) -> ToolResult:
        if args.text == "fail":
            raise ToolError("asked to fail")
        if args.text == "crash":
            raise RuntimeError("a bug")
        if args.text == "sleep":
            await anyio.sleep(30)  # models a tool that runs long (it is cancelled, never awaited)
        return ToolResult(ok=True, output=args.text.upper())


class Collector:
    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def publish(self, event: RunEvent) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


def make_loop(
    tmp_path: Path, turns: list[dict[str, Any]], history: list[Message] | None = None, **kw: Any
) -> tuple[AgentLoop, Collector]:
    options = {k: kw.pop(k) for k in ("repeatLast", "delaySeconds") if k in kw}
    script = Script.model_validate({"turns": turns, **options})
    sink = Collector()
    loop = AgentLoop(
        provider=ScriptedProvider(script),
        tools=ToolRegistry([Echo()]),
        deps=ToolDeps(workspace=Workspace([tmp_path], NoBuffers()), run_id="r"),
        events=RunEvents("r", [sink]),
        limits=Limits(**kw),
        system="system",
        history=history if history is not None else [],
    )
    return loop, sink


def echo(text: str) -> dict[str, Any]:
    return {"name": "echo", "arguments": {"text": text}}


async def test_several_calls_in_one_reply_run_in_order(tmp_path: Path) -> None:
    loop, sink = make_loop(
        tmp_path, [{"text": "two", "toolCalls": [echo("a"), echo("b")]}, {"text": "ok"}]
    )
    state = await loop.run("go", "s")
    assert state.outcome == "done" and state.answer == "ok" and state.steps == 2
    results = [m for m in loop.history if isinstance(m, ToolResultMessage)]
    assert [(r.call_id, r.content) for r in results] == [
        ("call_1_1", frame("echo", "call_1_1", "A", [])),
        ("call_1_2", frame("echo", "call_1_2", "B", [])),
    ]
    assert [type(m).__name__ for m in loop.history] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]
    assert [e.seq for e in sink.events] == list(range(1, len(sink.events) + 1))


async def test_tool_failures_are_results_the_model_sees(tmp_path: Path) -> None:
    turns = [
        {
            "toolCalls": [
                echo("fail"),
                echo("crash"),
                {"name": "nope", "arguments": {}},
                {"name": "echo", "arguments": {"txt": "typo"}},
            ]
        },
        {"text": "recovered"},
    ]
    loop, sink = make_loop(tmp_path, turns)
    state = await loop.run("go", "s")
    assert state.outcome == "done"
    results = [m for m in loop.history if isinstance(m, ToolResultMessage)]
    assert all(r.is_error for r in results)
    assert results[0].content == frame("echo", "call_1_1", "asked to fail", [])
    assert "RuntimeError: a bug" in results[1].content
    assert "unknown tool 'nope'" in results[2].content
    assert "text: Field required" in results[3].content and "txt" in results[3].content


async def test_no_progress_stops_before_the_third_identical_call(tmp_path: Path) -> None:
    loop, sink = make_loop(tmp_path, [{"toolCalls": [echo("same")]}], repeatLast=True)
    state = await loop.run("go", "s")
    assert state.outcome == "no-progress" and state.steps == 3
    assert sink.kinds().count("tool-result") == 2
    # the unexecuted call still gets a result, so the history stays well-formed
    last = loop.history[-1]
    assert isinstance(last, ToolResultMessage) and last.is_error and "no-progress" in last.content


async def test_arguments_compare_as_canonical_json(tmp_path: Path) -> None:
    a = {"name": "echo", "arguments": {"text": "x"}}
    loop, _ = make_loop(
        tmp_path, [{"toolCalls": [a]}, {"toolCalls": [echo("y")]}, {"toolCalls": [a]}]
    )
    assert (await loop.run("go", "s")).outcome == "done"  # only two identical calls


async def test_max_steps(tmp_path: Path) -> None:
    loop, _ = make_loop(
        tmp_path, [{"toolCalls": [echo("a")]}, {"toolCalls": [echo("b")]}], max_steps=2
    )
    state = await loop.run("go", "s")
    assert (state.outcome, state.steps) == ("max-steps", 2)


async def test_max_steps_not_hit_when_the_last_step_answers(tmp_path: Path) -> None:
    loop, _ = make_loop(tmp_path, [{"toolCalls": [echo("a")]}, {"text": "fine"}], max_steps=2)
    assert (await loop.run("go", "s")).outcome == "done"


async def test_budget_on_tokens(tmp_path: Path) -> None:
    loop, sink = make_loop(
        tmp_path, [{"text": "y" * 800, "toolCalls": [echo("a")]}], repeatLast=True, max_tokens=100
    )
    state = await loop.run("go", "s")
    assert state.outcome == "budget" and state.steps == 1
    assert state.input_tokens + state.output_tokens > 100
    assert "usage" in sink.kinds()


async def test_timeout_aborts_a_running_tool(tmp_path: Path) -> None:
    loop, sink = make_loop(tmp_path, [{"toolCalls": [echo("sleep")]}], timeout_seconds=0.2)
    with anyio.fail_after(10):  # the limit is 0.2 s, the tool 30 s; generous for a loaded CI
        state = await loop.run("go", "s")
    assert state.outcome == "timeout"
    assert sink.kinds()[-1] == "run-finished"


async def test_cancel_aborts_the_model_call(tmp_path: Path) -> None:
    loop, sink = make_loop(tmp_path, [{"text": "slow"}], delaySeconds=30)
    # The model waits 30 s: a cancel that lands is far inside this bound, even on a loaded CI.
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(loop.run, "go", "s")
            await wait_until(lambda: "step" in sink.kinds(), "the model call to start")
            loop.cancel()
    assert loop.state.outcome == "cancelled"
    assert sink.events[-1].kind == "run-finished"


async def test_steer_joins_at_the_next_step(tmp_path: Path) -> None:
    loop, _ = make_loop(tmp_path, [{"toolCalls": [echo("a")]}, {"text": "ok"}])
    loop.steer("also check b")
    await loop.run("go", "s")
    users = [m.text for m in loop.history if isinstance(m, UserMessage)]
    assert users == ["go", "also check b"]


async def test_history_continues_a_session(tmp_path: Path) -> None:
    history: list[Message] = [UserMessage("earlier"), AssistantMessage("earlier answer")]
    seen: list[ModelRequest] = []
    loop, _ = make_loop(tmp_path, [{"text": "now"}], history=history)
    original = loop.provider.stream

    async def spy(request: ModelRequest):  # type: ignore[no-untyped-def]
        seen.append(request)
        async for delta in original(request):
            yield delta

    loop.provider.stream = spy  # type: ignore[method-assign]
    await loop.run("again", "s")
    assert [getattr(m, "text", None) for m in seen[0].messages] == [
        "earlier",
        "earlier answer",
        "again",
    ]


@pytest.mark.parametrize(
    ("text", "pieces"),
    [("Hello there world", ["Hello ", "there ", "world"]), ("ok", ["o", "k"]), ("", [])],
)
def test_text_is_streamed_in_several_pieces(text: str, pieces: list[str]) -> None:
    assert split_text(text) == pieces
