"""A small MCP server for the tests, written with the SDK's MCPServer (FastMCP in mcp 1.x):
tools that echo, fail, hang, crash, flood and send garbage. Run it as
``python notes_server.py [stdio | http PORT]``. ``NOTES_MARKS`` names a folder where it
records what happened (a started process, a cancelled call), for the tests to check."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("notes")
WIRE = os.dup(1)
"""The protocol's stdout before the SDK diverts fd 1 to stderr (which it does to keep stray
prints off the wire): what flood and garbage write to."""
MARKS = Path(os.environ["NOTES_MARKS"]) if os.environ.get("NOTES_MARKS") else None


def mark(name: str, text: str = "") -> None:
    if MARKS is not None:
        (MARKS / name).write_text(text)


@server.tool(description="Say the text back, with the server's NOTES_TOKEN if it has one.")
def echo(text: str) -> str:
    mark("called-echo", text)
    token = os.environ.get("NOTES_TOKEN", "")
    return f"echo: {text}" + (f" (token {token})" if token else "")


@server.tool(
    description="Look a note up (read-only).", annotations=ToolAnnotations(readOnlyHint=True)
)
def lookup(key: str) -> dict[str, str]:
    return {"key": key, "note": f"the note of {key}"}


@server.tool(description="Always fails.")
def fail(reason: str = "it failed") -> str:
    raise ValueError(reason)


@server.tool(description="Waits, then answers.")
async def hang(seconds: float = 3600) -> str:
    mark("hanging", str(seconds))
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        mark("cancelled", "hang")
        raise
    return "woke"


@server.tool(description="Exits the server process at once.")
def crash(code: int = 7) -> str:
    sys.stderr.write("notes: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(code)


@server.tool(description="Writes a very long line to stdout.")
def flood(megabytes: int = 40) -> str:
    chunk = b"x" * (1 << 20)
    for _ in range(megabytes):
        os.write(WIRE, chunk)
    return "flooded"


@server.tool(description="Writes a line that is not JSON-RPC to stdout.")
def garbage() -> str:
    os.write(WIRE, b"this is not json\n")
    return "sent"


@server.tool(description="Answers with a picture and a caption.")
def picture() -> list[TextContent | ImageContent]:
    return [
        TextContent(type="text", text="a red dot"),
        ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
    ]


@server.tool(description="Starts a child process that sleeps, and answers its pid.")
def spawn() -> str:
    import subprocess

    child = subprocess.Popen(["sleep", "600"])
    mark(f"child-{child.pid}", str(child.pid))
    return str(child.pid)


@server.tool(description="Prints the names of its environment variables.")
def environment() -> str:
    return " ".join(sorted(os.environ))


if __name__ == "__main__":
    mark(f"started-{os.getpid()}", str(os.getpid()))
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
