"""Configuration sources, in order: defaults < environment < initializationOptions < settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.config.assemble import assemble
from tether.config.layers import (
    DEFAULT_MAX_STEPS,
    ConfigError,
    merge,
    parse_settings,
    resolve,
)
from tether_protocol import Script, TetherSettings


def test_defaults() -> None:
    config = resolve(TetherSettings(), {"XDG_STATE_HOME": "/x/state"})
    assert config.max_steps == DEFAULT_MAX_STEPS == 40
    assert config.timeout_seconds == 900
    assert config.auto_approve == ()
    assert config.provider is None
    assert config.state_dir == Path("/x/state/tether")


def test_state_dir_falls_back_to_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve(TetherSettings(), {}).state_dir == tmp_path / ".local" / "state" / "tether"


def test_environment_variables() -> None:
    env = {
        "TETHER_PROVIDER": "scripted",
        "TETHER_MODEL": "m",
        "TETHER_BASE_URL": "http://127.0.0.1:1/v1",
        "TETHER_SCRIPT": '{"turns": [{"text": "hi"}]}',
        "TETHER_STATE_DIR": "/tmp/s",
    }
    settings = assemble(None, env).settings
    assert settings.provider == "scripted" and settings.model == "m"
    assert isinstance(settings.script, Script) and settings.script.turns[0].text == "hi"
    assert resolve(settings, env).state_dir == Path("/tmp/s")
    assert assemble(None, {"TETHER_SCRIPT": "demo.json"}).settings.script == "demo.json"


def test_later_layers_win_where_they_set_a_field() -> None:
    env = TetherSettings(provider="scripted", model="env-model", max_steps=5)
    init = parse_settings({"model": "init-model", "autoApprove": ["read_file"]}, "init")
    live = parse_settings({"maxSteps": 7}, "settings.tether")
    merged = merge(env, init, live)
    assert (merged.provider, merged.model, merged.max_steps) == ("scripted", "init-model", 7)
    assert merged.auto_approve == ["read_file"]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"maxSteps": 0}, "maxSteps"),
        ({"timeoutSeconds": "x"}, "timeoutSeconds"),
        ({"nope": 1}, "nope"),
    ],
)
def test_bad_settings_name_the_field(data: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_settings(data, "initializationOptions")
    assert f"initializationOptions.{field}" in str(caught.value)


def test_bad_inline_script_in_the_environment() -> None:
    with pytest.raises(ConfigError, match="TETHER_SCRIPT"):
        assemble(None, {"TETHER_SCRIPT": '{"turns": 5}'})
