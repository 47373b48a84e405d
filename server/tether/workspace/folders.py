"""The workspace the tools may touch: confined paths, buffer-first reads, ignore-aware walks.

Every path a model gives goes through ``Workspace.resolve``, which refuses anything that
resolves (``..``, absolute paths, symlinks) outside the workspace folders. Reads prefer the
editor's open buffer over the disk, so the model sees what the user sees. Walks honour
``.gitignore`` files the way git (and ripgrep) do, so ``list_files`` and ``search`` agree.
"""

from __future__ import annotations

import encodings.utf_8_sig  # noqa: F401 - every read's codec, loaded with the server, not by its first read
import os
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import anyio.to_thread

from ..errors import ToolError
from ..host import Buffers, ReadsBuffers
from ..text import model as textmodel
from .ignore import IgnoreChain, IgnoreRule, is_ignored_by, parse_gitignore

__all__ = [
    "MAX_READ_BYTES",
    "TextSnapshot",
    "Workspace",
    "decode_text",
    "line_count",
    "line_slice",
    "path_from_uri",
    "split_lines",
    "uri_for",
]

# A file this large is almost certainly data, and would swamp the model's context anyway.
MAX_READ_BYTES = 32 * 1024 * 1024

# One ignore rule set per folder that has a .gitignore, innermost last.


@dataclass(frozen=True, slots=True)
class TextSnapshot:
    """A file's text as read: from the open buffer (``version`` set) or from disk."""

    path: Path
    text: str
    version: int | None
    from_buffer: bool


def decode_text(data: bytes) -> str | None:
    """The UTF-8 text of ``data`` (a BOM dropped), or None when it is binary.

    Binary means a NUL byte anywhere or bytes that are not UTF-8. ``search`` uses the same
    rule, so a file that cannot be read is never searched and vice versa.
    """
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def split_lines(text: str) -> list[str]:
    """Lines without their ends, cut where LSP cuts them (``textmodel``): at ``\\n``,
    ``\\r\\n`` and a lone ``\\r``, never at form feeds or Unicode separators."""
    return textmodel.split_lines(text)


def line_count(text: str) -> int:
    """``len(split_lines(text))``, without splitting."""
    return textmodel.line_count(text)


def line_slice(text: str, start: int, stop: int, total: int | None = None) -> list[str]:
    """``split_lines(text)[start:stop]``, cutting only those lines (``textmodel``)."""
    return textmodel.line_slice(text, start, stop, total)


def uri_for(path: Path) -> str:
    """The ``file:`` URI of an absolute path."""
    return path.as_uri()


