"""A session's config options as ACP shows them: the mode (category ``mode``), the model
(``model``) and ``reasoningEffort`` (``thought_level``), each a ``select``; and a client's
``session/set_config_option`` checked against them.

The model's choices are the session's model, the models the user's config names a price for,
and — on the provider's own API, not a server at ``baseUrl`` — the provider's known models
(as ``/model`` lists them). Tether has no on/off setting a session may change, so no boolean
option is offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, get_args

from tether_protocol.config import ReasoningEffort

from ..config.layers import Config
from ..providers.models import known_models
from ..text.display import shown

EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)
EFFORT_NAMES = {"off": "Off", "low": "Low", "medium": "Medium", "high": "High"}
DEFAULT_MODEL = "default"
"""The model option's value when neither the config nor the session names a model (the
provider's own default)."""


class BadOption(ValueError):
    """A ``session/set_config_option`` that names no option or no value of it."""


@dataclass(frozen=True, slots=True)
class OptionState:
    """What the options show of one session."""

    mode: str
    model: str | None
    """The session's model (``/model`` or the option), else the configured one."""
    effort: str


def model_choices(config: Config, current: str | None) -> list[str]:
    named = list(config.prices)
    known = known_models(config.provider) if config.base_url is None else []
    first = [current] if current else [DEFAULT_MODEL]
    return list(dict.fromkeys([*first, *named, *known]))


def config_options(
    state: OptionState, modes: Sequence[dict[str, str]], config: Config
) -> list[dict[str, Any]]:
    """The session's ``configOptions``, in the order a client should show them."""
    models = model_choices(config, state.model)
    return [
        {
            "id": "mode",
            "name": "Mode",
            "description": "What Tether may do without asking",
            "category": "mode",
            "type": "select",
            "currentValue": state.mode,
            "options": [
                {"value": m["id"], "name": m["name"], "description": m["description"]}
                for m in modes
            ],
        },
        {
            "id": "model",
            "name": "Model",
            "description": f"The {config.provider or 'provider'} model of the next model call",
            "category": "model",
            "type": "select",
            "currentValue": state.model or DEFAULT_MODEL,
            "options": [
                {
                    "value": m,
                    "name": "Provider's default" if m == DEFAULT_MODEL else shown(m),
                }
                for m in models
            ],
        },
        {
            "id": "reasoningEffort",
            "name": "Reasoning effort",
            "description": "How hard a reasoning model thinks (Anthropic's extended thinking)",
            "category": "thought_level",
            "type": "select",
            "currentValue": state.effort,
            "options": [{"value": e, "name": EFFORT_NAMES[e]} for e in EFFORTS],
        },
    ]


def checked_value(
    raw: dict[str, Any], state: OptionState, modes: Sequence[str], config: Config
) -> tuple[str, str]:
    """``(configId, value)`` of a ``session/set_config_option`` request, or ``BadOption``
    naming what is wrong in the user's words."""
    config_id, value = raw.get("configId"), raw.get("value")
    if raw.get("type") == "boolean" or isinstance(value, bool):
        raise BadOption(f"configId: {config_id!r} is not a boolean option")
    if not isinstance(value, str):
        raise BadOption("value: a string, one of the option's values")
    allowed: Sequence[str]
    if config_id == "mode":
        allowed = modes
    elif config_id == "model":
        allowed = model_choices(config, state.model)
    elif config_id == "reasoningEffort":
        allowed = EFFORTS
    else:
        raise BadOption(
            f"configId: no option {str(config_id)[:60]!r} (mode, model, reasoningEffort)"
        )
    if value not in allowed:
        shown_value = shown(value[:60])
        raise BadOption(f"value: {shown_value!r} is not one of {', '.join(allowed)}"[:500])
    return config_id, value
