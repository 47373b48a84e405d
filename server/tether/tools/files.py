"""The read-only file tools: ``read_file``, ``list_files`` and (from ``search.py``) ``search``."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from ..errors import ToolError
from ..text.model import line_count, line_slice
from ..workspace.folders import Workspace
from .base import Tool, ToolArgs, ToolDeps, ToolResult, path_of
from .search import PathGlob, Search
from .search_engine import run_stoppable

__all__ = ["READ_TOOLS", "ListFiles", "ListFilesArgs", "ReadFile", "ReadFileArgs", "Search"]

DEFAULT_READ_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_LISTED_FILES = 1000


class ReadFileArgs(ToolArgs):
    """Arguments of ``read_file``."""

    path: str = Field(
        description="The file to read: relative to the workspace root, or absolute inside it."
    )
    offset: int | None = Field(
        default=None,
        ge=1,
        description="The 1-based line to start at; default 1. Use it to page through long files.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description=f"How many lines to show at most; default {DEFAULT_READ_LIMIT}.",
    )


class ReadFile(Tool[ReadFileArgs]):
    """Shows a file with numbered lines; an open editor buffer wins over the disk."""

    name: ClassVar[str] = "read_file"
    kind: ClassVar[str] = "read"

    def title(self, arguments: dict[str, Any]) -> str:
        return f"Read {path_of(arguments)}"

    description: ClassVar[str] = (
        "Read a text file in the workspace. Lines come numbered like `cat -n`; when the user "
        "has the file open in the editor you see their current, possibly unsaved, text. "
        f"Shows up to {DEFAULT_READ_LIMIT} lines; use offset and limit for longer files."
    )
    args_model: ClassVar[type[ToolArgs]] = ReadFileArgs

    async def run(self, args: ReadFileArgs, deps: ToolDeps) -> ToolResult:
        """Read the file and number the requested lines."""
        ws = deps.workspace
        path = ws.resolve(args.path)
        shown = ws.display(path)
        text = (await ws.read_text(path)).text
        total = line_count(text)
        if total == 0:
            return ToolResult(ok=True, output=f"[{shown} is empty]")
        start = args.offset or 1
        if start > total:
            raise ToolError(f"offset {start} is past the end of {shown}, which has {_lines(total)}")
        end = min(total, start - 1 + (args.limit or DEFAULT_READ_LIMIT))
        lines = line_slice(text, start - 1, end, total)
        out = [f"{n:>6}\t{_cut(line)}" for n, line in enumerate(lines, start)]
        if end < total:
            out.append(
                f"[showing lines {start}-{end} of {total}; use offset={end + 1} to read more]"
            )
        elif start > 1:
            out.append(f"[showing lines {start}-{end} of {total}]")
        return ToolResult(ok=True, output="\n".join(out))


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}… [line truncated, {len(line) - MAX_LINE_CHARS} more chars]"


def _lines(n: int) -> str:
    return "1 line" if n == 1 else f"{n} lines"


class ListFilesArgs(ToolArgs):
    """Arguments of ``list_files``."""

    path: str | None = Field(
        default=None,
        description="The folder to list, recursively; default the workspace root.",
    )
    pattern: str | None = Field(
        default=None,
        description=(
            "Only list files matching this glob. Without '/' it matches the file name "
            "('*.py', '*.{ts,tsx}'); with '/' the path relative to the listed folder or the "
            "workspace root ('src/**/*.ts'). '**' spans folders, '*' does not."
        ),
    )


class ListFiles(Tool[ListFilesArgs]):
    """Lists files under a folder, recursively, honouring ``.gitignore``."""

    name: ClassVar[str] = "list_files"
    kind: ClassVar[str] = "search"

    def title(self, arguments: dict[str, Any]) -> str:
        return f"List {path_of(arguments)}"

    description: ClassVar[str] = (
        "List the files under a folder of the workspace, recursively, as paths relative to "
        "the workspace root. Files ignored by .gitignore are left out. "
        f"At most {MAX_LISTED_FILES} are shown; narrow with path or pattern."
    )
    args_model: ClassVar[type[ToolArgs]] = ListFilesArgs

    async def run(self, args: ListFilesArgs, deps: ToolDeps) -> ToolResult:
        """Walk the folder in a worker thread (left behind on cancel) and list what matches."""
        ws = deps.workspace
        base = ws.resolve(args.path)
        glob = PathGlob.parse(args.pattern) if args.pattern else None
        files = await run_stoppable(lambda stop: _list(ws, base, glob, stop))
        where = "the workspace root" if base == ws.root else ws.display(base)
        if not files:
            suffix = f" matching {glob.pattern!r}" if glob else ""
            return ToolResult(ok=True, output=f"No files found in {where}{suffix}.")
        out = [ws.display(f) for f in files[:MAX_LISTED_FILES]]
        if len(files) > MAX_LISTED_FILES:
            out.append(
                f"[{MAX_LISTED_FILES} of {len(files)} files shown; narrow with path or pattern]"
            )
        return ToolResult(ok=True, output="\n".join(out))


def _list(ws: Workspace, base: Path, glob: PathGlob | None, stop: threading.Event) -> list[Path]:
    """The matching files under ``base`` (blocking; runs in a worker thread until ``stop``)."""
    shown = ws.display(base)
    if not base.exists():
        raise ToolError(f"folder not found: {shown}")
    if not base.is_dir():
        raise ToolError(f"{shown} is a file, not a folder; use read_file to read it")
    if ws.is_ignored(base):
        raise ToolError(f"{shown} is ignored by .gitignore, so its files are not listed")
    root = ws.root_of(base) or ws.root
    return [f for f in ws.walk_files(base, stop) if glob is None or glob.matches(f, base, root)]


READ_TOOLS: tuple[Tool[Any], ...] = (ReadFile(), ListFiles(), Search())
