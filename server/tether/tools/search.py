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

Regex dialect: RE2's (``linear_regex``), matched against each line (without its line
ending) in time linear in the line, so no pattern can stall the server; look-around and
backreferences are refused with a clear error. ripgrep's Rust regex, nearly the same
dialect, only preselects files: ``rg_pattern`` makes its word, digit and space classes
and word boundaries ASCII like RE2's, and a pattern Rust cannot parse falls back to the
Python walk. ripgrep runs in its own process group and is killed when the run is cancelled
or times out; the Python side runs in a worker thread that is abandoned on cancel and stops
at the next file.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import anyio
import anyio.to_thread
from pydantic import Field

from ..errors import ToolError
from ..host import Buffer
from ..text.linear_regex import LinearRegexError
from ..workspace.folders import Workspace, decode_text
from ..workspace.ignore import compile_glob, wildmatch_regex
from .base import Tool, ToolArgs, ToolDeps, ToolResult, one_line, path_of
from .search_engine import LineMatcher, rg_pattern, run_killable, run_stoppable

__all__ = ["ENGINE_ENV", "MAX_MATCHES", "RG_FLAGS", "PathGlob", "Search", "SearchArgs", "find_rg"]

log = logging.getLogger(__name__)

MAX_MATCHES = 200
MAX_MATCH_CHARS = 300
# Larger files are skipped by both engines: by the Python side, which reads every file
# ripgrep names. Not also by ripgrep's --max-filesize: that stats every file in the tree
# (9-10 ms of 20,000 files, 15% of a search), where ripgrep otherwise takes the file type
# from the directory entry; a larger file costs ripgrep one read, and a NUL byte (a sparse
# or binary file) ends that read at once.
MAX_SEARCH_BYTES = 10 * 1024 * 1024
# "python" makes every Search without an explicit engine skip ripgrep (tests, benchmarks).
ENGINE_ENV = "TETHER_SEARCH_ENGINE"

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
    """The ``rg`` binary on PATH (its absolute folders: a relative one would name a folder
    of the workspace), else next to the running Python (a venv's ``bin``)."""
    folders = os.environ.get("PATH", os.defpath).split(os.pathsep)
    on_path = os.pathsep.join(f for f in folders if os.path.isabs(f))
    return shutil.which("rg", path=on_path) or shutil.which(
        "rg", path=str(Path(sys.executable).parent)
    )


