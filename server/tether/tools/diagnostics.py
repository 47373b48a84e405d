"""``diagnostics``: the problems the user's language servers report, as the editor shows them.

Read-only (no approval). With a path, one workspace file; without, every file of the
workspace the editor has problems for (documents outside it are left out). An editor that
cannot tell (it did not declare ``experimental.tether.diagnostics``, like the headless
``tether run`` client) gets a result saying so plainly.
"""

from __future__ import annotations

from typing import Any, ClassVar

import anyio.to_thread
from pydantic import Field

from ..diagnostics.report import listing
from ..errors import ToolError
from .base import Tool, ToolArgs, ToolDeps, ToolResult

MAX_LISTED = 100
"""Problems listed at most; the rest are counted."""
WAIT_SECONDS = 5.0
"""How long the tool waits for the editor's answer before giving up."""

UNSUPPORTED = (
    "This editor does not report diagnostics to Tether (it has no language-server problems "
    "to share). To find errors, run the project's own checks (a compiler, type checker, "
    "linter or tests) with bash."
)


class DiagnosticsArgs(ToolArgs):
    """Arguments of ``diagnostics``."""

    path: str | None = Field(
        default=None,
        description="A file relative to the workspace root; leave it out for every file "
        "of the workspace the editor has problems for.",
    )


class Diagnostics(Tool[DiagnosticsArgs]):
    """Lists the editor's problems (errors first, then warnings, then the rest)."""

    name: ClassVar[str] = "diagnostics"
    kind: ClassVar[str] = "read"

    def title(self, arguments: dict[str, Any]) -> str:
        path = arguments.get("path")
        return f"Problems in {path}" if isinstance(path, str) and path else "Problems"

    description: ClassVar[str] = (
        "List the problems (errors, warnings, hints) the user's editor and its language "
        "servers report, for one file or the whole workspace, as path:line: severity "
        "[source] message. Read-only."
    )
    args_model: ClassVar[type[ToolArgs]] = DiagnosticsArgs

    async def run(self, args: DiagnosticsArgs, deps: ToolDeps) -> ToolResult:
        ws = deps.workspace
        uris: list[str] | None = None
        scope = "the workspace"
        if args.path is not None:
            path = ws.resolve(args.path)
            shown = ws.display(path)
            if ws.buffers.get(path) is None:
                if await anyio.to_thread.run_sync(path.is_dir):
                    raise ToolError(f"{shown} is a folder; give a file, or no path for all")
                if not await anyio.to_thread.run_sync(path.exists):
                    raise ToolError(f"file not found: {shown}")
            uris, scope = [ws.uri_for(path)], shown
        if deps.problems is None:
            return ToolResult(ok=True, output=UNSUPPORTED)
        answer = await deps.problems.ask(uris, WAIT_SECONDS)
        if answer == "unsupported":
            return ToolResult(ok=True, output=UNSUPPORTED)
        if answer == "timeout":
            return ToolResult.failure(
                f"The editor did not answer within {WAIT_SECONDS:g} s; its problems are unknown."
            )
        if not answer:
            return ToolResult(ok=True, output=f"The editor reports no problems in {scope}.")
        shown_list = listing(answer, ws.display, MAX_LISTED)
        files = "1 file" if shown_list.files == 1 else f"{shown_list.files} files"
        head = f"The editor reports {len(answer)} problem(s) in {files}:"
        more = [f"… and {shown_list.more} more"] if shown_list.more else []
        return ToolResult(ok=True, output="\n".join([head, *shown_list.lines, *more]))
