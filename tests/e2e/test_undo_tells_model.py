"""After an undo the model is told, in its conversation, before the session's next prompt:
through ``/undo`` (``agent/command``: the chats, the VS Code panel, ACP) and ``agent/undo``
(an editor's Undo button), in the same server and after a restart that reads the log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.providers.fakes import FakeApi, Sse, openai_stream
from tether.client.headless import connect


def _write(content: str) -> Sse:
    arguments = json.dumps({"path": "notes.txt", "content": content})
    return Sse(openai_stream(calls=[("call_1", "write_file", [arguments])]))


def _options(fake: FakeApi, state: Path) -> dict[str, Any]:
    return {
        "provider": "openai",
        "baseUrl": fake.url + "/v1",
        "model": "gpt-5.4",
        "stateDir": str(state),
        "autoApprove": ["write_file"],
    }


def _user_texts(body: dict[str, Any]) -> list[str]:
    texts = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        texts.append(content if isinstance(content, str) else "".join(p["text"] for p in content))
    return texts


async def _undo(client: Any, how: str, session: str, run_id: str) -> None:
    if how == "command":
        await client.request("agent/command", {"name": "undo", "sessionId": session})
    else:
        await client.request("agent/undo", {"runId": run_id})


@pytest.mark.parametrize("how", ["command", "agent/undo"])
@pytest.mark.parametrize("restart", [False, True], ids=["same server", "after a restart"])
async def test_the_next_prompt_of_the_session_reads_what_was_undone(
    workspace: Path, tmp_path: Path, fake: FakeApi, how: str, restart: bool
) -> None:
    target = workspace / "notes.txt"
    target.write_text("old\n")
    fake.queue(_write("new\n"), Sse(openai_stream("rewrote it")), Sse(openai_stream("ok")))
    state = tmp_path / "state"
    async with connect(workspace, _options(fake, state)) as client:
        ran = await client.run("rewrite notes")
        session = ran["sessionId"]
        assert target.read_text() == "new\n"
        await _undo(client, how, session, ran["runId"])
        assert target.read_text() == "old\n"
        if not restart:
            await client.run("what is in notes.txt?", sessionId=session)
    if restart:
        async with connect(workspace, _options(fake, state)) as client:
            await client.run("what is in notes.txt?", sessionId=session)
    texts = _user_texts(fake.requests[-1].body)
    [note] = [t for t in texts if "undid" in t]
    assert ran["runId"] in note and "put back: notes.txt" in note
    assert texts.index(note) == len(texts) - 2 and "what is in notes.txt?" in texts[-1]
    # Told once: the request before the undo did not have it, and a later prompt has it once.
    assert not any("undid" in t for t in _user_texts(fake.requests[1].body))


async def test_later_prompts_read_the_note_once(
    workspace: Path, tmp_path: Path, fake: FakeApi
) -> None:
    (workspace / "notes.txt").write_text("old\n")
    replies = [Sse(openai_stream(text)) for text in ("rewrote it", "ok", "still ok")]
    fake.queue(_write("new\n"), *replies)
    async with connect(workspace, _options(fake, tmp_path / "state")) as client:
        ran = await client.run("rewrite notes")
        session = ran["sessionId"]
        await _undo(client, "command", session, ran["runId"])
        await client.run("and now?", sessionId=session)
        await client.run("and again?", sessionId=session)
    texts = _user_texts(fake.requests[-1].body)
    assert [t for t in texts if "undid" in t] == [texts[1]] and texts[-1] == "and again?"
