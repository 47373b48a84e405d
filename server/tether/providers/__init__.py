"""Model providers behind the Provider seam, chosen by name from configuration.

The SDK-backed providers are imported inside ``make_provider``: starting ``tether serve``
(and every module that imports this package) does not pay for importing ``openai`` or
``anthropic``, and a server that only plays scripts never loads them.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Mapping
from pathlib import Path

from ..config.layers import Config, ConfigError
from .base import Provider
from .scripted import ScriptedProvider, load_script

AVAILABLE_PROVIDERS = ("scripted", "openai", "anthropic")
"""The provider names the configuration may use, all of which this build can run."""

API_KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""Where each SDK provider finds its key (in the environment of ``tether serve``)."""

OFFICIAL_OPENAI_URLS = ("https://api.openai.com/v1", "https://api.openai.com/v1/")
"""A ``baseUrl`` naming OpenAI's own endpoint: treated as no ``baseUrl`` at all (the
Responses API, OpenAI's output limits)."""

LOCAL_SERVER_KEY = "not-needed"
"""Sent when ``baseUrl`` names a server that wants no key (the SDKs insist on one)."""


def make_provider(
    name: str | None,
    config: Config,
    workspace_root: Path,
    *,
    model: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Provider:
    """A fresh provider for one run; ``ConfigError`` (naming the field) when impossible.

    ``model`` overrides the configured model for this run (``agent/run`` ``model``).
    """
    if name is None:
        raise ConfigError(
            "provider: no model provider is configured; set initializationOptions.provider "
            "(or TETHER_PROVIDER) to one of: " + ", ".join(AVAILABLE_PROVIDERS)
        )
    if name not in AVAILABLE_PROVIDERS:
        raise ConfigError(
            f"provider: unknown provider {name!r}; known: {', '.join(AVAILABLE_PROVIDERS)}"
        )
    if name == "scripted":
        return _scripted(config, workspace_root)
    # A run that switches provider does not inherit the model and endpoint of another one.
    same = config.provider in (None, name)
    base_url = config.base_url if same else None
    model = model or (config.model if same else None)
    api_key = _api_key(name, base_url, os.environ if environ is None else environ)
    if name == "openai":
        from .models import ModelTable
        from .openai import DEFAULT_MODEL, OpenAIProvider
        from .retry import OutputLimit

        official = base_url is None or base_url in OFFICIAL_OPENAI_URLS
        # OpenAI's own API: a limit, raised once; a compatible server keeps its default
        # (vLLM refuses a limit beyond the context left) and continuation alone applies.
        limit = OutputLimit(8_192, 16_384) if official else OutputLimit(None, None)
        if openai_api(config, base_url) == "responses":
            from .openai_responses import OpenAIResponsesProvider

            return OpenAIResponsesProvider(
                model=model or DEFAULT_MODEL,
                api_key=api_key,
                base_url=base_url,
                models=ModelTable(config.prices),
                context_window=config.context_window_tokens,
                limit=limit,
                reasoning_effort=config.reasoning_effort,
            )
        return OpenAIProvider(
            model=model or DEFAULT_MODEL,
            api_key=api_key,
            base_url=base_url,
            models=ModelTable(config.prices),
            context_window=config.context_window_tokens,
            limit=limit,
            limit_parameter="max_completion_tokens" if official else "max_tokens",
            send_effort=official,
            reasoning_effort=config.reasoning_effort,
        )
    from .anthropic import DEFAULT_MODEL as CLAUDE
    from .anthropic import AnthropicProvider
    from .models import ModelTable

    return AnthropicProvider(
        model=model or CLAUDE,
        api_key=api_key,
        base_url=base_url,
        models=ModelTable(config.prices),
        context_window=config.context_window_tokens,
        reasoning_effort=config.reasoning_effort,
    )


def openai_api(config: Config, base_url: str | None) -> str:
    """The API the ``openai`` provider speaks to ``base_url``: ``openaiApi`` when set, else
    ``responses`` for OpenAI's own endpoint and ``chat`` for any other."""
    if config.openai_api is not None:
        return config.openai_api
    return "responses" if base_url is None or base_url in OFFICIAL_OPENAI_URLS else "chat"


def primed_name(config: Config) -> str | None:
    """What ``prime`` (and ``warm_up_thread``) should load for ``config``'s provider: its
    name, or ``openai-responses`` when it speaks OpenAI's Responses API (whose stream
    events the SDK builds on first use, most of a second)."""
    if config.provider == "openai" and openai_api(config, config.base_url) == "responses":
        return RESPONSES
    return config.provider


RESPONSES = "openai-responses"
"""``prime``'s name of the ``openai`` provider on the Responses API."""

SDK_PROVIDERS = ("openai", "anthropic", RESPONSES)
"""The providers whose module imports an SDK (and the Responses API's share of one)."""


def prime(name: str | None) -> None:
    """Import the SDK provider ``name`` and make one canned request on it (``prime`` of its
    module: what the SDK's first client loads and builds), once per process and provider;
    nothing for another name. For the warm-up of a server and the daemon, which forks
    runs that then find it done. Thread-safe; blocking (call it off the event loop)."""
    if name not in SDK_PROVIDERS:
        return
    with _PRIMING:
        if name in _PRIMED:
            return
        _PRIMED.add(name)
    if name == "openai":
        from .openai import prime as prime_sdk
    elif name == RESPONSES:
        from .openai_responses import prime as prime_sdk
    else:
        from .anthropic import prime as prime_sdk
    prime_sdk()


_PRIMED: set[str] = set()
_PRIMING = threading.Lock()


def warm_up_thread(name: str | None) -> threading.Thread:
    """Prime the SDK provider ``name`` (``prime``; nothing for another name or one already
    primed) on a thread of its own started now: the first run then finds it done, and the
    event loop never waits for the SDK's import (about a second for ``anthropic``).

    The SDK's thousand pydantic models are there for good: the cyclic collector stays off
    until the thread ends (its collections would find nothing and cost ~15% of the
    import); then what it loaded is frozen out of the collector's way and the collector is
    turned on again. A failure is left to the first run to report, as without the warm-up.
    """

    def load() -> None:
        try:
            with contextlib.suppress(Exception):
                prime(name)
        finally:
            gc.freeze()
            gc.enable()

    gc.disable()
    thread = threading.Thread(target=load, name="tether-warm-up", daemon=True)
    thread.start()
    return thread


def _api_key(name: str, base_url: str | None, environ: Mapping[str, str]) -> str:
    variable = API_KEY_VARIABLES[name]
    key = environ.get(variable)
    if key:
        return key
    if base_url is not None:
        return LOCAL_SERVER_KEY
    raise ConfigError(
        f"provider: {name} needs an API key: set {variable} in the environment of "
        "`tether serve`, or set baseUrl (TETHER_BASE_URL) to a server that needs none"
    )


def _scripted(config: Config, workspace_root: Path) -> Provider:
    if config.script is None:
        raise ConfigError("script: the scripted provider needs a script (a path or an object)")
    try:
        script = load_script(config.script, workspace_root)
        return ScriptedProvider(script, context_window=config.context_window_tokens)
    except Exception as exc:
        raise ConfigError(f"script: {exc}") from exc
