"""What ``/effort`` adds when the effort it sets will reach no model: the session's provider
cannot use it (the scripted model, Chat Completions to a compatible server) or its model
does not think. The effort is set all the same; it applies once the session can use it."""

from __future__ import annotations

from ..config.layers import Config
from ..providers import OFFICIAL_OPENAI_URLS, openai_api
from ..providers.reasoning import claude_thinks, openai_reasons
from ..text.display import shown

MODEL_SHOWN = 80
"""Characters of a model's name the note shows (a name typed with ``/model``)."""


def effort_ignored(config: Config, model: str | None) -> str | None:
    """Why an effort other than off would reach no model with ``config``'s provider and
    ``model`` (None: the provider's default, which thinks), in the user's words; None when
    it applies."""
    provider = config.provider
    if provider == "scripted":
        return "the scripted model does not think: it applies with a model that does"
    if provider == "openai":
        official = config.base_url is None or config.base_url in OFFICIAL_OPENAI_URLS
        if not official and openai_api(config, config.base_url) == "chat":
            return (
                "Chat Completions to the server at baseUrl carries no effort (its own settings "
                'decide): it applies on OpenAI\'s API, or with openaiApi "responses"'
            )
        if model is not None and not openai_reasons(model):
            return _does_not_think(model)
    if provider == "anthropic" and model is not None and not claude_thinks(model):
        return _does_not_think(model)
    return None


def _does_not_think(model: str) -> str:
    name = shown(model[:MODEL_SHOWN] + ("…" if len(model) > MODEL_SHOWN else ""))
    return f"the current model, {name}, does not think: it applies when you pick one that does"
