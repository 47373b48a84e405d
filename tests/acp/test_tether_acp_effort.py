"""``/effort`` typed in an ACP prompt, on the fake Anthropic API: it answers in the
conversation, the ``reasoningEffort`` option shows the new value, and the next prompt's
model request asks for that thinking budget; an unknown value is said with the values, and
the session goes on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.providers.fakes import FakeApi, Sse, anthropic_stream

from .recorder import NOTHING, RecordingClient
from .test_tether_acp_config import tether_acp_on


@pytest.fixture
def fake() -> Iterator[FakeApi]:
    with FakeApi() as api:
        yield api


async def test_effort_in_a_prompt_changes_the_next_prompts_thinking(
    tmp_path: Path, fake: FakeApi
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    fake.queue(Sse(anthropic_stream("First.")), Sse(anthropic_stream("Second.")))
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp_on(root, tmp_path, fake, client) as agent:
        session = await agent.new_session(root)
        offered = await agent.wait_for_update("available_commands_update", session)
        [effort] = [c for c in offered.update["availableCommands"] if c["name"] == "effort"]
        assert effort["input"] == {"hint": "off|low|medium|high"}
        assert (await agent.prompt(session, "one"))["stopReason"] == "end_turn"
        before = len(client.updates)
        assert (await agent.prompt(session, "/effort medium"))["stopReason"] == "end_turn"
        said = "".join(u.text() for u in client.updates[before:])
        assert "effort: medium from the next message on" in said
        [changed] = [u.update for u in client.updates[before:] if u.kind == "config_option_update"]
        [option] = [o for o in changed["configOptions"] if o["id"] == "reasoningEffort"]
        assert option["currentValue"] == "medium"
        before = len(client.updates)
        await agent.prompt(session, "/effort extreme")
        said = "".join(u.text() for u in client.updates[before:])
        assert "no effort 'extreme'; the efforts: off, low, medium, high" in said
        assert (await agent.prompt(session, "two"))["stopReason"] == "end_turn"
        client.assert_clean()
    first, second = (r.body for r in fake.requests)
    assert "thinking" not in first
    assert second["thinking"] == {"type": "enabled", "budget_tokens": 6_144}
