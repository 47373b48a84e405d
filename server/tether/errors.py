"""Errors that cross module lines inside the server."""

from __future__ import annotations


class ToolError(Exception):
    """A tool failure the model should read and react to (bad path, missing file, …)."""


class ProviderError(Exception):
    """The model provider failed (after its own retries); the run ends with ``error``."""


class ContextTooLongError(ProviderError):
    """The model refused the prompt as too long; the loop compacts once and retries."""
