"""Whole runs through `tether serve` against fake OpenAI and Anthropic APIs (real SDKs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.providers.fakes import FakeApi, Sse, Status, anthropic_stream, openai_stream
from tether.client.headless import connect

from ..waiting import wait_until
from .conftest import Editor, script

READ_APP = ['{"pa', 'th": "src/', 'app.py"}']
ANSWER = ("It greets ", "people by name.")


def strings(value: object) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def options(fake: FakeApi, provider: str, model: str) -> dict[str, Any]:
    base_url = fake.url + "/v1" if provider == "openai" else fake.url
    return {"provider": provider, "baseUrl": base_url, "model": model}


def queue_read_then_answer(fake: FakeApi, provider: str) -> None:
    stream = openai_stream if provider == "openai" else anthropic_stream
    fake.queue(
        Sse(stream("Let me read it.", calls=[("call_1", "read_file", READ_APP)], usage=(100, 20))),
        Sse(stream(*ANSWER, usage=(150, 10))),
    )


@pytest.mark.parametrize(
    ("provider", "model", "cost"),
    [
        ("openai", "gpt-5.4", (250 * 2.5 + 30 * 15) / 1e6),
        ("anthropic", "claude-sonnet-5-5", (250 * 2 + 30 * 10) / 1e6),
    ],
)
async def test_a_read_then_answer_run(
    editor: Editor, workspace: Path, fake: FakeApi, provider: str, model: str, cost: float
) -> None:
    queue_read_then_answer(fake, provider)
    await editor.open_session(workspace, options=options(fake, provider, model))
    result = await editor.run(prompt="what does app.py do?", runId="r1")
    assert result["outcome"] == "done" and result["steps"] == 2
    assert result["answer"] == "It greets people by name."
    assert result["usage"]["inputTokens"] == 250 and result["usage"]["outputTokens"] == 30
    assert result["usage"]["costUsd"] == pytest.approx(cost)
    deltas = [e.text for e in editor.events_of("r1") if e.kind == "text-delta"]  # type: ignore[union-attr]
    assert deltas == ["Let me read it.", *ANSWER]
    [call] = [e for e in editor.events_of("r1") if e.kind == "tool-call"]
    assert (call.tool, call.arguments) == ("read_file", {"path": "src/app.py"})  # type: ignore[union-attr]
    # The tool's output went back to the model in the second request.
    first, second = fake.requests
    assert first.body["model"] == model
    assert any("return 'hello ' + name" in text for text in strings(second.body["messages"]))


async def test_the_same_run_against_a_local_server_with_configured_prices(
    editor: Editor, workspace: Path, fake: FakeApi
) -> None:
    queue_read_then_answer(fake, "openai")
    local = {
        **options(fake, "openai", "qwen3-coder:30b"),
        "prices": {"qwen3-coder:30b": {"inputPerMTok": 1, "outputPerMTok": 2}},
    }
    await editor.open_session(workspace, options=local)
    result = await editor.run(prompt="what does app.py do?")
    assert result["outcome"] == "done" and result["answer"] == "It greets people by name."
    assert result["usage"]["costUsd"] == pytest.approx((250 * 1 + 30 * 2) / 1e6)
    assert fake.requests[0].headers["authorization"] == "Bearer not-needed"
    assert "max_tokens" not in fake.requests[0].body  # a local server keeps its own limit


async def test_a_provider_that_keeps_failing_ends_the_run_in_error(
    editor: Editor, workspace: Path, fake: FakeApi
) -> None:
    failing = Status(500, {"error": {"message": "model crashed"}}, {"retry-after": "0"})
    fake.queue(*[failing] * 8)
    await editor.open_session(workspace, options=options(fake, "openai", "m"))
    result = await editor.run(prompt="hi", runId="r1")
    assert result["outcome"] == "error" and result["steps"] == 1
    assert result["error"] == (
        f"{fake.url}/v1 answered 500: model crashed (gave up after 4 attempts)"
    )
    assert len(fake.requests) == 4
    assert (await editor.run(prompt="still serving?"))["outcome"] == "error"  # server lives
    assert len(fake.requests) == 8


@pytest.mark.parametrize(("provider", "model"), [("openai", "m"), ("anthropic", "claude-m")])
async def test_a_stream_closed_after_partial_text_ends_the_run_in_error(
    editor: Editor, workspace: Path, fake: FakeApi, provider: str, model: str
) -> None:
    # The server closes the body after "partial ": no finish_reason/[DONE], no message_stop.
    stream = openai_stream if provider == "openai" else anthropic_stream
    cut_after = 2 if provider == "openai" else 4
    fake.queue(Sse(stream("partial ", "rest"), end_after=cut_after))
    await editor.open_session(workspace, options=options(fake, provider, model))
    result = await editor.run(prompt="hi", runId="r1")
    assert result["outcome"] == "error", result
    assert "stream was cut" in result["error"]
    assert len(fake.requests) == 1
    deltas = [e.text for e in editor.events_of("r1") if e.kind == "text-delta"]  # type: ignore[union-attr]
    assert deltas == ["partial "]


async def test_the_cost_budget_stops_a_real_provider_run(
    editor: Editor, workspace: Path, fake: FakeApi
) -> None:
    queue_read_then_answer(fake, "anthropic")
    await editor.open_session(workspace, options=options(fake, "anthropic", "claude-sonnet-5-5"))
    result = await editor.run(prompt="go", limits={"maxCostUsd": 0.0001})
    assert result["outcome"] == "budget" and result["steps"] == 1
    assert result["usage"]["costUsd"] == pytest.approx((100 * 2 + 20 * 10) / 1e6)


async def test_no_provider_configured_is_a_clear_error(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, options={"provider": None})
    with pytest.raises(JsonRpcException) as caught:
        await editor.run(prompt="hi")
    assert caught.value.code == -32602
    assert "no model provider is configured" in str(caught.value)
    assert "initializationOptions.provider" in str(caught.value)


@pytest.fixture
def without_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key in the environment the server is started with."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


async def test_a_missing_key_names_the_variable(
    without_keys: None, editor: Editor, workspace: Path
) -> None:
    # without_keys is requested first, so it applies before the server starts.
    await editor.open_session(workspace, options={"provider": "anthropic"})
    with pytest.raises(JsonRpcException) as caught:
        await editor.run(prompt="hi")
    assert caught.value.code == -32602 and "ANTHROPIC_API_KEY" in str(caught.value)


TOO_LONG = {
    "openai": Status(
        400,
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
    ),
    "anthropic": Status(
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 210000 tokens > 200000 maximum",
            },
        },
    ),
}


@pytest.mark.parametrize(
    ("provider", "model"), [("openai", "gpt-5.4"), ("anthropic", "claude-sonnet-5-5")]
)
async def test_a_too_long_prompt_is_compacted_once_and_retried(
    editor: Editor, workspace: Path, fake: FakeApi, provider: str, model: str
) -> None:
    stream = openai_stream if provider == "openai" else anthropic_stream
    await editor.open_session(workspace, options=options(fake, provider, model))
    queue_read_then_answer(fake, provider)
    first = await editor.run(prompt="what does app.py do?", runId="r1")
    fake.queue(
        TOO_LONG[provider],
        Sse(stream("SUMMARY: app.py greets people by name.", usage=(50, 10))),
        Sse(stream("Still greets.", usage=(60, 5))),
    )
    second = await editor.run(prompt="and now?", runId="r2", sessionId=first["sessionId"])
    assert second["outcome"] == "done" and second["answer"] == "Still greets."
    assert "compacted" in editor.kinds("r2")
    retried = fake.requests[-1].body
    sent = " ".join(strings(retried.get("messages")))
    assert "SUMMARY: app.py greets people by name." in sent and "and now?" in sent
    assert "Let me read it." not in sent  # the old turns were replaced by the summary


def tool_call_ids(provider: str, body: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The tool call ids a request holds, and each tool result's content by its call id."""
    calls: list[str] = []
    results: dict[str, str] = {}
    for message in body["messages"]:
        if provider == "openai":
            calls += [c["id"] for c in message.get("tool_calls") or []]
            if message["role"] == "tool":
                results[message["tool_call_id"]] = message["content"]
            continue
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block["type"] == "tool_use":
                calls.append(block["id"])
            elif block["type"] == "tool_result":
                results[block["tool_use_id"]] = block["content"]
    return calls, results


