"""A tool registry whose tools never change after construction, so their specs are built once.

``ToolRegistry.specs`` asks pydantic for every tool's JSON schema, and the loop asks for the
specs at every model call: that was two thirds of a step's cost in the server (about 2 ms
a step for six tools). The server's tools are fixed when it starts, so it uses this.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..providers.base import ToolSpec
from .base import Tool
from .registry import ToolRegistry


class StaticToolRegistry(ToolRegistry):
    """``ToolRegistry`` with the specs computed once, at construction."""

    def __init__(self, tools: Iterable[Tool[Any]]) -> None:
        super().__init__(tools)
        self._specs: tuple[ToolSpec, ...] = tuple(super().specs())

    def specs(self) -> Sequence[ToolSpec]:
        """The tools as the model sees them (the same objects every time)."""
        return self._specs
