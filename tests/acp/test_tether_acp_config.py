"""Session config options (the mode, the model, ``reasoningEffort``) and ``usage_update``
through ACP, on the fake Anthropic API: the test reads what each model request asked for, so
a change is seen to apply from the next model call — also one made while a turn waits on a
permission — and the cost each ``usage_update`` reports is the session's, across prompts and
processes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.providers.fakes import FakeApi, Sse, anthropic_stream

from .client import AcpAgent, RequestError
from .permissions import Choice, PermissionAsked
from .recorder import NOTHING, RecordingClient
from .tether import EOF_WITHIN, TETHER_ACP, tether_env

FIRST, SECOND = "claude-sonnet-4-5", "claude-haiku-4-5"
PRICES = (
    "[prices.claude-sonnet-4-5]\ninputPerMTok = 10000\noutputPerMTok = 0\n"
    "[prices.claude-haiku-4-5]\ninputPerMTok = 20000\noutputPerMTok = 0\n"
)
"""Dollars per million input tokens: a call of 100 input tokens costs $1 on the first
model and $2 on the second."""


@pytest.fixture
def fake() -> Iterator[FakeApi]:
    with FakeApi() as api:
        yield api


@asynccontextmanager
async def tether_acp_on(
    root: Path, state: Path, fake: FakeApi, client: RecordingClient
) -> AsyncIterator[AcpAgent]:
    """``tether acp`` in ``root`` on the fake Anthropic API, initialized."""
    env = tether_env(state, {"turns": []})
    config = state / "home" / ".config" / "tether"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(PRICES)
    env.update(TETHER_PROVIDER="anthropic", TETHER_BASE_URL=fake.url, TETHER_MODEL=FIRST)
    async with AcpAgent.spawn(TETHER_ACP, cwd=root, env=env, client=client) as agent:
        await agent.initialize()
        yield agent


def options(listed: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["id"]: o for o in listed}


def usages(client: RecordingClient) -> list[dict[str, Any]]:
    return [u.update for u in client.updates if u.kind == "usage_update"]


async def set_option(agent: AcpAgent, session: str, config: str, value: Any) -> Any:
    params = {"sessionId": session, "configId": config, "value": value}
    return await agent.request("session/set_config_option", params)


async def test_the_model_and_effort_apply_from_the_next_model_call_and_cost_is_the_sessions(
    tmp_path: Path, fake: FakeApi
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    edit = json.dumps({"path": "app.py", "old_text": "x = 1", "new_text": "x = 2"})
    fake.queue(
        Sse(anthropic_stream(calls=[("toolu_1", "edit_file", [edit])], usage=(100, 0))),
        Sse(anthropic_stream("Changed.", usage=(100, 0))),
        Sse(anthropic_stream("Still here.", usage=(100, 0))),
    )
    answers: list[Any] = []
    agent_box: list[AcpAgent] = []
    session_box: list[str] = []

    async def switch_then_allow(asked: PermissionAsked) -> Choice:
        # while the turn waits on this permission: the next model call uses the new ones
        agent, session = agent_box[0], session_box[0]
        answers.append(await set_option(agent, session, "model", SECOND))
        answers.append(await set_option(agent, session, "reasoningEffort", "high"))
        return "allow_once"

    client = RecordingClient(capabilities=NOTHING, permission=switch_then_allow)
    async with tether_acp_on(root, tmp_path, fake, client) as agent:
        agent_box.append(agent)
        session = await agent.new_session(root)
        session_box.append(session)
        offered = options(agent.last_session["configOptions"])
        assert list(offered) == ["mode", "model", "reasoningEffort"]
        assert [o["category"] for o in offered.values()] == ["mode", "model", "thought_level"]
        assert offered["mode"]["currentValue"] == "ask"
        assert [o["value"] for o in offered["mode"]["options"]] == [
            "ask",
            "accept-edits",
            "read-only",
        ]
        assert offered["model"]["currentValue"] == FIRST
        assert SECOND in [o["value"] for o in offered["model"]["options"]]
        assert offered["reasoningEffort"]["currentValue"] == "off"
        assert [o["value"] for o in offered["reasoningEffort"]["options"]] == [
            "off",
            "low",
            "medium",
            "high",
        ]

        assert (await agent.prompt(session, "make x 2"))["stopReason"] == "end_turn"
        first, second = fake.requests
        assert first.body["model"] == FIRST and "thinking" not in first.body
        assert second.body["model"] == SECOND
        assert second.body["thinking"] == {"type": "enabled", "budget_tokens": 16_384}
        assert options(answers[0]["configOptions"])["model"]["currentValue"] == SECOND
        after = options(answers[1]["configOptions"])
        assert after["reasoningEffort"]["currentValue"] == "high"
        assert after["model"]["currentValue"] == SECOND

        assert (await agent.prompt(session, "still there?"))["stopReason"] == "end_turn"
        assert fake.requests[2].body["model"] == SECOND
        seen = usages(client)
        assert [u["cost"]["amount"] for u in seen] == pytest.approx([1, 3, 5])
        assert {u["cost"]["currency"] for u in seen} == {"USD"}
        assert all(u["used"] == 100 and u["size"] > 0 for u in seen)

        for config, value in (("nope", "x"), ("model", ""), ("reasoningEffort", "extreme")):
            with pytest.raises(RequestError) as refused:
                await set_option(agent, session, config, value)
            assert refused.value.code == -32602
        with pytest.raises(RequestError) as boolean:
            params = {"sessionId": session, "configId": "mode", "type": "boolean", "value": True}
            await agent.request("session/set_config_option", params)
        assert boolean.value.code == -32602

        # the mode, both ways: each method keeps the other's view in step
        changed = await set_option(agent, session, "mode", "read-only")
        assert options(changed["configOptions"])["mode"]["currentValue"] == "read-only"
        moved = await agent.wait_for_update("current_mode_update", session)
        assert moved.update["currentModeId"] == "read-only"
        await agent.set_mode(session, "accept-edits")
        update = await agent.wait_for_update("config_option_update", session)
        assert options(update.update["configOptions"])["mode"]["currentValue"] == "accept-edits"
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean

    fake.queue(Sse(anthropic_stream("Back.", usage=(100, 0))))
    again = RecordingClient(capabilities=NOTHING)
    async with tether_acp_on(root, tmp_path, fake, again) as agent:
        params = {"sessionId": session, "cwd": str(root), "mcpServers": []}
        resumed = options((await agent.request("session/resume", params))["configOptions"])
        assert resumed["model"]["currentValue"] == FIRST  # the configured one again
        await agent.prompt(session, "one more")
        [usage] = usages(again)
        assert usage["cost"]["amount"] == pytest.approx(6)  # 5 before, 1 now
        again.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
