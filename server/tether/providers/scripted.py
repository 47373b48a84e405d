"""The scripted model: plays a script of turns instead of calling a model (tests, demo)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from pydantic import ValidationError

from tether_protocol import Script, ScriptTurn

from ..errors import ProviderError
from .base import (
    AssistantMessage,
    ModelDelta,
    ModelRequest,
    TextDelta,
    ToolCall,
    ToolCallReady,
    UsageDelta,
    UserMessage,
    estimate_tokens,
)

_PIECES = re.compile(r"\S+\s*|\s+")


def split_text(text: str) -> list[str]:
    """Cut a turn's text into several deltas (word by word), as a real model streams."""
    pieces = _PIECES.findall(text)
    if len(pieces) == 1 and len(text) > 1:
        half = len(text) // 2
        return [text[:half], text[half:]]
    return pieces


def load_script(source: str | Script, base_dir: Path | None = None) -> Script:
    """A script from an object or a path to a JSON file; ``ProviderError`` if unusable."""
    if isinstance(source, Script):
        return source
    path = Path(source).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    try:
        return Script.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise ProviderError(f"cannot read script {path}: {exc.strerror}") from exc
    except ValidationError as exc:
        raise ProviderError(f"invalid script {path}: {exc}") from exc


SCRIPTED_WINDOW = 128_000
"""The scripted model's window unless ``contextWindowTokens`` sets one."""


class ScriptedProvider:
    """Plays ``script.turns`` in order, one per model call of a run."""

    name = "scripted"
    model = "script"

    def __init__(self, script: Script, *, context_window: int | None = None) -> None:
        self._script = script
        self.context_window = context_window or SCRIPTED_WINDOW
        self._played = 0

    def _next_turn(self) -> ScriptTurn:
        turns = self._script.turns
        index = self._played
        self._played += 1
        if index < len(turns):
            return turns[index]
        if self._script.repeat_last and turns:
            return turns[-1]
        return ScriptTurn(text="")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        """Wait ``delaySeconds``, stream the turn's text in pieces, then its tool calls."""
        if self._script.delay_seconds:
            await anyio.sleep(self._script.delay_seconds)
        step = self._played + 1
        turn = self._next_turn()
        for piece in split_text(turn.text):
            yield TextDelta(piece)
        for index, call in enumerate(turn.tool_calls):
            yield ToolCallReady(ToolCall(f"call_{step}_{index + 1}", call.name, call.arguments))
        yield UsageDelta(
            input_tokens=estimate_tokens(request.system + _conversation_text(request)),
            output_tokens=estimate_tokens(
                turn.text + "".join(json.dumps(c.arguments) for c in turn.tool_calls)
            ),
        )


def _conversation_text(request: ModelRequest) -> str:
    parts: list[str] = []
    for message in request.messages:
        if isinstance(message, UserMessage | AssistantMessage):
            parts.append(message.text)
        else:
            parts.append(message.content)
    return "".join(parts)
