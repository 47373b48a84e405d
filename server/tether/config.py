"""Configuration: defaults < environment < initializationOptions < settings < per-run.

Every source is a ``TetherSettings`` (all fields optional); ``resolve`` merges them and
fills in the defaults.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tether_protocol import Script, TetherSettings
from tether_protocol.config import ModelPrice

DEFAULT_MAX_STEPS = 40
DEFAULT_TIMEOUT_SECONDS = 900.0

ENVIRONMENT = {
    "TETHER_PROVIDER": "provider",
    "TETHER_MODEL": "model",
    "TETHER_BASE_URL": "base_url",
    "TETHER_SCRIPT": "script",
    "TETHER_STATE_DIR": "state_dir",
    "TETHER_CONTEXT_WINDOW_TOKENS": "context_window_tokens",
}
INTEGER_SETTINGS = frozenset({"context_window_tokens"})


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names it."""


def default_state_dir(environ: dict[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/tether``, else ``~/.local/state/tether``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "tether"


def settings_from_environment(environ: Mapping[str, str]) -> TetherSettings:
    """The settings given by ``TETHER_*`` variables (a script may be a path or inline JSON)."""
    values: dict[str, Any] = {}
    for variable, name in ENVIRONMENT.items():
        value = environ.get(variable)
        if not value:
            continue
        if name == "script" and value.lstrip().startswith("{"):
            try:
                values[name] = Script.model_validate_json(value)
            except ValidationError as exc:
                raise ConfigError(f"{variable}: not a valid script: {first_error(exc)}") from None
        elif name in INTEGER_SETTINGS:
            try:
                values[name] = int(value)
            except ValueError:
                raise ConfigError(f"{variable}: expected a whole number, got {value!r}") from None
        else:
            values[name] = value
    try:
        return TetherSettings(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        variable = next(v for v, n in ENVIRONMENT.items() if n == first["loc"][0])
        raise ConfigError(f"{variable}: {first['msg']}") from exc


def first_error(exc: ValidationError) -> str:
    """The first problem pydantic found, in one line (where it is, then what)."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def parse_settings(data: object, source: str) -> TetherSettings:
    """Validate a settings object from the client; ``ConfigError`` names the bad field."""
    if data is None:
        return TetherSettings()
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected an object")
    try:
        # JSON has no tuples or floats-vs-ints subtleties worth being strict about here.
        return TetherSettings.model_validate_json(json.dumps(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{source}.{where}: {first['msg']}") from exc


def merge(*layers: TetherSettings) -> TetherSettings:
    """Later layers win wherever they set a field."""
    merged: dict[str, Any] = {}
    for layer in layers:
        for name in TetherSettings.model_fields:
            value = getattr(layer, name)
            if value is not None:
                merged[name] = value
    return TetherSettings(**merged)


@dataclass(frozen=True, slots=True)
class Config:
    """Settings with every default filled in."""

    provider: str | None
    model: str | None
    base_url: str | None
    script: str | Script | None
    max_steps: int
    timeout_seconds: float
    context_budget_tokens: int | None
    context_window_tokens: int | None
    """The window of a model the built-in table does not know (None: a default)."""
    auto_approve: tuple[str, ...]
    state_dir: Path
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    """Configured prices by model; the providers add them to their built-in table."""


def resolve(settings: TetherSettings, environ: Mapping[str, str]) -> Config:
    """Fill in defaults."""
    state_dir = (
        Path(settings.state_dir).expanduser()
        if settings.state_dir
        else default_state_dir(dict(environ))
    )
    return Config(
        provider=settings.provider,
        model=settings.model,
        base_url=settings.base_url,
        script=settings.script,
        max_steps=settings.max_steps or DEFAULT_MAX_STEPS,
        timeout_seconds=settings.timeout_seconds or DEFAULT_TIMEOUT_SECONDS,
        context_budget_tokens=settings.context_budget_tokens,
        context_window_tokens=settings.context_window_tokens,
        auto_approve=tuple(settings.auto_approve or ()),
        state_dir=state_dir,
        prices=dict(settings.prices or {}),
    )
