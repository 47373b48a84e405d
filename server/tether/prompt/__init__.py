"""What the model reads besides the conversation: the system prompt, AGENTS.md, the editor's
state, @mentions, and untrusted text framed as data.

A run's assembly (``run/assemble.py``) asks this package for one thing, ``model_input``:
the system prompt (the workspace, the tools, the editor's state, the project's AGENTS.md)
and the user's message (the prompt with its ``@file`` mentions attached). The modules that
make them are imported with the package (with the server, not by its first run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .editor_state import editor_state_section
from .instructions import home_folder, load
from .mentions import expand_mentions
from .system import system_prompt

if TYPE_CHECKING:
    from tether_protocol import RunContext

    from ..workspace.folders import Workspace


@dataclass(frozen=True, slots=True)
class ModelInput:
    """What a run's model reads before the conversation goes on."""

    system: str
    """The system prompt: the workspace, the tools, the editor, the project's AGENTS.md."""
    message: str
    """The prompt as the model reads it, with the ``@file`` mentions attached."""


async def model_input(
    workspace: Workspace, tools: Sequence[str], prompt: str, context: RunContext | None
) -> ModelInput:
    """The system prompt and the user's message of a run with ``tools`` in ``workspace``;
    ``context`` is the editor as the run starts (``agent/run`` ``context``)."""
    instructions = await load(workspace.root, workspace.buffers, home_folder())
    editor_state = await editor_state_section(workspace, context, workspace.position_encoding)
    message = await expand_mentions(prompt, workspace)
    return ModelInput(system_prompt(workspace, tools, editor_state, instructions), message)
