"""The CLI's settings: flags over environment over project file over user file, and
``tether config`` to show where each value came from."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether_protocol import TetherSettings

from ..config.layers import (
    DEFAULT_APPROVAL_TIMEOUT_SECONDS,
    DEFAULT_DIAGNOSTICS_MAX_WAIT_MS,
    DEFAULT_DIAGNOSTICS_SETTLE_MS,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_STEPS,
    DEFAULT_TIMEOUT_SECONDS,
    PROJECT_CONFIG,
    default_state_dir,
    project_settings,
    user_config_path,
    user_file,
    variables_settings,
)
from ..prompt.instructions import MAX_INSTRUCTIONS_BYTES, home_folder, instruction_paths

SECRETS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


@dataclass(frozen=True, slots=True)
class Layer:
    """One source of settings, lowest first."""

    source: str
    values: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CliSettings:
    """Every layer, the ``initializationOptions`` to send and what was ignored."""

    layers: list[Layer]
    options: dict[str, Any]
    """Project file and flags, minus what the environment sets (the server merges the
    user file and the environment itself, under these)."""
    ignored: list[str]
    """Keys of an untrusted project's config file that were not applied."""
    instructions: list[tuple[Path, int]] = field(default_factory=list)
    """The project's AGENTS.md files (outermost first) and their sizes in bytes."""


def gather(root: Path, flags: dict[str, Any], environ: Mapping[str, str]) -> CliSettings:
    """The layers for a run in ``root``; ``ConfigError`` for a bad file or variable."""
    user, _ = user_file(environ)
    project, ignored = project_settings(root, environ)
    variables = variables_settings(environ).to_wire()
    project_values = project.to_wire()
    options = {k: v for k, v in project_values.items() if k not in variables} | flags
    layers = [
        Layer(str(user_config_path(environ)), user.to_wire()),
        Layer(str(root / PROJECT_CONFIG), project_values),
        Layer("environment", variables),
        Layer("flags", flags),
    ]
    found = [(p, _file_size(p)) for p in instruction_paths(root, home_folder(environ))]
    return CliSettings(layers, options, ignored, found)


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _shown(key: str, value: Any) -> str:
    if key == "script" and not isinstance(value, str):
        return "(an inline script)"
    return repr(value)


def _mask(secret: str) -> str:
    return "set (…" + secret[-4:] + ")" if len(secret) > 12 else "set"


def describe(settings: CliSettings, environ: Mapping[str, str] | None = None) -> str:
    """The effective settings, each with the source it came from; secrets masked."""
    env = os.environ if environ is None else environ
    effective: dict[str, tuple[Any, str]] = {
        "maxSteps": (DEFAULT_MAX_STEPS, "default"),
        "timeoutSeconds": (DEFAULT_TIMEOUT_SECONDS, "default"),
        "stateDir": (str(default_state_dir(dict(env))), "default"),
        "approvalTimeoutSeconds": (DEFAULT_APPROVAL_TIMEOUT_SECONDS, "default"),
        "maxMessageBytes": (DEFAULT_MAX_MESSAGE_BYTES, "default"),
        "diagnosticsSettleMs": (DEFAULT_DIAGNOSTICS_SETTLE_MS, "default"),
        "diagnosticsMaxWaitMs": (DEFAULT_DIAGNOSTICS_MAX_WAIT_MS, "default"),
        "sandbox": ("off", "default"),
    }
    for layer in settings.layers:
        for key, value in layer.values.items():
            effective[key] = (value, layer.source)
    keys = [TetherSettings.model_fields[f].alias or f for f in TetherSettings.model_fields]
    lines = []
    for key in keys:
        value, source = effective.get(key, (None, ""))
        if value is not None:
            lines.append(f"{key:22} {_shown(key, value):40} {source}")
    for name in SECRETS:
        lines.append(f"{name:22} {_mask(env[name]) if env.get(name) else 'not set':40} environment")
    lines.append("")
    if settings.instructions:
        total = sum(size for _, size in settings.instructions)
        over = total > MAX_INSTRUCTIONS_BYTES
        cut = f", cut to {MAX_INSTRUCTIONS_BYTES} in the prompt" if over else ""
        lines.append(f"project instructions ({total} bytes{cut}):")
        lines.extend(f"  {path}  {size} bytes" for path, size in settings.instructions)
    else:
        lines.append("project instructions: no AGENTS.md here or in the folders above")
    if settings.ignored:
        lines.append("")
        lines.append(f"ignored: {', '.join(settings.ignored)} (the project is not trusted)")
    return "\n".join(lines)
