"""The lean start's quick settings check (``config.quick``) never accepts what the full
assembly refuses: the server answers ``initialize`` on its word."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.config.assemble import Layer, assemble
from tether.config.layers import ConfigError, parse_settings
from tether.config.quick import FIELDS, quick_settings, settings_values

NAMES = [*FIELDS, *(alias for alias, _ in FIELDS.values())]
KEYS = st.sampled_from([*NAMES, "prices", "maxsteps", "max-steps", "MaxSteps", "extra"])
EDGES = [0, 1, -1, 1023, 1024, 10_000, 10_001, 60_000, 60_001, 65_535, 65_536]
EDGES += [2**30, 2**30 + 1, 2**53, 2**53 + 1, 2**63, 604_800, 604_801]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from(EDGES),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1e-300, 604_800.0, 604_800.5, 3600.0, 3600.5, -0.0, 5.0]),
    st.text(max_size=12),
    st.sampled_from(["auto", "bwrap", "landlock", "off", "OFF", "A_1", "1A", "a\n", "", "x\0"]),
)
INNER_KEYS = st.sampled_from(
    ["turns", "text", "toolCalls", "tool_calls", "name", "arguments", "repeatLast"]
    + ["repeat_last", "delaySeconds", "delay_seconds", "x"]
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(INNER_KEYS | st.text(max_size=4), inner)
    ),
    max_leaves=10,
)


def model_accepts(data: object) -> bool:
    try:
        parse_settings(data, "initializationOptions")
    except ConfigError:
        return False
    return True


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, VALUES, max_size=4))
def test_what_the_quick_check_accepts_the_settings_model_accepts(data: dict[str, Any]) -> None:
    if settings_values(data) is not None:
        assert model_accepts(data), data


@settings(max_examples=500, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "turns": st.lists(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "text": st.one_of(st.text(max_size=5), st.none(), st.integers()),
                        "toolCalls": st.lists(
                            st.fixed_dictionaries(
                                {"name": st.one_of(st.text(max_size=4), st.none())},
                                optional={"arguments": VALUES},
                            ),
                            max_size=2,
                        ),
                    },
                ),
                max_size=3,
            ),
            "repeatLast": st.one_of(st.booleans(), st.integers(0, 1)),
            "delaySeconds": st.one_of(st.floats(), st.integers(-1, 4000)),
        },
    )
)
def test_a_script_object_the_quick_check_accepts_is_a_valid_script(script: Any) -> None:
    data = {"provider": "scripted", "script": script}
    if settings_values(data) is not None:
        assert model_accepts(data), data


@pytest.mark.parametrize(
    "data",
    [
        None,
        {},
        {"provider": "openai", "baseUrl": "http://127.0.0.1:9/v1", "model": "gpt-5.4"},
        {"provider": "scripted", "script": {"turns": []}},
        {
            "provider": "scripted",
            "script": {
                "turns": [
                    {"text": "hi", "toolCalls": [{"name": "read_file", "arguments": {"p": 1}}]}
                ],
                "delaySeconds": 0.5,
            },
        },
        {"maxSteps": 40, "timeoutSeconds": 900, "autoApprove": ["read_file"], "sandbox": "auto"},
        {"sandboxEnv": ["CARGO_HOME"], "approvalTimeoutSeconds": 30.5, "stateDir": "/tmp/s"},
        {"maxMessageBytes": 65536, "diagnosticsSettleMs": 0, "contextWindowTokens": 8192},
    ],
)
def test_the_settings_editors_send_are_certainly_valid(data: Any) -> None:
    assert settings_values(data) is not None
    assert model_accepts(data)


@pytest.mark.parametrize(
    "data",
    [
        {"maxSteps": "5"},
        {"maxSteps": 5.0},
        {"maxSteps": True},
        {"maxSteps": 0},
        {"timeoutSeconds": math.inf},
        {"prices": {"m": {"inputPerMTok": 1, "outputPerMTok": 2}}},  # not sure, not wrong
        {"maxSteps": 5, "max_steps": 6},
        {"unknown": 1},
        [],
    ],
)
def test_anything_else_is_left_to_the_full_check(data: Any) -> None:
    assert settings_values(data) is None


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize(
    ("user", "project", "env", "sure"),
    [
        ("", "", {}, True),
        ('provider = "openai"\n', "", {}, True),
        ("maxSteps = 0\n", "", {}, False),  # the user's file is refused
        ("this is not toml", "", {}, False),
        ("", "maxSteps = 0\n", {}, False),  # an allowed key with a bad value: refused
        ("", 'provider = 5\nautoApprove = "x"\n', {}, True),  # not allowed: dropped unread
        ('trustedProjects = ["{root}"]\n', "provider = 5\n", {}, False),  # trusted: read
        ('trustedProjects = ["{root}"]\n', 'provider = "anthropic"\n', {}, True),
        ("", "", {"TETHER_MAX_STEPS_NOT_A_VARIABLE": "x"}, True),
        ("", "", {"TETHER_MAX_MESSAGE_BYTES": "12"}, False),  # below the minimum
        ("", "", {"TETHER_MAX_MESSAGE_BYTES": "1e9"}, False),  # not sure (int() refuses)
        ("", "", {"TETHER_SANDBOX": "maybe"}, False),
        ("", "", {"TETHER_SCRIPT": '{"turns": []}'}, False),  # inline JSON: not sure
        ("", "", {"TETHER_PROVIDER": "openai", "TETHER_APPROVAL_TIMEOUT_SECONDS": "2.5"}, True),
    ],
)
def test_the_files_and_variables_agree_with_the_one_assembly(
    tmp_path: Path, user: str, project: str, env: dict[str, str], sure: bool
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    environ = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"), **env}
    if user:
        write(tmp_path / "config" / "tether" / "config.toml", user.replace("{root}", str(root)))
    if project:
        write(root / ".tether" / "config.toml", project)
    options = {"model": "m"}
    quick = quick_settings(environ, root, options)
    assert (quick is not None) is sure
    if quick is None:
        return
    init = parse_settings(options, "initializationOptions")
    full = assemble(root, environ, Layer("initializationOptions", init))  # must not raise
    assert quick.provider == full.config.provider
    assert json.dumps(quick.merged.get("model")) == json.dumps(full.config.model)
