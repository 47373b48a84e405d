"""``reasoningEffort``: its values, its default, its variable, and who may set it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.config.assemble import assemble
from tether.config.layers import ConfigError, parse_settings, resolve
from tether.providers import make_provider
from tether.providers.anthropic import AnthropicProvider
from tether_protocol import TetherSettings


def test_off_by_default_and_set_by_its_variable() -> None:
    assert resolve(TetherSettings(), {}).reasoning_effort == "off"
    settings = assemble(None, {"TETHER_REASONING_EFFORT": "high"}).settings
    assert resolve(settings, {}).reasoning_effort == "high"


def test_an_unknown_effort_is_a_clear_error_naming_the_setting_and_the_choices() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_settings({"reasoningEffort": "max"}, "initializationOptions")
    message = str(caught.value)
    assert "initializationOptions.reasoningEffort" in message
    assert all(value in message for value in ("'off'", "'low'", "'medium'", "'high'"))
    with pytest.raises(ConfigError, match="TETHER_REASONING_EFFORT"):
        assemble(None, {"TETHER_REASONING_EFFORT": "extreme"})


def test_an_untrusted_project_cannot_turn_thinking_on(tmp_path: Path) -> None:
    project = tmp_path / "clone"
    (project / ".tether").mkdir(parents=True)
    (project / ".tether" / "config.toml").write_text('reasoningEffort = "high"\n')
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    assert assemble(project, environ).settings.reasoning_effort is None


def test_the_provider_gets_the_effort(tmp_path: Path) -> None:
    config = resolve(TetherSettings(reasoning_effort="low"), {})
    provider = make_provider("anthropic", config, tmp_path, environ={"ANTHROPIC_API_KEY": "k"})
    assert isinstance(provider, AnthropicProvider)
    assert provider._thinking == {"type": "enabled", "budget_tokens": 2_048}