@dataclass(frozen=True, slots=True)
class PathGlob:
    """A glob over workspace files, as ``list_files`` and ``search`` take it.

    Without ``/`` it matches the file name (``*.py``, ``*.{ts,tsx}``); with ``/`` the path
    relative to the folder listed or searched, or to the workspace root (``src/**/*.ts``).
    The syntax is ``wildmatch_regex``'s (``*``, ``**``, ``?``, ``[...]``, ``{a,b}``).
    """

    pattern: str
    fullmatch: Callable[[str], bool]  # bounded time whatever the glob (ignore.compile_glob)

    @classmethod
    def parse(cls, pattern: str) -> PathGlob:
        """The glob for ``pattern`` (a leading ``./`` is dropped); ``ToolError`` if too big."""
        pattern = pattern.removeprefix("./")
        try:
            matcher = compile_glob(wildmatch_regex(pattern) or re.escape(pattern))
        except LinearRegexError as exc:
            raise ToolError(f"invalid glob {pattern!r}: {exc}") from exc
        return cls(pattern, matcher)

    def matches(self, path: Path, base: Path, root: Path) -> bool:
        """Whether ``path`` (inside ``base``, inside ``root``) matches."""
        if "/" not in self.pattern:
            return self.fullmatch(path.name)
        relative = (path.relative_to(base).as_posix(), path.relative_to(root).as_posix())
        return any(self.fullmatch(r) for r in relative)

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
            "A regular expression (RE2 syntax, as in ripgrep: no look-around or "
            "backreferences), matched against each line; case-sensitive unless it starts "
            "with (?i)."
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
    kind: ClassVar[str] = "search"

    def title(self, arguments: dict[str, Any]) -> str:
        pattern = one_line(arguments.get("pattern", ""), 60)
        return f"Search {pattern!r} in {path_of(arguments)}"

    description: ClassVar[str] = (
        "Search the contents of the workspace's files for a regular expression (RE2 "
        "syntax as in ripgrep, matched line by line). Prints `path:line: text`, sorted by "
        f"path, up to {MAX_MATCHES} matches. Skips binary files and files ignored by "
        ".gitignore; files open in the editor are searched as the user sees them, unsaved "
        "changes included."
    )
    args_model: ClassVar[type[ToolArgs]] = SearchArgs

    def __init__(self, *, use_rg: bool | None = None, rg_path: str | None = None) -> None:
        """``use_rg=False`` (or ``TETHER_SEARCH_ENGINE=python`` when ``use_rg`` is None)
        forces the Python walk; ``rg_path`` names the binary to use. Otherwise both are read
        at each search, from the environment then: one tools object serves every run of a
        process (and every run a daemon forks), each with its own ``PATH``."""
        self._use_rg, self._rg_path = use_rg, rg_path
        if use_rg and self.rg_path is None:
            raise ValueError("use_rg=True but no rg binary was found")

    @property
    def rg_path(self) -> str | None:
        """The ``rg`` a search runs now (None: the Python walk)."""
        use_rg, rg_path = self._use_rg, self._rg_path
        if use_rg is None and rg_path is None and os.environ.get(ENGINE_ENV) == "python":
            use_rg = False
        return None if use_rg is False else (rg_path or find_rg())

    async def run(self, args: SearchArgs, deps: ToolDeps) -> ToolResult:
        """Find the matching lines, buffers first, and print them sorted."""
        ws = deps.workspace
        try:
            matcher = LineMatcher(args.pattern)
        except LinearRegexError as exc:
            raise ToolError(f"invalid regex {args.pattern!r}: {exc}") from exc
        base = ws.resolve(args.path)
        glob = PathGlob.parse(args.glob) if args.glob else None
        buffers = list(ws.buffers.all())
        if await anyio.to_thread.run_sync(_is_file, ws, base, buffers):
            hits, total = await self._search_file(ws, base, matcher, glob)
        else:
            hits, total = await self._search_folder(ws, base, matcher, glob, buffers)
        return ToolResult(ok=True, output=_format(ws, hits, total, args, base))

    async def _search_file(
        self, ws: Workspace, path: Path, matcher: LineMatcher, glob: PathGlob | None
    ) -> tuple[list[_Hit], int]:
        # A file named explicitly is searched even if .gitignore leaves it out.
        if glob is not None and not glob.matches(path, path.parent, ws.root_of(path) or ws.root):
            return [], 0
        text = (await ws.read_text(path)).text
        found = await run_stoppable(lambda stop: matcher.lines(text, stop))
        hits = [_Hit(path.parts, n, line) for n, line in found]
        return hits, len(hits)

    async def _search_folder(
        self,
        ws: Workspace,
        base: Path,
        matcher: LineMatcher,
        glob: PathGlob | None,
        buffers: list[Buffer],
    ) -> tuple[list[_Hit], int]:
        candidates = None
        if (rg := self.rg_path) is not None:
            candidates = await self._rg_candidates(rg, base, matcher.pattern, glob)
        return await run_stoppable(
            lambda stop: _scan_folder(ws, base, matcher, glob, buffers, candidates, stop)
        )

    async def _rg_candidates(
        self, rg: str, base: Path, pattern: str, glob: PathGlob | None
    ) -> list[Path] | None:
        """The files ripgrep finds a match in; None when the Python walk must decide."""
        rust_pattern = rg_pattern(pattern)
        if rust_pattern is None:
            return None
        cmd = [rg, *RG_FLAGS, "--files-with-matches", "--null", "--crlf"]
        if glob is not None and glob.basename_only():
            cmd += ["--glob", glob.pattern]  # a pre-filter only; Python applies the glob too
        cmd += ["-e", rust_pattern, "--", str(base)]
        try:
            returncode, stdout, stderr_bytes = await run_killable(cmd, base)
        except OSError as exc:
            log.warning("cannot run %s (%s); searching without ripgrep", rg, exc)
            return None
        stderr = stderr_bytes.decode("utf-8", errors="replace").strip()
        if returncode == 1:
            return []
        # 2 with nothing said: some file could not be read (messages are off); the rest stands.
        if returncode not in (0, 2) or (returncode == 2 and stderr):
            if "regex" in stderr.lower() or "glob" in stderr.lower():
                return None  # valid for RE2, not for Rust: the Python walk decides
            raise ToolError(f"search failed (rg exit {returncode}): {stderr}")
        return [Path(os.fsdecode(raw)) for raw in stdout.split(b"\0") if raw]


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
    matcher: LineMatcher,
    glob: PathGlob | None,
    buffers: list[Buffer],
    candidates: list[Path] | None,
    stop: threading.Event,
) -> tuple[list[_Hit], int]:
    """Matches under ``base`` and their total (blocking; runs in a worker thread).

    ``candidates`` are ripgrep's files (None: walk). Open buffers replace their disk files.
    Once ``stop`` is set, it returns what it has at the next file (the caller is gone).
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
        files = [f for f in ws.walk_files(base, stop) if f not in skip and selected(f)]
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
        found = matcher.lines(buffer.text, stop)
        hits.extend(_Hit(buffer.path.parts, n, line) for n, line in found)
        total += len(found)
    kept = 0
    for path in files:  # in path order: once MAX_MATCHES are kept, later ones are only counted
        if stop.is_set():
            break
        found = matcher.lines(_read_searchable(path), stop)
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
