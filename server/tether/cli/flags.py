"""What several commands' parsers share: the settings flags and the argparse types."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import TypeAlias

    Commands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]
    """Where a command adds its parser (``add_subparsers``)."""

RUN_FLAGS = {
    "provider": "provider",
    "model": "model",
    "base_url": "baseUrl",
    "max_steps": "maxSteps",
    "timeout": "timeoutSeconds",
}
"""``tether run`` flags and the ``initializationOptions`` key each one sets."""


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given as flags, as ``initializationOptions`` (they beat the environment)."""
    return {key: getattr(args, flag) for flag, key in RUN_FLAGS.items() if getattr(args, flag)}


def add_setting_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that override the configuration."""
    parser.add_argument("--cwd", default=".", help="the workspace folder (default: here)")
    parser.add_argument("--provider", help="the model provider (TETHER_PROVIDER)")
    parser.add_argument("--model", help="the model (TETHER_MODEL)")
    parser.add_argument("--base-url", help="the provider's endpoint (TETHER_BASE_URL)")
    parser.add_argument("--max-steps", type=positive_int, help="most model calls in the run")
    parser.add_argument("--timeout", type=positive_float, help="seconds before the run stops")


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {text}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number above 0."""
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {text}")
    return value
