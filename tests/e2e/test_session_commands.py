"""``agent/commands`` and ``agent/command`` through a real ``tether serve``, as any front
(the chat, an editor, an ACP front) uses them: the list, then each command on a session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether.client.connection import ServerError
from tether.client.headless import connect
from tether.session.store import load

from .conftest import script


def _options(tmp_path: Path, *turns: dict[str, Any]) -> dict[str, Any]:
    return {
        "provider": "scripted",
        "script": script(*turns),
        "stateDir": str(tmp_path / "state"),
        "autoApprove": ["write_file"],
    }


async def test_the_list_names_each_session_command_once(workspace: Path, tmp_path: Path) -> None:
    async with connect(workspace, _options(tmp_path, {"text": "hi"})) as client:
        listed = await client.request("agent/commands", {})
    names = [c["name"] for c in listed["commands"]]
    assert names == ["undo", "rewind", "new", "model", "effort", "compact", "cost", "jobs"]
    model = next(c for c in listed["commands"] if c["name"] == "model")
    assert model["argument"] == "[NAME]" and model["description"]


async def test_undo_puts_back_the_sessions_last_run_and_cost_counts_its_runs(
    workspace: Path, tmp_path: Path
) -> None:
    target = workspace / "notes.txt"
    target.write_text("old\n")
    write = {
        "toolCalls": [
            {"name": "write_file", "arguments": {"path": "notes.txt", "content": "new\n"}}
        ]
    }
    async with connect(workspace, _options(tmp_path, write, {"text": "done"})) as client:
        ran = await client.run("rewrite notes")
        assert target.read_text() == "new\n"
        session = ran["sessionId"]
        undone = await client.request("agent/command", {"name": "undo", "sessionId": session})
        assert target.read_text() == "old\n"
        assert undone["files"] == [target.as_uri()] and "put back: notes.txt" in undone["message"]
        again = await client.request("agent/command", {"name": "undo", "sessionId": session})
        assert again["message"].startswith("nothing to undo") and again["files"] == []
        cost = await client.request("agent/command", {"name": "cost", "sessionId": session})
        assert cost["message"].startswith(f"session {session}: 1 run · ")
        new = await client.request("agent/command", {"name": "new", "sessionId": session})
        assert new["newSession"] is True


async def test_undo_says_which_hunks_of_a_file_changed_since_it_kept(
    workspace: Path, tmp_path: Path
) -> None:
    target = workspace / "notes.txt"
    old = "".join(f"{i}\n" for i in range(20))
    target.write_text(old)
    new = old.replace("2\n", "two\n", 1).replace("15\n", "fifteen\n")
    write = {
        "toolCalls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": new}}]
    }
    async with connect(workspace, _options(tmp_path, write, {"text": "done"})) as client:
        ran = await client.run("rewrite notes")
        mine = new.replace("two\n", "two, said the user\n")
        target.write_text(mine)
        undone = await client.request(
            "agent/command", {"name": "undo", "sessionId": ran["sessionId"]}
        )
    assert target.read_text() == mine.replace("fifteen\n", "15\n")
    assert undone["files"] == [target.as_uri()]
    assert (
        "partly put back: notes.txt (1 hunk put back, 1 changed since kept as they are)"
        in undone["message"]
    )


async def test_model_picks_the_model_of_later_runs(workspace: Path, tmp_path: Path) -> None:
    async with connect(workspace, _options(tmp_path, {"text": "hi"})) as client:
        shown = await client.request("agent/command", {"name": "model"})
        assert shown["message"].startswith("model: ")
        picked = await client.request("agent/command", {"name": "model", "argument": "tiny"})
        assert picked["message"] == "model: tiny from the next message on"
        after = await client.request("agent/command", {"name": "model"})
        assert after["message"].startswith("model: tiny (scripted)")
        assert after["choices"] == ["tiny"]  # the scripted provider has no table of models


async def test_model_without_a_name_offers_the_providers_models(
    workspace: Path, tmp_path: Path
) -> None:
    options = {**_options(tmp_path), "provider": "anthropic", "model": "claude-haiku-4-5"}
    async with connect(workspace, options) as client:
        shown = await client.request("agent/command", {"name": "model"})
        local = {**options, "baseUrl": "http://127.0.0.1:9/v1", "model": "qwen3"}
        await client.notify("workspace/didChangeConfiguration", {"settings": {"tether": local}})
        behind_a_server = await client.request("agent/command", {"name": "model"})
    choices = shown["choices"]
    assert choices[0] == "claude-haiku-4-5" and choices.count("claude-haiku-4-5") == 1
    assert "claude-sonnet-4-5" in choices and all(c.startswith("claude-") for c in choices)
    assert behind_a_server["choices"] == ["qwen3"]  # the table is not that server's


async def test_an_unknown_command_or_session_is_a_clear_error(
    workspace: Path, tmp_path: Path
) -> None:
    async with connect(workspace, _options(tmp_path, {"text": "hi"})) as client:
        with pytest.raises(ServerError) as unknown:
            await client.request("agent/command", {"name": "frobnicate"})
        assert "no command 'frobnicate'" in unknown.value.message
        assert "undo, rewind, new, model, effort, compact, cost, jobs" in unknown.value.message
        with pytest.raises(ServerError) as session:
            await client.request("agent/command", {"name": "cost", "sessionId": "s-nope"})
        assert "unknown session 's-nope'" in session.value.message


SUMMARY = "SUMMARY: the user pasted two long lists of notes."


async def test_compact_summarizes_the_earlier_turns_and_the_next_run_carries_the_summary(
    workspace: Path, tmp_path: Path
) -> None:
    # Each run (and /compact) makes its own scripted model: its first turn answers them all.
    options = _options(tmp_path, {"text": SUMMARY})
    alpha, beta = "alpha line\n" * 600, "beta line\n" * 600
    async with connect(workspace, options) as client:
        nothing = await client.request("agent/command", {"name": "compact"})
        assert nothing["message"] == "nothing to compact: no session yet"
        first = await client.run("keep the notes tidy")
        session = first["sessionId"]
        alone = await client.request("agent/command", {"name": "compact", "sessionId": session})
        assert alone["message"].startswith("nothing to compact")  # one turn: nothing before it
        await client.run(alpha, sessionId=session)
        long = await client.run(beta, sessionId=session)
        done = await client.request("agent/command", {"name": "compact", "sessionId": session})
        message = done["message"]
        assert message.startswith("compacted: ") and " tokens" in message, message
        before, after = (
            int(n.replace(",", "")) for n in message[11:].split(" tokens")[0].split(" → ")
        )
        assert after < before // 1.5, message
        after_run = await client.run("and now?", sessionId=session)
        assert after_run["outcome"] == "done"
        cost = await client.request("agent/command", {"name": "cost", "sessionId": session})
    # The next run's request held the summary, not the alpha turn: it was that much smaller
    # (the scripted model's input tokens are the request's size).
    assert after_run["usage"]["inputTokens"] < long["usage"]["inputTokens"] - 1000
    stored = load(tmp_path / "state", session)
    assert stored is not None
    history = [getattr(m, "text", "") for m in stored.history]
    assert "[Earlier work in this session, summarized]" in history[0] and SUMMARY in history[0]
    assert "keep the notes tidy" in history[0]  # the task stays
    assert not any("alpha line" in text for text in history), [t[:300] for t in history]
    assert any("beta line" in text for text in history)  # the latest turn before it is kept
    assert history[-2:] == ["and now?", SUMMARY]
    assert cost["message"].startswith(f"session {session}: 5 runs · ")  # the summary's call


async def test_compact_refuses_a_session_with_a_run_in_flight_or_unknown(
    workspace: Path, tmp_path: Path
) -> None:
    async with connect(workspace, _options(tmp_path, {"text": "hi"})) as client:
        with pytest.raises(ServerError) as unknown:
            await client.request("agent/command", {"name": "compact", "sessionId": "s-nope"})
        assert "unknown session 's-nope'" in unknown.value.message
