"""What Tether tells the model, in one readable place: the system prompt and the nudges."""

from __future__ import annotations

from collections.abc import Sequence

from tether_protocol import RunContext

from .workspace import Workspace, path_from_uri

SYSTEM_PROMPT = """\
You are Tether, a coding agent working inside the user's editor.

You work in the workspace at {root}. Paths you give to tools are relative to it; anything
outside it is refused. Your tools: {tools}.

How to work:
- Read before you change: look at the files involved and search for what you need. Do not
  guess at code you have not read.
- The files you read are what the user sees, including edits they have not saved yet.
- Changes and shell commands are shown to the user for approval and may be denied; when
  one is denied, read the user's feedback and adapt instead of retrying the same call.
- Make the smallest change that does the job, in the style of the code around it.
- A tool error is information: read it, fix the call or take another way.
- Calling the same tool with the same arguments again will not give a different answer.
- Keep going until the task is done, then answer briefly: what you found or changed, with
  file paths (and line numbers where they help). Do not paste whole files back.
{context}"""

CONTINUE_PROMPT = (
    "Your reply was cut off at the output limit. Continue exactly where it stopped, "
    "without repeating anything you already wrote."
)
"""Asks the model to go on after its reply hit the output limit (the text is stitched)."""


def system_prompt(workspace: Workspace, tools: Sequence[str], context: RunContext | None) -> str:
    """The system prompt for one run: workspace, tools and the user's active editor."""
    lines: list[str] = []
    if context is not None:
        path = path_from_uri(context.uri)
        shown = workspace.display(path.resolve()) if path is not None else context.uri
        lines.append(f"\nThe user's active file is {shown}.")
        if context.selection is not None:
            start, end = context.selection.start, context.selection.end
            lines.append(
                f"Their selection spans line {start.line + 1} col {start.character + 1} "
                f'to line {end.line + 1} col {end.character + 1}; "this" or "here" in '
                "the request most likely means the selected code."
            )
    return SYSTEM_PROMPT.format(
        root=workspace.root, tools=", ".join(tools), context="\n".join(lines)
    )
