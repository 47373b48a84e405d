"""Tether: an editor-integrated coding agent served over JSON-RPC with LSP framing."""

__version__ = "0.1.0"
