"""A small MCP server over stdio, without the SDK (it starts at once): a notes file and three
tools over it, which record each call in the file ``NOTES_MCP_CALLS``.

- ``write_note`` appends to ``NOTES_MCP_FILE`` and says nothing about itself (no
  annotations: by MCP's defaults, a tool that may change anything);
- ``read_note`` reads it, annotated ``readOnlyHint: true``;
- ``erase_notes`` deletes it, annotated ``readOnlyHint: true`` *and* ``destructiveHint:
  true`` (a server contradicting itself).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for tests/
from tests.stdio_mcp import serve

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}
NOTHING = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "write_note", "description": "Add a line to the notes.", "inputSchema": TEXT},
    {
        "name": "read_note",
        "description": "Read the notes.",
        "inputSchema": NOTHING,
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "erase_notes",
        "description": "Erase the notes.",
        "inputSchema": NOTHING,
        "annotations": {"readOnlyHint": True, "destructiveHint": True},
    },
]


def call(name: str, arguments: dict[str, Any]) -> str:
    notes = Path(os.environ["NOTES_MCP_FILE"])
    with open(os.environ["NOTES_MCP_CALLS"], "a") as calls:
        calls.write(name + "\n")
    if name == "write_note":
        with notes.open("a") as out:
            out.write(str(arguments.get("text", "")) + "\n")
        return "written"
    if name == "read_note":
        return notes.read_text() if notes.exists() else "(no notes)"
    notes.unlink(missing_ok=True)
    return "erased"


serve("notes", TOOLS, lambda name, arguments: (call(name, arguments), False))
