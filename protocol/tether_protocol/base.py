"""Shared base model: camelCase on the wire, snake_case in Python."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """A message shape of protocol v1.

    Fields are snake_case in Python and camelCase on the wire. Unknown fields are refused so
    that a typo in a client shows up as an error naming the field instead of being ignored.
    Values are validated strictly: ``"5"`` is not an integer.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        strict=True,
        frozen=True,
    )

    def to_wire(self) -> dict[str, object]:
        """The JSON-ready dict of this message (camelCase, unset optional fields left out)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Position(WireModel):
    """A position in a text document (LSP: zero-based line, UTF-16 character offset)."""

    line: int
    character: int


class Range(WireModel):
    """A range in a text document (LSP)."""

    start: Position
    end: Position
