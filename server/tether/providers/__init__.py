"""Model providers behind the Provider seam, chosen by name from configuration."""

from __future__ import annotations

from pathlib import Path

from ..config import Config, ConfigError
from .base import Provider
from .scripted import ScriptedProvider, load_script

KNOWN_PROVIDERS = ("scripted", "openai", "anthropic")
"""Provider names the configuration may use."""

AVAILABLE_PROVIDERS = ("scripted",)
"""Providers this build can run (the SDK-backed ones arrive with the model issue)."""


def make_provider(name: str | None, config: Config, workspace_root: Path) -> Provider:
    """A fresh provider for one run; ``ConfigError`` (naming the field) when impossible."""
    if name is None:
        raise ConfigError(
            "provider: no model provider is configured; set initializationOptions.provider "
            "(or TETHER_PROVIDER) to one of: " + ", ".join(AVAILABLE_PROVIDERS)
        )
    if name not in KNOWN_PROVIDERS:
        raise ConfigError(
            f"provider: unknown provider {name!r}; known: {', '.join(KNOWN_PROVIDERS)}"
        )
    if name not in AVAILABLE_PROVIDERS:
        raise ConfigError(f"provider: {name!r} is not available in this version of Tether yet")
    if config.script is None:
        raise ConfigError("script: the scripted provider needs a script (a path or an object)")
    try:
        return ScriptedProvider(load_script(config.script, workspace_root))
    except Exception as exc:
        raise ConfigError(f"script: {exc}") from exc
