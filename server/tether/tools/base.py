"""What every tool is: a name, a description, an argument model and an async ``run``.

A tool failure is a value (``ToolResult(ok=False)``) the model sees, never an exception
that ends the run: tools raise ``ToolError`` and the registry turns it into a result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from ..errors import ToolError
from ..workspace import Workspace

__all__ = ["Tool", "ToolArgs", "ToolContext", "ToolError", "ToolResult"]


class ToolArgs(BaseModel):
    """Base of every tool's arguments: snake_case names, unknown arguments refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call produced. ``output`` is what the model reads."""

    ok: bool
    output: str
    error: str | None = None

    @classmethod
    def failure(cls, message: str) -> ToolResult:
        """A failed call: the message is both the model's observation and the error."""
        return cls(ok=False, output=message, error=message)


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool may touch while it runs."""

    workspace: Workspace
    run_id: str


A = TypeVar("A", bound=ToolArgs)


class Tool(Generic[A]):
    """A tool the model can call. Subclasses set the class attributes and ``run``."""

    name: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[ToolArgs]]
    needs_approval: ClassVar[bool] = False

    def parameters_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, as model APIs take it."""
        schema = self.args_model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        return schema

    def summary(self, args: A) -> str:
        """A few words for progress reports, e.g. the path the call touches."""
        return ""

    async def run(self, args: A, ctx: ToolContext) -> ToolResult:
        """Do the work; raise ``ToolError`` for failures the model should see."""
        raise NotImplementedError
