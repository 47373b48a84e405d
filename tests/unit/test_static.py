"""The server's tool registry: specs built once, the same as ``ToolRegistry`` builds them."""

from __future__ import annotations

from tether.tools import build_tools
from tether.tools.registry import ToolRegistry
from tether.tools.static import StaticToolRegistry


def test_specs_are_built_once_and_equal_to_the_plain_registry() -> None:
    tools = build_tools()
    assert isinstance(tools, StaticToolRegistry)
    plain = ToolRegistry(tools.get(name) for name in tools.names)  # type: ignore[misc]
    assert list(tools.specs()) == list(plain.specs())
    assert tools.specs() is tools.specs()  # no schema is generated per model call
