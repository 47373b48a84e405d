"""The ``search`` tool: a regex over the workspace's files, open buffers as the user sees them.

Two engines choose which files match, and they must agree exactly:

* **ripgrep** (when ``rg`` is installed) lists the files with a match, fast, honouring the
  same ``.gitignore`` rules as ``Workspace.walk_files``;
* **the Python fallback** walks ``Workspace.walk_files`` itself.

Either way the matching lines are then read and matched in Python, and ripgrep's file list
is filtered through ``Workspace.is_ignored`` and the glob. That is what makes the two agree:
ripgrep's ``--glob`` overrides ``.gitignore``, ``--no-ignore-parent`` forgets the rules of
folders above the search path, and ripgrep prints CRLF endings, BOMs, non-UTF-8 lines and
lines before a late NUL byte differently from how ``read_file`` shows them.

Regex dialect: the pattern is a Python ``re`` regex, matched against each line (without its
line ending). ripgrep's Rust regex only preselects files; a pattern Rust cannot parse
(look-around, backreferences) falls back to the Python walk. Constructs that both accept but
read differently (POSIX classes such as ``[[:alpha:]]``, some Unicode classes) may find
fewer files through ripgrep, so tests use patterns valid and equal in both.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import anyio
import anyio.to_thread
from pydantic import Field

from ..errors import ToolError
from ..host import Buffer
from ..ignore import wildmatch_regex
from ..workspace import Workspace, decode_text, split_lines
from .base import Tool, ToolArgs, ToolContext, ToolResult

__all__ = ["MAX_MATCHES", "RG_FLAGS", "PathGlob", "Search", "SearchArgs", "find_rg"]

log = logging.getLogger(__name__)

MAX_MATCHES = 200
MAX_MATCH_CHARS = 300
# Larger files are skipped by both engines (ripgrep through --max-filesize).
MAX_SEARCH_BYTES = 10 * 1024 * 1024

# File selection equal to Workspace.walk_files: .gitignore at every level even outside a git
# repository, hidden files, never .git, and none of ripgrep's other ignore sources.
RG_FLAGS = (
    "--no-config",
    "--no-require-git",
    "--hidden",
    "--glob",
    "!.git",
    "--no-ignore-parent",
    "--no-ignore-dot",
    "--no-ignore-exclude",
    "--no-ignore-global",
    "--color",
    "never",
    "--no-messages",
)


def find_rg() -> str | None:
    """The ``rg`` binary on PATH, else next to the running Python (a venv's ``bin``)."""
    return shutil.which("rg") or shutil.which("rg", path=str(Path(sys.executable).parent))


@dataclass(frozen=True, slots=True)
class PathGlob:
    """A glob over workspace files, as ``list_files`` and ``search`` take it.

    Without ``/`` it matches the file name (``*.py``, ``*.{ts,tsx}``); with ``/`` the path
    relative to the folder listed or searched, or to the workspace root (``src/**/*.ts``).
    The syntax is ``wildmatch_regex``'s (``*``, ``**``, ``?``, ``[...]``, ``{a,b}``).
    """

    pattern: str
    regex: re.Pattern[str]

    @classmethod
    def parse(cls, pattern: str) -> PathGlob:
        """The glob for ``pattern`` (a leading ``./`` is dropped)."""
        pattern = pattern.removeprefix("./")
        return cls(pattern, re.compile(wildmatch_regex(pattern) or re.escape(pattern), re.S))

    def matches(self, path: Path, base: Path, root: Path) -> bool:
        """Whether ``path`` (inside ``base``, inside ``root``) matches."""
        if "/" not in self.pattern:
            return self.regex.fullmatch(path.name) is not None
        relative = (path.relative_to(base).as_posix(), path.relative_to(root).as_posix())
        return any(self.regex.fullmatch(r) is not None for r in relative)

    def basename_only(self) -> bool:
        """Whether ripgrep's ``--glob`` selects exactly the same files by name.

        True for name globs of literals, ``*``, ``?`` and un-nested ``{a,b}``; classes,
        escapes, odd braces (errors to ripgrep) and a leading ``!`` (a negation to ripgrep)
        are left to Python alone.
        """
        if self.pattern.startswith("!") or any(c in self.pattern for c in "/[]\\"):
            return False
        depth = 0
        for c in self.pattern:
            depth += {"{": 1, "}": -1}.get(c, 0)
            if depth not in (0, 1):
                return False
        return depth == 0


class SearchArgs(ToolArgs):
    """Arguments of ``search``."""

    pattern: str = Field(
        description=(
            "A regular expression (Python re syntax), matched against each line; "
            "case-sensitive unless it starts with (?i)."
        )
    )
    path: str | None = Field(
        default=None,
        description="The folder (or single file) to search; default the whole workspace.",
    )
    glob: str | None = Field(
        default=None,
        description=(
            "Only search files matching this glob: '*.py' or '*.{ts,tsx}' match the file "
            "name; a glob with '/' (e.g. 'src/**/*.ts') matches the relative path."
        ),
    )


@dataclass(frozen=True, slots=True, order=True)
class _Hit:
    parts: tuple[str, ...]  # the path's parts: sorts like walk_files (by name, folder by folder)
    line: int
    text: str

    @property
    def path(self) -> Path:
        return Path(*self.parts)


class Search(Tool[SearchArgs]):
    """Searches file contents; ripgrep when available, else a Python walk (same results)."""

    name: ClassVar[str] = "search"
    description: ClassVar[str] = (
        "Search the contents of the workspace's files for a regular expression (Python re "
        "syntax, matched line by line). Prints `path:line: text`, sorted by path, up to "
        f"{MAX_MATCHES} matches. Skips binary files and files ignored by .gitignore; files "
        "open in the editor are searched as the user sees them, unsaved changes included."
    )
    args_model: ClassVar[type[ToolArgs]] = SearchArgs

    def __init__(self, *, use_rg: bool | None = None, rg_path: str | None = None) -> None:
        """``use_rg=False`` forces the Python walk; ``rg_path`` names the binary to use."""
        self.rg_path = None if use_rg is False else (rg_path or find_rg())
        if use_rg and self.rg_path is None:
            raise ValueError("use_rg=True but no rg binary was found")

    async def run(self, args: SearchArgs, ctx: ToolContext) -> ToolResult:
        """Find the matching lines, buffers first, and print them sorted."""
        ws = ctx.workspace
        try:
            regex = re.compile(args.pattern)
        except re.error as exc:
            raise ToolError(f"invalid regex {args.pattern!r}: {exc}") from exc
        base = ws.resolve(args.path)
        glob = PathGlob.parse(args.glob) if args.glob else None
        buffers = list(ws.buffers.all())
        if await anyio.to_thread.run_sync(_is_file, ws, base, buffers):
            hits, total = await self._search_file(ws, base, regex, glob)
        else:
            hits, total = await self._search_folder(ws, base, regex, glob, buffers)
        return ToolResult(ok=True, output=_format(ws, hits, total, args, base))

    async def _search_file(
        self, ws: Workspace, path: Path, regex: re.Pattern[str], glob: PathGlob | None
    ) -> tuple[list[_Hit], int]:
        # A file named explicitly is searched even if .gitignore leaves it out.
        if glob is not None and not glob.matches(path, path.parent, ws.root_of(path) or ws.root):
            return [], 0
        snapshot = await ws.read_text(path)
        hits = [_Hit(path.parts, n, line) for n, line in _matching_lines(snapshot.text, regex)]
        return hits, len(hits)

    async def _search_folder(
        self,
        ws: Workspace,
        base: Path,
        regex: re.Pattern[str],
        glob: PathGlob | None,
        buffers: list[Buffer],
    ) -> tuple[list[_Hit], int]:
        candidates = None
        if self.rg_path is not None:
            candidates = await self._rg_candidates(self.rg_path, base, regex.pattern, glob)
        return await anyio.to_thread.run_sync(
            _scan_folder, ws, base, regex, glob, buffers, candidates
        )

    async def _rg_candidates(
        self, rg: str, base: Path, pattern: str, glob: PathGlob | None
    ) -> list[Path] | None:
        """The files ripgrep finds a match in; None when the Python walk must decide."""
        cmd = [rg, *RG_FLAGS, "--files-with-matches", "--null", "--crlf"]
        cmd += ["--max-filesize", str(MAX_SEARCH_BYTES)]
        if glob is not None and glob.basename_only():
            cmd += ["--glob", glob.pattern]  # a pre-filter only; Python applies the glob too
        cmd += ["-e", pattern, "--", str(base)]
        try:
            result = await anyio.run_process(cmd, cwd=base, check=False)
        except OSError as exc:
            log.warning("cannot run %s (%s); searching without ripgrep", rg, exc)
            return None
        stderr = result.stderr.decode("utf-8", errors="replace").strip()
        if result.returncode == 1:
            return []
        # 2 with nothing said: some file could not be read (messages are off); the rest stands.
        if result.returncode not in (0, 2) or (result.returncode == 2 and stderr):
            if "regex" in stderr.lower() or "glob" in stderr.lower():
                return None  # valid for Python, not for rg: the Python walk decides
            raise ToolError(f"search failed (rg exit {result.returncode}): {stderr}")
        return [Path(os.fsdecode(raw)) for raw in result.stdout.split(b"\0") if raw]


def _is_file(ws: Workspace, path: Path, buffers: list[Buffer]) -> bool:
    """Whether ``path`` names one file (on disk, or an unsaved buffer) rather than a folder."""
    if path.is_dir():
        return False
    if path.is_file() or (not path.exists() and any(b.path == path for b in buffers)):
        return True
    if path.exists():  # a FIFO or device: reading it could block forever
        raise ToolError(f"{ws.display(path)} is neither a regular file nor a folder")
    raise ToolError(f"path not found: {ws.display(path)}")


def _scan_folder(
    ws: Workspace,
    base: Path,
    regex: re.Pattern[str],
    glob: PathGlob | None,
    buffers: list[Buffer],
    candidates: list[Path] | None,
) -> tuple[list[_Hit], int]:
    """Matches under ``base`` and their total (blocking; runs in a worker thread).

    ``candidates`` are ripgrep's files (None: walk). Open buffers replace their disk files.
    """
    shown = ws.display(base)
    ignored = ws.ignore_checker()  # candidates share folders: look each one up once
    if ignored(base):
        raise ToolError(f"{shown} is ignored by .gitignore, so it is not searched")
    root = ws.root_of(base) or ws.root

    def selected(path: Path) -> bool:
        return glob is None or glob.matches(path, base, root)

    open_here = [
        b
        for b in buffers
        if b.path.is_relative_to(base) and selected(b.path) and not ignored(b.path)
    ]
    skip = {b.path for b in open_here}
    if candidates is None:
        files = [f for f in ws.walk_files(base) if f not in skip and selected(f)]
    else:
        files = sorted(
            (
                f
                for f in set(candidates)
                if f.is_relative_to(base)
                and f not in skip
                and selected(f)
                and not f.is_symlink()
                and not ignored(f)
            ),
            key=lambda f: f.parts,
        )
    hits: list[_Hit] = []
    total = 0
    for buffer in open_here:
        found = _matching_lines(buffer.text, regex)
        hits.extend(_Hit(buffer.path.parts, n, line) for n, line in found)
        total += len(found)
    kept = 0
    for path in files:  # in path order: once MAX_MATCHES are kept, later ones are only counted
        found = _matching_lines(_read_searchable(path), regex)
        total += len(found)
        if kept < MAX_MATCHES:
            hits.extend(_Hit(path.parts, n, line) for n, line in found)
            kept += len(found)
    hits.sort()
    return hits[:MAX_MATCHES], total


def _read_searchable(path: Path) -> str:
    """The file's text, or "" when it is binary, too large or unreadable (then skipped)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SEARCH_BYTES:
            return ""
        data = path.read_bytes()
    except OSError:
        return ""
    return decode_text(data) or ""


def _matching_lines(text: str, regex: re.Pattern[str]) -> list[tuple[int, str]]:
    return [(n, line) for n, line in enumerate(split_lines(text), 1) if regex.search(line)]


def _format(ws: Workspace, hits: list[_Hit], total: int, args: SearchArgs, base: Path) -> str:
    if not hits:
        where = "the workspace" if base == ws.root else ws.display(base)
        only = f" (files matching {args.glob!r})" if args.glob else ""
        return f"No matches for {args.pattern!r} in {where}{only}."
    out = [f"{ws.display(h.path)}:{h.line}: {_cut(h.text)}" for h in hits[:MAX_MATCHES]]
    if total > MAX_MATCHES:
        out.append(f"[{MAX_MATCHES} of {total} matches shown; narrow with path or glob]")
    return "\n".join(out)


def _cut(text: str) -> str:
    if len(text) <= MAX_MATCH_CHARS:
        return text
    return f"{text[:MAX_MATCH_CHARS]}… [{len(text) - MAX_MATCH_CHARS} more chars]"
