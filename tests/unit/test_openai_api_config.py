"""``openaiApi``: which OpenAI API the ``openai`` provider speaks, its defaults by
``baseUrl``, its variable, a clear error for an unknown value, and who may set it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.config.assemble import assemble
from tether.config.layers import ConfigError, parse_settings, resolve
from tether.providers import make_provider, primed_name
from tether.providers.openai import OpenAIProvider
from tether.providers.openai_responses import OpenAIResponsesProvider
from tether_protocol import TetherSettings

KEY = {"OPENAI_API_KEY": "k"}


def provider_for(**settings: object) -> object:
    config = resolve(TetherSettings(provider="openai", **settings), {})  # type: ignore[arg-type]
    return make_provider("openai", config, Path("."), environ=KEY)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({}, OpenAIResponsesProvider),
        ({"base_url": "https://api.openai.com/v1"}, OpenAIResponsesProvider),
        ({"base_url": "http://localhost:11434/v1"}, OpenAIProvider),
        ({"openai_api": "chat"}, OpenAIProvider),
        (
            {"base_url": "http://localhost:8000/v1", "openai_api": "responses"},
            OpenAIResponsesProvider,
        ),
    ],
    ids=["no baseUrl", "the official URL", "another URL", "chat chosen", "responses chosen"],
)
def test_responses_for_openais_own_endpoint_chat_elsewhere_unless_chosen(
    settings: dict[str, object], expected: type
) -> None:
    made = provider_for(**settings)
    assert type(made) is expected


def test_the_official_endpoint_keeps_openais_output_limit_on_either_api() -> None:
    chat = provider_for(base_url="https://api.openai.com/v1", openai_api="chat")
    assert isinstance(chat, OpenAIProvider) and chat._limit.current == 8_192
    assert chat._limit_parameter == "max_completion_tokens"
    local = provider_for(base_url="http://localhost:8000/v1")
    assert isinstance(local, OpenAIProvider) and local._limit.current is None


def test_set_by_its_variable_and_unset_by_default() -> None:
    assert resolve(TetherSettings(), {}).openai_api is None
    settings = assemble(None, {"TETHER_OPENAI_API": "chat"}).settings
    assert resolve(settings, {}).openai_api == "chat"


def test_an_unknown_value_is_a_clear_error_naming_the_setting_and_the_choices() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_settings({"openaiApi": "completions"}, "initializationOptions")
    message = str(caught.value)
    assert "initializationOptions.openaiApi" in message
    assert "'responses'" in message and "'chat'" in message
    with pytest.raises(ConfigError, match="TETHER_OPENAI_API"):
        assemble(None, {"TETHER_OPENAI_API": "assistants"})


def test_an_untrusted_project_cannot_choose_it(tmp_path: Path) -> None:
    project = tmp_path / "clone"
    (project / ".tether").mkdir(parents=True)
    (project / ".tether" / "config.toml").write_text('openaiApi = "chat"\n')
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    assert assemble(project, environ).settings.openai_api is None


@pytest.mark.parametrize(
    ("settings", "primed"),
    [
        ({"provider": "openai"}, "openai-responses"),
        ({"provider": "openai", "openai_api": "chat"}, "openai"),
        ({"provider": "openai", "base_url": "http://localhost:11434/v1"}, "openai"),
        ({"provider": "anthropic"}, "anthropic"),
        ({}, None),
    ],
)
def test_the_warm_up_primes_the_api_the_settings_choose(
    settings: dict[str, object], primed: str | None
) -> None:
    config = resolve(TetherSettings(**settings), {})  # type: ignore[arg-type]
    assert primed_name(config) == primed
