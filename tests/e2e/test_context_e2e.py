"""Context windows through `tether serve` against a fake OpenAI-compatible API: what the
model is sent stays within its window, and a refusal lowers it for the session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.providers.fakes import FakeApi, Sse, Status, openai_stream

from .conftest import Editor


def body_tokens(body: dict[str, Any]) -> int:
    """What one request sends to the model (messages and tools), four characters a token."""
    sent = json.dumps([body.get("messages"), body.get("tools")], ensure_ascii=False)
    return len(sent) // 4


def read(call_id: str, path: str) -> Sse:
    arguments = json.dumps({"path": path})
    return Sse(openai_stream("reading", calls=[(call_id, "read_file", [arguments])]))


def big_files(workspace: Path, *names: str) -> None:
    for name in names:
        (workspace / name).write_text(f"a line of {name}, long enough to matter\n" * 800)


@pytest.mark.parametrize(
    ("configured", "window"),
    [(None, 8_192), (4_000, 4_000)],
    ids=["default-window", "configured-window"],
)
async def test_an_unknown_local_model_is_sent_no_more_than_its_window(
    editor: Editor, workspace: Path, fake: FakeApi, configured: int | None, window: int
) -> None:
    big_files(workspace, "a.txt", "b.txt")
    options: dict[str, Any] = {
        "provider": "openai",
        "baseUrl": fake.url + "/v1",
        "model": "llama3.1:8b",
    }
    if configured is not None:
        options["contextWindowTokens"] = configured
    await editor.open_session(workspace, options=options)
    fake.queue(
        read("call_a", "a.txt"),
        read("call_b", "b.txt"),
        Sse(openai_stream("SUMMARY: a.txt and b.txt hold repeated lines.")),
        Sse(openai_stream("Both files repeat one line.")),
    )
    result = await editor.run(prompt="what is in a.txt and b.txt?", runId="r1")
    sizes = [body_tokens(r.body) for r in fake.requests]
    assert max(sizes) <= window, sizes
    assert result["outcome"] == "done" and result["answer"] == "Both files repeat one line."
    assert "compacted" in editor.kinds("r1")


async def test_a_refusal_lowers_the_window_for_the_rest_of_the_session(
    editor: Editor, workspace: Path, fake: FakeApi
) -> None:
    big_files(workspace, "a.txt")
    options = {"provider": "openai", "baseUrl": fake.url + "/v1", "model": "gpt-5.4"}
    await editor.open_session(workspace, options=options)
    fake.queue(Sse(openai_stream("Hello.")))
    first = await editor.run(prompt="say hello", runId="r1")
    too_long = Status(
        400,
        {
            "error": {
                "message": "This model's maximum context length is 4096 tokens.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
    )
    fake.queue(too_long, Sse(openai_stream("SUMMARY: said hello.")), Sse(openai_stream("Hi.")))
    second = await editor.run(prompt="again", runId="r2", sessionId=first["sessionId"])
    assert second["outcome"] == "done" and "compacted" in editor.kinds("r2")
    # A later run of the session reads a big file: the result is cut to fit the lowered
    # window (the table's is 272,000 tokens), so the model is not sent more than 4,096.
    before = len(fake.requests)
    fake.queue(read("call_a", "a.txt"), Sse(openai_stream("It repeats a line.")))
    third = await editor.run(prompt="what is in a.txt?", runId="r3", sessionId=first["sessionId"])
    sizes = [body_tokens(r.body) for r in fake.requests[before:]]
    assert len(sizes) == 2 and max(sizes) <= 4_096, sizes
    assert third["outcome"] == "done" and third["answer"] == "It repeats a line."
