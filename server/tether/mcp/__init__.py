"""Tools from MCP servers: configured servers started lazily, their tools offered to the
model as ``mcp__<server>__<tool>``, every call through the approval gate (docs/mcp.md).

Nothing here imports the ``mcp`` SDK at import time: only a configured server, when it
starts, does (``server.py``, ``stdio.py``).
"""
