"""What the lean start answers ``initialize`` with is what the full server would say: its
copies of the tool names, providers, commands and protocol version (it cannot import their
sources, which import pydantic) are the sources' values."""

from __future__ import annotations

from tether.lsp import lean
from tether.providers import AVAILABLE_PROVIDERS
from tether.tools import build_tools
from tether_protocol import methods


def test_the_lean_starts_copies_are_the_sources_values() -> None:
    assert list(lean.TOOL_NAMES) == list(build_tools().names)
    assert lean.PROVIDERS == AVAILABLE_PROVIDERS
    assert lean.COMMANDS == methods.COMMANDS
    assert lean.PROTOCOL_VERSION == methods.PROTOCOL_VERSION
