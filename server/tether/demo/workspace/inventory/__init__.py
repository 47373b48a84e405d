"""A tiny stock-keeping library."""

from .stock import Stock

__all__ = ["Stock"]
