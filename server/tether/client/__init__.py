"""The headless client: spawns ``tether serve`` and speaks protocol v1 to it (demo, run, tests)."""

from .connection import ServerError, TetherClient
from .render import TerminalRenderer

__all__ = ["ServerError", "TerminalRenderer", "TetherClient"]
