"""The names MCP tools reach the model under: ``mcp__<server>__<tool>``, in the characters
and length every model API takes (``[A-Za-z0-9_-]``, at most 64)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from ..text.display import shown

MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_SHOWN = 120


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, other characters as ``_``; a longer name is cut and ends
    with a hash of the whole, so two long names stay apart."""
    name = _UNSAFE.sub("_", f"mcp__{server}__{tool}")
    if len(name) <= MAX_NAME:
        return name
    return f"{name[: MAX_NAME - 9]}_{_digest(server, tool)}"


def server_prefix(server: str) -> str:
    """How every model-facing name of ``server``'s tools begins (``mcp__<server>__`` as
    ``tool_name`` spells it, up to where a cut name's hash would start)."""
    return _UNSAFE.sub("_", f"mcp__{server}__")[: MAX_NAME - 9]


def shown_name(server: str, tool: str) -> str:
    """The tool as people read it in a transcript or a card: ``notes · echo`` (the server's
    and the tool's own names, as the display shows text from outside: ``text.display``)."""
    return shown(f"{server} · {tool}"[:MAX_SHOWN])


def _digest(server: str, tool: str) -> str:
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]


def unique_names(server: str, tools: Iterable[str], taken: set[str]) -> dict[str, str]:
    """Each of ``server``'s tools and its model-facing name, none in ``taken`` (which is
    extended): two tools the sanitising would merge get a hash each."""
    named: dict[str, str] = {}
    for tool in tools:
        name = tool_name(server, tool)
        if name in taken:
            name = f"{name[: MAX_NAME - 9]}_{_digest(server, tool)}"
        if name in taken:
            continue  # the very same tool listed twice
        taken.add(name)
        named[tool] = name
    return named
