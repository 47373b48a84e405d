"""The scripted provider's script: model turns played instead of calling a model."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from .base import WireModel


class ScriptToolCall(WireModel):
    """One tool call the scripted model asks for."""

    name: Annotated[str, Field(min_length=1)]
    arguments: dict[str, Any] = Field(default_factory=dict)


class ScriptTurn(WireModel):
    """One model reply: text (streamed as several deltas) and tool calls."""

    text: str = ""
    tool_calls: list[ScriptToolCall] = Field(default_factory=list)


class Script(WireModel):
    """A whole script. When the turns run out the model answers with no tool call."""

    turns: list[ScriptTurn] = Field(default_factory=list)
    repeat_last: bool = False
    """After the last turn, play it again (for loop tests)."""
    delay_seconds: Annotated[float, Field(ge=0, le=3600, allow_inf_nan=False)] = 0.0
    """Wait before each turn (for cancel and timeout tests)."""
