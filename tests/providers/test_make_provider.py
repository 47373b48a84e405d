"""Choosing a provider from configuration: keys, defaults, per-run overrides, lazy SDKs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tether.config.layers import Config, ConfigError, resolve
from tether.providers import AVAILABLE_PROVIDERS, LOCAL_SERVER_KEY, make_provider
from tether.providers.anthropic import DEFAULT_MODEL as CLAUDE_DEFAULT
from tether.providers.anthropic import AnthropicProvider
from tether.providers.openai import DEFAULT_MODEL as OPENAI_DEFAULT
from tether.providers.openai import OpenAIProvider
from tether_protocol import TetherSettings
from tether_protocol.config import ModelPrice

ROOT = Path("/tmp")


def config(**settings: object) -> Config:
    return resolve(TetherSettings(**settings), {"XDG_STATE_HOME": "/x"})  # type: ignore[arg-type]


def test_every_known_provider_is_available() -> None:
    assert AVAILABLE_PROVIDERS == ("scripted", "openai", "anthropic")


def test_no_provider_says_how_to_configure_one() -> None:
    with pytest.raises(ConfigError) as caught:
        make_provider(None, config(), ROOT, environ={})
    assert str(caught.value) == (
        "provider: no model provider is configured; set initializationOptions.provider "
        "(or TETHER_PROVIDER) to one of: scripted, openai, anthropic"
    )


@pytest.mark.parametrize(
    ("name", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]
)
def test_a_missing_key_names_the_variable(name: str, variable: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_provider(name, config(provider=name), ROOT, environ={"OTHER": "x"})
    assert str(caught.value) == (
        f"provider: {name} needs an API key: set {variable} in the environment of "
        "`tether serve`, or set baseUrl (TETHER_BASE_URL) to a server that needs none"
    )


def test_keys_come_from_the_environment() -> None:
    openai = make_provider(
        "openai", config(provider="openai"), ROOT, environ={"OPENAI_API_KEY": "sk-1"}
    )
    assert isinstance(openai, OpenAIProvider)
    assert (openai.model, openai._api_key, openai._base_url) == (OPENAI_DEFAULT, "sk-1", None)
    assert openai._limit.current == 8_192 and openai._limit_parameter == "max_completion_tokens"
    claude = make_provider("anthropic", config(), ROOT, environ={"ANTHROPIC_API_KEY": "sk-ant"})
    assert isinstance(claude, AnthropicProvider)
    assert (claude.model, claude._api_key) == (CLAUDE_DEFAULT, "sk-ant")


def test_a_local_server_needs_no_key_and_keeps_its_own_output_limit() -> None:
    local = config(provider="openai", base_url="http://localhost:11434/v1", model="qwen3-coder")
    provider = make_provider("openai", local, ROOT, environ={})
    assert isinstance(provider, OpenAIProvider)
    assert (provider.model, provider._api_key) == ("qwen3-coder", LOCAL_SERVER_KEY)
    assert provider._limit.current is None and provider._limit_parameter == "max_tokens"


def test_the_run_model_overrides_the_configured_one() -> None:
    env = {"OPENAI_API_KEY": "k"}
    provider = make_provider(
        "openai",
        config(provider="openai", model="gpt-5.4"),
        ROOT,
        model="gpt-5.4-mini",
        environ=env,
    )
    assert provider.model == "gpt-5.4-mini"  # type: ignore[attr-defined]


def test_switching_provider_for_a_run_does_not_inherit_model_or_endpoint() -> None:
    configured = config(provider="openai", model="gpt-5.4", base_url="http://localhost:8000/v1")
    provider = make_provider("anthropic", configured, ROOT, environ={"ANTHROPIC_API_KEY": "k"})
    assert isinstance(provider, AnthropicProvider)
    assert (provider.model, provider._base_url) == (CLAUDE_DEFAULT, None)


def test_configured_prices_reach_the_provider() -> None:
    priced = config(
        provider="openai", prices={"m": ModelPrice(input_per_m_tok=1, output_per_m_tok=1)}
    )
    provider = make_provider("openai", priced, ROOT, environ={"OPENAI_API_KEY": "k"})
    assert provider._models.price("m") == ModelPrice(input_per_m_tok=1, output_per_m_tok=1)  # type: ignore[attr-defined]


def test_the_sdks_are_imported_only_when_a_provider_is_made_or_warmed_up() -> None:
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from tether.config.layers import resolve\n"
        "from tether.providers import make_provider\n"
        "import tether.lsp.server\n"
        "from tether_protocol import TetherSettings\n"
        "before = sorted(m for m in ('openai', 'anthropic') if m in sys.modules)\n"
        "cfg = resolve(TetherSettings(), {'XDG_STATE_HOME': '/x'})\n"
        "make_provider('openai', cfg, Path('.'), environ={'OPENAI_API_KEY': 'k'})\n"
        "middle = sorted(m for m in ('openai', 'anthropic') if m in sys.modules)\n"
        "from tether.providers import warm_up_thread\n"
        "warm_up_thread('anthropic').join(60)\n"
        "after = sorted(m for m in ('openai', 'anthropic') if m in sys.modules)\n"
        "print(json.dumps([before, middle, after]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(out.stdout) == [[], ["openai"], ["anthropic", "openai"]]
