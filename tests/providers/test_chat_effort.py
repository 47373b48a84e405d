"""``reasoningEffort`` on Chat Completions through the real SDK against the fake API: OpenAI's
own endpoint (``openaiApi: chat``, no ``baseUrl``) gets ``reasoning_effort`` for a reasoning
model; a model that does not reason, and a compatible server behind ``baseUrl``, get none."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tether.config.layers import Config, resolve
from tether.providers import make_provider
from tether.providers.openai import OpenAIProvider
from tether_protocol import TetherSettings

from .conftest import drain
from .fakes import FakeApi, Sse, openai_stream


def chat_provider(
    fake: FakeApi, monkeypatch: pytest.MonkeyPatch, **settings: object
) -> OpenAIProvider:
    """The provider ``make_provider`` builds for OpenAI's own endpoint (no ``baseUrl``),
    its SDK pointed at the fake by its own ``OPENAI_BASE_URL``."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url + "/v1")
    config: Config = resolve(
        TetherSettings(provider="openai", openaiApi="chat", **settings),  # type: ignore[arg-type]
        {"XDG_STATE_HOME": "/x"},
    )
    provider = make_provider("openai", config, Path("/tmp"), environ={"OPENAI_API_KEY": "k"})
    assert isinstance(provider, OpenAIProvider) and provider._base_url is None
    return provider


@pytest.mark.parametrize("effort", ["low", "medium", "high"])
async def test_openais_endpoint_gets_the_effort_of_a_reasoning_model(
    fake: FakeApi, monkeypatch: pytest.MonkeyPatch, effort: str
) -> None:
    fake.queue(Sse(openai_stream("hi")))
    await drain(chat_provider(fake, monkeypatch, model="gpt-5.4", reasoningEffort=effort))
    [sent] = fake.requests
    assert sent.path == "/v1/chat/completions" and sent.body["reasoning_effort"] == effort


async def test_effort_off_sends_none_the_model_uses_its_own(
    fake: FakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.queue(Sse(openai_stream("hi")))
    await drain(chat_provider(fake, monkeypatch, model="o3", reasoningEffort="off"))
    assert "reasoning_effort" not in fake.requests[0].body


async def test_a_model_that_does_not_reason_ignores_the_effort_with_one_note(
    fake: FakeApi, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    fake.queue(Sse(openai_stream("hi")), Sse(openai_stream("again")))
    with caplog.at_level(logging.INFO, logger="tether.providers.openai"):
        for _ in range(2):
            await drain(chat_provider(fake, monkeypatch, model="gpt-4o", reasoningEffort="high"))
    assert all("reasoning_effort" not in r.body for r in fake.requests)
    notes = [r.getMessage() for r in caplog.records if "reasoningEffort" in r.getMessage()]
    assert notes == ["reasoningEffort high ignored: gpt-4o does not reason"]


async def test_a_compatible_server_behind_base_url_gets_no_effort(fake: FakeApi) -> None:
    config = resolve(
        TetherSettings(  # type: ignore[call-arg]
            provider="openai", baseUrl=fake.url + "/v1", model="o3", reasoningEffort="high"
        ),
        {"XDG_STATE_HOME": "/x"},
    )
    provider = make_provider("openai", config, Path("/tmp"), environ={})
    fake.queue(Sse(openai_stream("hi")))
    await drain(provider)
    assert "reasoning_effort" not in fake.requests[0].body
