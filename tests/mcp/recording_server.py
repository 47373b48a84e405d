"""A small MCP server over stdio (no SDK: it starts at once) that tells the test where it
runs: at start it writes ``$MARKS/$TAG.json`` with its folder, ``PATH`` and pid.

With ``STUBBORN_CHILD`` set (a file name), it first starts a child that leaves the server's
process group (``setsid``), ignores SIGTERM, writes its pid to that file and lingers: what a
careless server leaves behind. With ``GATE`` set (a FIFO), it answers nothing until the
test opens that FIFO for writing: a server slow to start, released by the test rather than
by time. One tool, ``echo``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for tests/
from tests.stdio_mcp import serve


def stubborn_child(pid_file: str) -> None:
    """Fork a child that outlives what it can: its own session, SIGTERM ignored."""
    if os.fork() != 0:
        return
    os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    for fd in (0, 1, 2):  # not the server's pipes: its exit is not held up by them
        os.close(fd)
    Path(pid_file + ".tmp").write_text(str(os.getpid()))
    os.replace(pid_file + ".tmp", pid_file)
    while True:
        signal.pause()  # lingers until killed


def wait_for(gate: str) -> None:
    """Hold the start until the test opens the FIFO ``gate`` for writing and closes it."""
    with open(gate) as released:
        released.read()


def record() -> None:
    marks = Path(os.environ["MARKS"])
    tag = os.environ.get("TAG", "server")
    shown = {"cwd": os.getcwd(), "path": os.environ.get("PATH", ""), "pid": os.getpid()}
    (marks / f"{tag}.json.tmp").write_text(json.dumps(shown))
    os.replace(marks / f"{tag}.json.tmp", marks / f"{tag}.json")


ECHO = {
    "name": "echo",
    "description": "Say the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def call(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    return f"echo: {arguments.get('text', '')}", False


if __name__ == "__main__":
    if os.environ.get("STUBBORN_CHILD"):
        stubborn_child(os.environ["STUBBORN_CHILD"])
    record()
    if os.environ.get("GATE"):
        wait_for(os.environ["GATE"])
    serve("recording", [ECHO], call)
