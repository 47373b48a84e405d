"""The headless client: spawns ``tether serve`` and speaks protocol v1 to it (demo, run, tests).

The names below are loaded on first use, so that ``tether run`` can import
``tether.client.spawn`` and start its server before paying for the protocol's models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .connection import ServerError, TetherClient
    from .render import TerminalRenderer

__all__ = ["ServerError", "TerminalRenderer", "TetherClient"]


def __getattr__(name: str) -> Any:
    if name in ("ServerError", "TetherClient"):
        from . import connection

        return getattr(connection, name)
    if name == "TerminalRenderer":
        from .render import TerminalRenderer

        return TerminalRenderer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