def path_from_uri(uri: str) -> Path | None:
    """The local path of a ``file:`` URI (percent-decoded), or None for any other URI."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    if not path.startswith("/") or "\0" in path:
        return None
    return Path(path)


def confined_path(roots: Sequence[Path], path: str | None) -> Path:
    """The resolved path for ``path`` (relative ones start at the first of ``roots``, the
    resolved workspace folders); ``ToolError`` if it lands outside every one of them.

    Symlinks and ``..`` are followed first, so a link pointing out of the workspace is
    refused. The one confinement of ``read_file`` and the built-in read-only commands.
    """
    if path is None or path in ("", "."):
        return roots[0]
    if "\0" in path:
        raise ToolError(f"path {path!r} contains a NUL character")
    given = Path(path)
    try:
        resolved = (given if given.is_absolute() else roots[0] / given).resolve()
    except (OSError, RuntimeError) as exc:  # symlink loops
        raise ToolError(f"cannot resolve path {path!r}: {exc}") from exc
    if not any(resolved.is_relative_to(root) for root in roots):
        shown = ", ".join(str(r) for r in roots)
        raise ToolError(f"path {path!r} is outside the workspace ({shown}); use a path inside it")
    return resolved


class Workspace:
    """The workspace folders of a run and the editor buffers open in them."""

    def __init__(
        self,
        roots: Sequence[Path],
        buffers: Buffers,
        position_encoding: textmodel.Encoding = "utf-16",
    ) -> None:
        if not roots:
            raise ValueError("a workspace needs at least one root folder")
        self.roots: tuple[Path, ...] = tuple(Path(r).resolve() for r in roots)
        self.root: Path = self.roots[0]
        self.buffers = buffers
        self.position_encoding = position_encoding
        """How the editor counts the characters of its positions (``utf-8/16/32``)."""
        # .gitignore path -> ((mtime_ns, size), parsed rules); re-read when the file changes.
        self._ignore_cache: dict[Path, tuple[tuple[int, int], tuple[IgnoreRule, ...]]] = {}

    uri_for = staticmethod(uri_for)

    # -- paths -------------------------------------------------------------------------

    def resolve(self, path: str | None) -> Path:
        """The absolute, resolved path for a model-given ``path``; ``ToolError`` if outside.

        Relative paths start at the first root; absolute ones must lie inside some root.
        Symlinks are followed, so a link that points out of the workspace is refused.
        """
        return confined_path(self.roots, path)

    def root_of(self, path: Path) -> Path | None:
        """The first root that contains the absolute ``path``, if any."""
        for root in self.roots:
            if path.is_relative_to(root):
                return root
        return None

    def display(self, path: Path) -> str:
        """How a path is shown to the model: relative to the first root, else absolute."""
        if path.is_relative_to(self.root):
            return path.relative_to(self.root).as_posix()
        return path.as_posix()

    def _roots_text(self) -> str:
        return ", ".join(str(r) for r in self.roots)

    # -- reading -----------------------------------------------------------------------

    async def read_text(self, path: Path) -> TextSnapshot:
        """The text of ``path``: the open buffer if there is one (asked of an editor that
        reads its buffers itself), else the file on disk."""
        buffer = self.buffers.get(path)
        if buffer is None and isinstance(self.buffers, ReadsBuffers):
            buffer = await self.buffers.read_buffer(path)  # the editor's text (ACP)
        if buffer is not None:
            return TextSnapshot(path, buffer.text, buffer.version, from_buffer=True)
        return await anyio.to_thread.run_sync(self._read_disk, path)

    def _read_disk(self, path: Path) -> TextSnapshot:
        shown = self.display(path)
        try:
            info = path.stat()
            if stat.S_ISDIR(info.st_mode):
                raise ToolError(f"{shown} is a directory, not a file; use list_files to see it")
            # A FIFO or device would block the read forever or never end.
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"{shown} is not a regular file")
            if info.st_size > MAX_READ_BYTES:
                raise ToolError(
                    f"{shown} is too large to read ({info.st_size} bytes; "
                    f"the limit is {MAX_READ_BYTES})"
                )
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise ToolError(f"file not found: {shown}") from exc
        except PermissionError as exc:
            raise ToolError(f"permission denied: {shown}") from exc
        except OSError as exc:
            raise ToolError(f"cannot read {shown}: {exc.strerror or exc}") from exc
        text = decode_text(data)
        if text is None:
            raise ToolError(f"{shown} is a binary file and is not shown")
        return TextSnapshot(path, text, None, from_buffer=False)

    # -- walking and .gitignore --------------------------------------------------------

    def walk_files(self, base: Path, stop: threading.Event | None = None) -> Iterator[Path]:
        """Every file under the folder ``base``, depth first in name order, minus ignored ones.

        ``.gitignore`` files apply from the workspace root down, each relative to its own
        folder, the innermost matching rule winning (negations included); an ignored folder
        is not entered, so nothing inside it can be re-included (as in git). ``.git`` is never
        entered, and symlinks are skipped (as ripgrep does): that keeps walks finite, free of
        duplicates, and inside the workspace. Blocking: run it in a worker thread; it ends at
        the next entry once ``stop`` is set (its caller was cancelled and has left).
        """
        root = self.root_of(base)
        if root is None:
            raise ToolError(f"{base} is outside the workspace ({self._roots_text()})")
        if not base.is_dir() or self.is_ignored(base):
            return
        chain = self._chain_above(root, base)
        stack: list[tuple[Iterator[os.DirEntry[str]], IgnoreChain]] = []
        self._enter(base, chain, stack)
        while stack:
            if stop is not None and stop.is_set():
                return
            entries, chain = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                continue
            if entry.name == ".git":
                continue
            try:
                # Not following links, a symlink is neither: it is skipped like a FIFO.
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not entry.is_file(follow_symlinks=False):
                    continue
            except OSError:
                continue
            path = Path(entry.path)
            if is_ignored_by(chain, path, is_dir):
                continue
            if is_dir:
                self._enter(path, chain, stack)
            else:
                yield path

    def _enter(
        self,
        folder: Path,
        chain: IgnoreChain,
        stack: list[tuple[Iterator[os.DirEntry[str]], IgnoreChain]],
    ) -> None:
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return  # unreadable folders are skipped, as ripgrep does
        names = {e.name for e in entries}
        stack.append((iter(entries), self._extend(chain, folder, names)))

    def _extend(
        self, chain: IgnoreChain, folder: Path, names: set[str] | None = None
    ) -> IgnoreChain:
        """``chain`` plus the rules of ``folder``'s own ``.gitignore``, if it has one.

        A nested repository keeps its parents' rules, as ripgrep does (git would not look
        inside it at all).
        """
        file = folder / ".gitignore"
        has_ignore = ".gitignore" in names if names is not None else file.exists()
        rules = self._load_ignore(file) if has_ignore else ()
        return (*chain, (folder, rules)) if rules else chain

    def _chain_above(self, root: Path, base: Path) -> IgnoreChain:
        """The rules in force for ``base``'s entries, from ``root`` down to ``base``'s parent."""
        chain: IgnoreChain = ()
        folder = root
        for part in base.relative_to(root).parts:
            chain = self._extend(chain, folder)
            folder = folder / part
        return chain

    def is_ignored(self, path: Path) -> bool:
        """Whether ``walk_files`` would leave ``path`` out because of ``.gitignore`` or ``.git``.

        Paths outside the workspace and the roots themselves are not ignored.
        """
        root = self.root_of(path)
        if root is None or path == root:
            return False
        parts = path.relative_to(root).parts
        chain: IgnoreChain = ()
        folder = root
        for i, part in enumerate(parts):
            chain = self._extend(chain, folder)
            entry = folder / part
            if part == ".git":
                return True
            is_dir = i < len(parts) - 1 or entry.is_dir()
            if is_ignored_by(chain, entry, is_dir):
                return True
            folder = entry
        return False

    def ignore_checker(self) -> Callable[[Path], bool]:
        """``is_ignored`` for many paths in a row (``search``'s candidates): each folder's
        rules and verdict are worked out once, not once per path below it."""
        folders: dict[Path, tuple[IgnoreChain, bool]] = {}

        def folder_state(folder: Path, root: Path) -> tuple[IgnoreChain, bool]:
            """The rules in force for ``folder``'s entries, and whether it is ignored."""
            known = folders.get(folder)
            if known is not None:
                return known
            if folder == root:
                state: tuple[IgnoreChain, bool] = (self._extend((), root), False)
            else:
                chain, ignored = folder_state(folder.parent, root)
                ignored = ignored or folder.name == ".git" or is_ignored_by(chain, folder, True)
                state = (chain if ignored else self._extend(chain, folder), ignored)
            folders[folder] = state
            return state

        def is_ignored(path: Path) -> bool:
            root = self.root_of(path)
            if root is None or path == root:
                return False
            chain, ignored = folder_state(path.parent, root)
            if ignored or path.name == ".git":
                return True
            return is_ignored_by(chain, path, path.is_dir())

        return is_ignored

    def _load_ignore(self, file: Path) -> tuple[IgnoreRule, ...]:
        try:
            info = file.stat()
            key = (info.st_mtime_ns, info.st_size)
            cached = self._ignore_cache.get(file)
            if cached is not None and cached[0] == key:
                return cached[1]
            text = file.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return ()
        rules = parse_gitignore(text)
        self._ignore_cache[file] = (key, rules)
        return rules
