"""A thinking block the Anthropic API refuses (its signature no longer accepted, a log
edited by hand), through `tether serve` against the fake API (the real SDK): a session
resumed by a server started afresh on a copy of its log goes on — the request is sent again
at once without the refused blocks, a `retry` event says why, and the model thinks again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.providers.fakes import FakeApi, Sse, anthropic_stream
from tether.client.headless import connect
from tether_protocol import RunEvent

from ..waiting import wait_until
from .conftest import Editor

EXPIRED = "EqQBCkYIBxgCKkD+ZXhwaXJlZA=="
READ_APP = [("toolu_1", "read_file", ['{"path": "src/app.py"}'])]


def settings(fake: FakeApi, state: Path) -> dict[str, object]:
    return {
        "provider": "anthropic",
        "baseUrl": fake.url,
        "model": "claude-sonnet-5-5",
        "reasoningEffort": "low",
        "stateDir": str(state),
    }


def signatures(body: dict[str, Any]) -> list[str]:
    return [
        block["signature"]
        for message in body["messages"]
        for block in message["content"]
        if block["type"] == "thinking"
    ]


async def test_a_resumed_session_whose_signature_is_refused_goes_on(
    editor: Editor, workspace: Path, fake: FakeApi, tmp_path: Path
) -> None:
    fake.queue(
        Sse(anthropic_stream(calls=READ_APP, thinking="Read app.py.", signature=EXPIRED)),
        Sse(anthropic_stream("It greets people.", thinking="A greeting.", signature="sig-2")),
    )
    await editor.open_session(workspace, options=settings(fake, editor.state_dir))
    first = await editor.run(prompt="what does app.py do?", runId="r1")
    assert first["outcome"] == "done" and first["answer"] == "It greets people."

    # A new process on a copy of the log, and an API that no longer accepts the signature.
    session_id = first["sessionId"]
    log = editor.state_dir / "sessions" / f"{session_id}.jsonl"

    def finished() -> bytes | None:
        data = log.read_bytes() if log.exists() else b""
        return data if b'"run-finished"' in data else None

    state = tmp_path / "another-process"
    (state / "sessions").mkdir(parents=True)
    (state / "sessions" / log.name).write_bytes(await wait_until(finished, "the log written"))
    fake.refused_signatures.add(EXPIRED)
    fake.queue(
        Sse(anthropic_stream(calls=READ_APP, thinking="Read it again.", signature="sig-3")),
        Sse(anthropic_stream("Still greets.", thinking="Same.", signature="sig-4")),
        Sse(anthropic_stream("Yes.", thinking="Sure.", signature="sig-5")),
    )
    events: list[RunEvent] = []
    async with connect(workspace, settings(fake, state)) as client:
        client.on_event = events.append
        resumed = await client.run("and now?", sessionId=session_id, runId="r2")
        again = await client.run("sure?", sessionId=session_id, runId="r3")
    assert resumed["outcome"] == "done" and resumed["answer"] == "Still greets.", resumed
    assert again["outcome"] == "done" and again["answer"] == "Yes.", again
    refused, retried, in_loop, later = (r.body for r in fake.requests[2:])
    assert signatures(refused) == [EXPIRED, "sig-2"]
    [retry] = [e for e in events if e.kind == "retry"]
    assert "did not accept the thinking kept from earlier turns" in retry.reason  # type: ignore[union-attr]
    assert "Invalid `signature` in `thinking` block" in retry.reason  # type: ignore[union-attr]
    # Sent again without the blocks the API refused; thinking stays on, and the model's new
    # thinking goes back with its tool loop (the fake holds the API's rule for it).
    assert signatures(retried) == [] and retried["thinking"]["type"] == "enabled"
    assert signatures(in_loop) == ["sig-3"]
    assert EXPIRED not in signatures(later) and "sig-4" in signatures(later)
