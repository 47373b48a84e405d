"""``ask_user`` through the real ``tether acp``: the spec's form elicitation to a client that
declared ``elicitation.form`` (answered, typed, declined), none to one that did not (the
model is told at once that no one can be asked). Every message is checked against the ACP
schema by the kit's client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from .recorder import Capabilities, RecordingClient
from .tether import EOF_WITHIN, call, tether_acp, turns

ASKS = Capabilities(read=False, write=False, terminal=False, elicitation=True)
SILENT = Capabilities(read=False, write=False, terminal=False)
QUESTION = "Which database?\x1b[2J\u202e"
CHOICES = ["sqlite", "postgres\x1b]52;c;x\x07"]


def _result(client: RecordingClient) -> dict[str, Any]:
    """The ask_user call's final update."""
    [done] = [
        u.update
        for u in client.updates
        if u.kind == "tool_call_update" and u.update.get("status") in ("completed", "failed")
    ]
    return done


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    return root


async def test_an_elicitation_answered_with_a_choice_reaches_the_model(tmp_path: Path) -> None:
    root = _root(tmp_path)
    ask = call("ask_user", question=QUESTION, choices=CHOICES, free_text=False)
    client = RecordingClient(
        capabilities=ASKS, elicit=lambda params: {"action": "accept", "content": {"choice": "2"}}
    )
    script = turns({"tool_calls": [ask]}, {"text": "postgres it is"})
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        answer = await agent.prompt(session, "set up the database")
        assert answer["stopReason"] == "end_turn"
        [asked] = client.elicitations
        [tool_call] = [u.update for u in client.updates if u.kind == "tool_call"]
        assert asked["sessionId"] == session
        assert asked["toolCallId"] == tool_call["toolCallId"]
        assert asked["mode"] == "form"
        assert asked["message"] == "Which database?\\x1b[2J\\u202e"  # shown, not acted on
        schema = asked["requestedSchema"]
        assert schema["required"] == ["choice"] and list(schema["properties"]) == ["choice"]
        options = schema["properties"]["choice"]["oneOf"]
        assert options == [
            {"const": "1", "title": "sqlite"},
            {"const": "2", "title": "postgres\\x1b]52;c;x\\x07"},
        ]
        done = _result(client)
        assert done["status"] == "completed"
        assert done["rawOutput"]["output"] == "The user chose: " + "postgres\\x1b]52;c;x\\x07"
        assert agent.text(session).endswith("postgres it is")
        assert not client.permissions  # a question is no approval
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_a_typed_answer_and_a_declined_question(tmp_path: Path) -> None:
    root = _root(tmp_path)
    answers = iter(
        [{"action": "accept", "content": {"answer": "  call it tether  "}}, {"action": "decline"}]
    )
    client = RecordingClient(capabilities=ASKS, elicit=lambda params: next(answers))
    ask = call("ask_user", question="What name?", choices=["a", "b"])
    script = turns({"tool_calls": [ask]}, {"text": "ok"})
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        await agent.prompt(session, "name it")
        schema = client.elicitations[0]["requestedSchema"]
        assert schema["required"] == []  # a choice or a typed answer
        assert list(schema["properties"]) == ["choice", "answer"]
        done = _result(client)
        assert done["status"] == "completed"
        assert done["rawOutput"]["output"] == "The user answered: call it tether"
        before = len(client.updates)
        answer = await agent.prompt(session, "name it again")
        assert answer["stopReason"] == "end_turn"  # the turn goes on
        [declined] = [
            u.update
            for u in client.updates[before:]
            if u.kind == "tool_call_update" and u.update.get("status") == "failed"
        ]
        assert "closed the question without answering" in declined["rawOutput"]["output"]
        assert len(client.elicitations) == 2
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_a_client_without_elicitation_is_not_asked(tmp_path: Path) -> None:
    root = _root(tmp_path)
    client = RecordingClient(capabilities=SILENT)
    ask = call("ask_user", question="Which one?", choices=["a", "b"])
    script = turns({"tool_calls": [ask]}, {"text": "I picked a"})
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        answer = await agent.prompt(session, "do it")
        assert answer["stopReason"] == "end_turn"
        assert client.elicitations == []
        assert not any(m.payload.get("method") == "elicitation/create" for m in client.messages)
        done = _result(client)
        assert done["status"] == "failed"
        assert done["rawOutput"]["output"].startswith("No one to ask")
        assert agent.text(session).endswith("I picked a")
        client.assert_clean()  # an undeclared elicitation/create would be a problem
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_a_cancelled_prompt_withdraws_its_question(tmp_path: Path) -> None:
    root = _root(tmp_path)
    withdrawn = asyncio.Event()

    async def slow(params: dict[str, Any]) -> dict[str, Any]:
        await withdrawn.wait()
        return {"action": "accept", "content": {"answer": "too late"}}  # dropped

    client = RecordingClient(capabilities=ASKS, elicit=slow)
    script = turns({"tool_calls": [call("ask_user", question="Which one?")]}, {"text": "ok"})
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        prompt = agent.start_prompt(session, "ask me")
        await client.wait_for(lambda: client.elicitations or None, "the question", 30)
        [asked] = [
            m.payload for m in client.messages if m.payload.get("method") == "elicitation/create"
        ]
        await agent.cancel(session)
        assert (await prompt)["stopReason"] == "cancelled"

        def withdrawal() -> bool:
            return any(
                m.payload.get("method") == "$/cancel_request"
                and m.payload["params"].get("requestId") == asked["id"]
                for m in client.messages
            )

        await client.wait_for(withdrawal, "the question withdrawn", 10)
        withdrawn.set()
        assert (await agent.prompt(session, "and now?"))["stopReason"] == "end_turn"
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
