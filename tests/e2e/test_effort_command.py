"""``/effort`` through a real ``tether serve`` (as the terminal chat, VS Code, Neovim and
Emacs run it, with ``agent/command``) and in the terminal chat on a pseudo-terminal, against
the fake Responses API: it shows the effort, changes it for the next runs — the next request
asks for it — and refuses an unknown value with the values it takes, the server serving on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.providers.fake_responses import responses_stream
from tests.providers.fakes import FakeApi, Sse
from tether.client.connection import ServerError
from tether.client.headless import connect

from .test_cli_chat import ask, chat, leave
from .test_cli_terminal import assert_nothing_left, environment


def _options(fake: FakeApi, tmp_path: Path, **more: object) -> dict[str, object]:
    return {
        "provider": "openai",
        "baseUrl": fake.url + "/v1",
        "openaiApi": "responses",
        "model": "gpt-5.4",
        "stateDir": str(tmp_path / "state"),
        **more,
    }


async def test_effort_shows_and_changes_the_effort_of_the_next_runs(
    workspace: Path, tmp_path: Path, fake: FakeApi
) -> None:
    fake.queue(*(Sse(responses_stream(f"answer {n}")) for n in range(3)))
    async with connect(workspace, _options(fake, tmp_path, reasoningEffort="low")) as client:
        listed = await client.request("agent/commands", {})
        [effort] = [c for c in listed["commands"] if c["name"] == "effort"]
        assert effort["argument"] == "[off|low|medium|high]" and effort["description"]
        shown = await client.request("agent/command", {"name": "effort"})
        assert shown["message"] == "effort: low; /effort off|low|medium|high changes it"
        assert shown["choices"] == ["off", "low", "medium", "high"]
        first = await client.run("one")
        picked = await client.request("agent/command", {"name": "effort", "argument": "HIGH"})
        assert picked["message"] == "effort: high from the next message on"
        second = await client.run("two", sessionId=first["sessionId"])
        after = await client.request("agent/command", {"name": "effort"})
        await client.request("agent/command", {"name": "effort", "argument": "off"})
        third = await client.run("three", sessionId=first["sessionId"])
    assert [r["outcome"] for r in (first, second, third)] == ["done"] * 3
    asked = [r.body["reasoning"] for r in fake.requests]
    assert asked == [
        {"effort": "low", "summary": "auto"},
        {"effort": "high", "summary": "auto"},
        {"summary": "auto"},  # off: the model's own default
    ]
    assert after["message"].startswith("effort: high;")


async def test_an_unknown_effort_is_a_clear_error_listing_the_values(
    workspace: Path, tmp_path: Path, fake: FakeApi
) -> None:
    async with connect(workspace, _options(fake, tmp_path)) as client:
        with pytest.raises(ServerError) as refused:
            await client.request("agent/command", {"name": "effort", "argument": "max\x1b[2J"})
        still = await client.request("agent/command", {"name": "effort"})
    message = refused.value.message
    assert "no effort 'max\\x1b[2J'" in message and "\x1b" not in message
    assert "the efforts: off, low, medium, high" in message
    assert still["message"].startswith("effort: off;")  # unchanged, and the server serves on


async def test_the_terminal_chat_offers_and_runs_effort(tmp_path: Path, fake: FakeApi) -> None:
    env = environment(
        tmp_path,
        TETHER_PROVIDER="openai",
        TETHER_BASE_URL=fake.url + "/v1",
        TETHER_OPENAI_API="responses",
        TETHER_MODEL="gpt-5.4",
        OPENAI_API_KEY="test-key",
    )
    fake.queue(Sse(responses_stream("Thought hard.")))
    async with chat(env, tmp_path) as ui:
        await ask(ui, "/help")
        await ui.wait_for(r"/effort\s+show or change how hard the model thinks")
        await ask(ui, "/effort medium")
        await ui.wait_for("effort: medium from the next message on")
        await ask(ui, "/effort lots")
        await ui.wait_for("no effort 'lots'; the efforts: off, low, medium, high")
        await ask(ui, "think")
        await ui.wait_for("Thought hard.")
        await leave(ui)
        assert await ui.wait_for_exit() == 0, ui.text()
    assert fake.requests[0].body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert_nothing_left(env)
