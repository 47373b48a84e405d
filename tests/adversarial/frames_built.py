"""Every frame Tether puts text from outside in, built by the server's own code.

Each builder takes the outside text and returns what the model receives around it, plus how
the frame's own code changes the text on purpose (trailing line ends dropped, a diagnostic
message put on one line), so that a property can tell "changed to fit" from "changed to hide".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import anyio

from tether.diagnostics.report import Problem, ProblemDelta, describe_delta, one_line
from tether.prompt.editor_state import editor_state_section
from tether.prompt.instructions import Instructions
from tether.prompt.mentions import Attachments, with_attachments
from tether.prompt.server_text import server_definitions
from tether.prompt.system import instructions_section
from tether.prompt.untrusted import frame
from tether.workspace.folders import Workspace
from tether_protocol import Position, Range, RunContext


@dataclass(frozen=True)
class Frame:
    """One place outside text is framed."""

    name: str
    tag: str
    build: Callable[[Workspace, str], str]
    kept: Callable[[str], str]
    """What of the text the frame means to show (before any defusing)."""


def _tool_output(_: Workspace, text: str) -> str:
    return frame("read_file", "call_1", text, [])


def _attached_file(_: Workspace, text: str) -> str:
    return with_attachments("see @notes.md", Attachments(files=[("notes.md", text, False)]))


def _selection(workspace: Workspace, text: str) -> str:
    whole = Range(start=Position(line=0, character=0), end=Position(line=1, character=0))
    uri = (workspace.root / "app.py").as_uri()
    context = RunContext(uri=uri, selection=whole, selected_text=text)
    return anyio.run(editor_state_section, workspace, context)


def _instructions(workspace: Workspace, text: str) -> str:
    item = Instructions(workspace.root / "AGENTS.md", text, len(text.encode()), cut=False)
    return instructions_section(workspace, [item])


def _diagnostics(workspace: Workspace, text: str) -> str:
    problem = Problem(workspace.root / "app.py", 3, 1, "lint", None, text)
    note = describe_delta(ProblemDelta(new=(problem,)), workspace.display, ["app.py"])
    return frame("edit_file", "call_2", "Edited app.py: 1 replaced.\n" + note, [])


def _mcp_description(_: Workspace, text: str) -> str:
    [definition] = server_definitions("notes", [("lookup", text, {"type": "object"})])
    close = "</mcp-description>"  # the flag that may follow is Tether's, outside the frame
    return definition.description[: definition.description.rindex(close) + len(close)]


def _trimmed(text: str) -> str:
    return text.rstrip("\n")


def _described(text: str) -> str:
    return text.strip("\n").rstrip()


FRAMES = (
    Frame("tool output", "tool_output", _tool_output, lambda text: text),
    Frame("@attached file", "attached-file", _attached_file, _trimmed),
    Frame("editor selection", "editor-selection", _selection, _trimmed),
    Frame("AGENTS.md", "project-instructions", _instructions, _trimmed),
    Frame("diagnostics", "tool_output", _diagnostics, one_line),
    Frame("MCP description", "mcp-description", _mcp_description, _described),
)


def by_name(name: str) -> Frame:
    return next(f for f in FRAMES if f.name == name)