async def logged_lines(log: Path, needle: bytes) -> list[bytes]:
    """The log's lines once one contains ``needle`` (the writer thread flushes in batches)."""

    def holding() -> bytes | None:
        try:
            data = log.read_bytes()
        except FileNotFoundError:  # the writer thread has not created it yet
            return None
        return data if needle in data else None

    return (await wait_until(holding, f"{needle!r} in {log}")).splitlines()


@pytest.mark.parametrize(("provider", "model"), [("openai", "m"), ("anthropic", "claude-m")])
async def test_a_session_killed_during_a_tool_call_resumes_against_a_real_api(
    editor: Editor, workspace: Path, fake: FakeApi, tmp_path: Path, provider: str, model: str
) -> None:
    read_both = {
        "text": "reading both",
        "toolCalls": [
            {"name": "read_file", "arguments": {"path": "src/app.py"}},
            {"name": "read_file", "arguments": {"path": "README.md"}},
        ],
    }
    await editor.open_session(workspace, script=script(read_both, {"text": "read"}))
    first = await editor.run(prompt="read two files", runId="r1")
    session_id = first["sessionId"]
    log = editor.state_dir / "sessions" / f"{session_id}.jsonl"
    lines = await logged_lines(log, b'"run-finished"')
    # The log as kill -9 leaves it while the second call runs: its result was never written.
    first_result = next(i for i, line in enumerate(lines) if b'"role":"tool"' in line)
    state = tmp_path / "after-kill"
    (state / "sessions").mkdir(parents=True)
    (state / "sessions" / log.name).write_bytes(b"\n".join(lines[: first_result + 1]) + b"\n")

    stream = openai_stream if provider == "openai" else anthropic_stream
    fake.queue(Sse(stream("picking up again")))
    settings = {**options(fake, provider, model), "stateDir": str(state)}
    async with connect(workspace, settings) as client:
        resumed = await client.run("go on", sessionId=session_id, runId="r2")
        history = await client.request("agent/history", {"sessionId": session_id})
    assert resumed["outcome"] == "done", resumed
    assert resumed["answer"] == "picking up again"
    [sent] = fake.requests
    calls, results = tool_call_ids(provider, sent.body)
    assert len(calls) == 2 and set(results) == set(calls)  # every call has its result
    assert "interrupted" in results[calls[1]] and "hello" in results[calls[0]]
    runs = [e["runId"] for e in history["events"] if e["kind"] == "run-started"]
    assert runs == ["r1", "r2"]
