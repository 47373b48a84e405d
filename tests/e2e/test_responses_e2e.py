"""OpenAI's Responses API through `tether serve` against a fake server (the real SDK):
reasoning summaries streamed as `thinking` events, the reasoning items kept in the session
log with their encrypted content and sent back by a server started afresh on the same
session; an item the API refuses is left out, said in a `retry` event, and the session
goes on."""

from __future__ import annotations

import json
from pathlib import Path

from tests.providers.fake_responses import responses_stream
from tests.providers.fakes import FakeApi, Sse, Status
from tether.client.headless import connect

from ..waiting import wait_until
from .conftest import Editor

ENCRYPTED = "gAAAAABpZm9v+YmFy/ZW5j=="
READ_APP = [("call_1", "read_file", ['{"path": "src/app.py"}'])]


def settings(fake: FakeApi, state: Path) -> dict[str, object]:
    return {
        "provider": "openai",
        "baseUrl": fake.url + "/v1",
        "openaiApi": "responses",
        "model": "gpt-5.4",
        "reasoningEffort": "low",
        "stateDir": str(state),
    }


def reasoning_items(body: dict[str, object]) -> list[object]:
    items = body["input"]
    assert isinstance(items, list)
    return [item for item in items if item.get("type") == "reasoning"]


async def test_reasoning_is_streamed_logged_and_sent_back_by_a_new_server(
    editor: Editor, workspace: Path, fake: FakeApi, tmp_path: Path
) -> None:
    fake.queue(
        Sse(responses_stream(calls=READ_APP, summary=[["Read ", "app.py."]], encrypted=ENCRYPTED)),
        Sse(responses_stream("It greets people.", summary=[["A greeting."]], encrypted="e2")),
    )
    await editor.open_session(workspace, options=settings(fake, editor.state_dir))
    first = await editor.run(prompt="what does app.py do?", runId="r1")
    assert first["outcome"] == "done" and first["answer"] == "It greets people."
    thoughts = [e.text for e in editor.events_of("r1") if e.kind == "thinking"]  # type: ignore[union-attr]
    assert thoughts == ["Read ", "app.py.", "A greeting."]
    sent = fake.requests[0].body
    assert sent["reasoning"] == {"effort": "low", "summary": "auto"} and sent["store"] is False
    kept = {
        "type": "reasoning",
        "id": "rs_resp_1",
        "summary": [{"type": "summary_text", "text": "Read app.py."}],
        "encrypted_content": ENCRYPTED,
    }
    assert reasoning_items(fake.requests[1].body) == [kept]

    # A new process on a copy of the log (this server holds the session): only the log
    # knows the items.
    session_id = first["sessionId"]
    log = editor.state_dir / "sessions" / f"{session_id}.jsonl"

    def finished() -> bytes | None:
        data = log.read_bytes() if log.exists() else b""
        return data if b'"run-finished"' in data else None

    state = tmp_path / "another-process"
    (state / "sessions").mkdir(parents=True)
    (state / "sessions" / log.name).write_bytes(await wait_until(finished, "the log written"))
    fake.queue(Sse(responses_stream("Still greets.")))
    async with connect(workspace, settings(fake, state)) as client:
        resumed = await client.run("and now?", sessionId=session_id, runId="r2")
    assert resumed["outcome"] == "done", resumed
    second = {
        "type": "reasoning",
        "id": "rs_resp_1",
        "summary": [{"type": "summary_text", "text": "A greeting."}],
        "encrypted_content": "e2",
    }
    assert reasoning_items(fake.requests[2].body) == [kept, second]
    assert json.dumps(ENCRYPTED).encode() in log.read_bytes()


async def test_a_refused_item_is_left_out_said_and_the_session_goes_on(
    editor: Editor, workspace: Path, fake: FakeApi
) -> None:
    fake.queue(Sse(responses_stream("One.", summary=[["Hm."]], encrypted="made-by-another-key")))
    await editor.open_session(workspace, options=settings(fake, editor.state_dir))
    first = await editor.run(prompt="one?", runId="r1")
    assert first["outcome"] == "done"
    refused = {
        "error": {
            "message": "The encrypted content gAAA...Bo== could not be verified.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_encrypted_content",
        }
    }
    fake.queue(Status(400, refused), Sse(responses_stream("Two.")), Sse(responses_stream("3.")))
    second = await editor.run(prompt="two?", runId="r2", sessionId=first["sessionId"])
    assert second["outcome"] == "done" and second["answer"] == "Two.", second
    [retry] = [e for e in editor.events_of("r2") if e.kind == "retry"]
    assert "did not accept the reasoning kept from earlier turns" in retry.reason  # type: ignore[union-attr]
    assert "could not be verified" in retry.reason  # type: ignore[union-attr]
    assert len(reasoning_items(fake.requests[1].body)) == 1
    assert reasoning_items(fake.requests[2].body) == []
    third = await editor.run(prompt="three?", runId="r3", sessionId=first["sessionId"])
    assert third["outcome"] == "done" and third["answer"] == "3."
    assert reasoning_items(fake.requests[3].body) == []  # not tried again in this process
