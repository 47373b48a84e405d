"""Extended thinking through `tether serve` against a fake Anthropic API (the real SDK):
streamed as `thinking` events, kept in the session log, and sent back unchanged, signature
and all, by a server started afresh on the same session."""

from __future__ import annotations

import json
from pathlib import Path

from tests.providers.fakes import FakeApi, Sse, anthropic_stream
from tether.client.headless import connect

from ..waiting import wait_until
from .conftest import Editor

SIGNATURE = "EqQBCkYIBxgCKkD+Zm9v/YmFy+c2ln=="
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"
READ_APP = [("toolu_1", "read_file", ['{"path": "src/app.py"}'])]


def settings(fake: FakeApi, state: Path) -> dict[str, object]:
    return {
        "provider": "anthropic",
        "baseUrl": fake.url,
        "model": "claude-sonnet-5-5",
        "reasoningEffort": "medium",
        "stateDir": str(state),
    }


async def test_thinking_is_streamed_logged_and_resumed_unchanged_in_a_new_server(
    editor: Editor, workspace: Path, fake: FakeApi, tmp_path: Path
) -> None:
    fake.queue(
        Sse(
            anthropic_stream(
                calls=READ_APP,
                thinking=["I should ", "read app.py."],
                signature=SIGNATURE,
                redacted=REDACTED,
            )
        ),
        Sse(anthropic_stream("It greets people.", thinking="It returns a greeting.")),
    )
    await editor.open_session(workspace, options=settings(fake, editor.state_dir))
    first = await editor.run(prompt="what does app.py do?", runId="r1")
    assert first["outcome"] == "done" and first["answer"] == "It greets people."
    thoughts = [e.text for e in editor.events_of("r1") if e.kind == "thinking"]  # type: ignore[union-attr]
    assert thoughts == ["I should ", "read app.py.", "It returns a greeting."]
    answer = [e.text for e in editor.events_of("r1") if e.kind == "text-delta"]  # type: ignore[union-attr]
    assert answer == ["It greets people."]
    assert fake.requests[0].body["thinking"] == {"type": "enabled", "budget_tokens": 6_144}
    sent_back = fake.requests[1].body["messages"][1]["content"]
    expected = [
        {"type": "thinking", "thinking": "I should read app.py.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED},
    ]
    assert sent_back[:2] == expected and sent_back[2]["type"] == "tool_use"

    # A new process on a copy of the log (this server holds the session): only the log
    # knows the blocks.
    session_id = first["sessionId"]
    log = editor.state_dir / "sessions" / f"{session_id}.jsonl"

    def finished() -> bytes | None:
        data = log.read_bytes() if log.exists() else b""
        return data if b'"run-finished"' in data else None

    state = tmp_path / "another-process"
    (state / "sessions").mkdir(parents=True)
    (state / "sessions" / log.name).write_bytes(await wait_until(finished, "the log written"))
    fake.queue(Sse(anthropic_stream("Still greets.")))
    async with connect(workspace, settings(fake, state)) as client:
        resumed = await client.run("and now?", sessionId=session_id, runId="r2")
        history = await client.request("agent/history", {"sessionId": session_id})
    assert resumed["outcome"] == "done", resumed
    turns = fake.requests[2].body["messages"]
    assert turns[1]["role"] == "assistant" and turns[1]["content"][:2] == expected
    assert turns[3]["role"] == "assistant"
    assert turns[3]["content"][0] == {
        "type": "thinking",
        "thinking": "It returns a greeting.",
        "signature": "sig-1",
    }
    logged = [e for e in history["events"] if e["kind"] == "thinking"]
    assert [e["text"] for e in logged] == ["I should ", "read app.py.", "It returns a greeting."]
    assert all(e["runId"] == "r1" for e in logged)
    assert json.dumps(SIGNATURE).encode() in log.read_bytes()
