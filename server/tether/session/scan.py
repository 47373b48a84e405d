"""What a workspace holds, as a checkpoint sees it: every file not ignored, by stat, with
its content stored (``blobs.py``) the first time it is seen and again only when its stat
changed since the last scan.

A scan walks each root with ``os.scandir``, skipping ``.git`` and what ``.gitignore`` and
``.ignore`` files ignore (git's rules, ``workspace/ignore.py``; an ignored folder is not
entered) and Tether's own state folder. Links are recorded as links (their target, never
followed, never entered); FIFOs, sockets and devices are not files and are left out. A
file larger than the cap, or one that cannot be read, is recorded by its stat alone as
"not restorable" and the reason. Blocking: run it in a worker thread.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..workspace.ignore import IgnoreRule, parse_gitignore
from .blobs import BlobStore, digest_of
from .watch import FolderWatch, local_only

IGNORE_FILES = (".gitignore", ".ignore")
MAX_FILES = 200_000
"""A workspace with more files than this is not captured (the scan says so)."""
_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)


class TooManyFiles(Exception):
    """The workspace has more files than a checkpoint captures."""


@dataclass(frozen=True, slots=True)
class Seen:
    """One workspace entry as a scan found it."""

    kind: Literal["file", "link"]
    mode: int
    """Its permission bits (0 for a link)."""
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    digest: str | None = None
    """A file's content by its sha256, stored unless ``why`` says it is not restorable (an
    edit's text past the size cap is named, not kept); None for a link, or a file not read."""
    target: str | None = None
    """A link's target, as written (never followed)."""
    why: str | None = None
    """Why a file is not restorable (too large, unreadable); None when it is."""

    def same(self, other: Seen | None) -> bool:
        """Whether ``other`` holds the same thing (kind, content or target, mode)."""
        if other is None or (self.kind, self.mode, self.target) != (
            other.kind,
            other.mode,
            other.target,
        ):
            return False
        if self.digest is not None or other.digest is not None:
            return self.digest == other.digest
        return (self.size, self.mtime_ns) == (other.size, other.mtime_ns)

    def unchanged(self, info: os.stat_result) -> bool:
        """Whether an entry with stat ``info`` is this one, not read again."""
        return (
            self.size == info.st_size
            and self.mtime_ns == info.st_mtime_ns
            and self.ctime_ns == info.st_ctime_ns
            and self.ino == info.st_ino
            and self.mode == stat.S_IMODE(info.st_mode)
        )


def read_entry(path: Path, info: os.stat_result, store: BlobStore, cap: int) -> Seen:
    """``path`` (of stat ``info``, not followed) as a checkpoint keeps it: a link's target,
    a file's content stored, or why it is not restorable."""
    base = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(path)
        except OSError as exc:
            return Seen("link", 0, *base, why=f"unreadable link: {exc.strerror or exc}")
        return Seen("link", 0, *base, target=target)
    mode = stat.S_IMODE(info.st_mode)
    if info.st_size > cap:
        return Seen("file", mode, *base, why=f"larger than the {cap:,}-byte cap")
    try:
        fd = os.open(path, _READ_FLAGS)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(cap + 1)
    except OSError as exc:
        return Seen("file", mode, *base, why=f"unreadable: {exc.strerror or exc}")
    if len(data) > cap:
        return Seen("file", mode, *base, why=f"larger than the {cap:,}-byte cap")
    return Seen("file", mode, *base, digest=store.put(data, digest_of(data)))


def entry_of(path: Path, store: BlobStore, cap: int) -> Seen | None:
    """One path as a checkpoint keeps it; None when there is nothing there (or a folder, a
    FIFO: not a file)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        return None
    return read_entry(path, info, store, cap)


_Chain = tuple[tuple[int, tuple[IgnoreRule, ...]], ...]
"""The ignore rules in force: each ignore file's rules with the length of its folder's path
relative to the root (with its slash), innermost last."""


class TreeScanner:
    """Scans of one workspace, each reading only what changed since the one before."""

    def __init__(
        self, roots: tuple[Path, ...], store: BlobStore, cap: int, skip: tuple[Path, ...] = ()
    ) -> None:
        self.roots = roots
        self.store = store
        self.cap = cap
        self._skip = {str(p) for p in skip}
        self.last: dict[str, Seen] = {}
        self._rules: dict[str, tuple[tuple[int, int], tuple[IgnoreRule, ...]]] = {}
        self._verdicts: dict[str, bool] = {}
        """Whether each entry seen is ignored (forgotten when an ignore file changes)."""
        self.read_count = 0
        """Entries the last scan read (new, or their stat changed)."""
        self.too_many = False
        """A scan found more than ``MAX_FILES`` files: later ones are not tried (each would
        walk that far again to give up)."""
        self._watchable: bool | None = None
        """Whether the roots are on local filesystems (inotify sees every change there)."""
        self._watch: FolderWatch | None = None
        self._armed = False
        """The last full scan watched every folder it listed: ``scan_changed`` may trust
        the watch for what changed since."""
        self._chains: dict[str, tuple[int, _Chain]] = {}
        """Each folder the last full scan listed, with the ignore rules for its entries."""
        self._files_in: dict[str, list[str]] = {}
        """The entries found in each folder (not its subfolders)."""

    @property
    def watching(self) -> bool:
        """Whether the next ``scan_changed`` may list only the folders that changed."""
        return self._armed and self._watch is not None and not self._watch.broken

    def close(self) -> None:
        """Stop watching (the next scan is a full one)."""
        self._armed = False
        if self._watch is not None:
            self._watch.close()
            self._watch = None

    def scan_changed(self) -> dict[str, Seen]:
        """Every entry now, like ``scan``, listing again only the folders inotify says
        changed since the last full scan (``watch.py``); a full scan when it cannot say
        (not watching, the queue overflowed, a folder made, moved or removed, an ignore
        file changed)."""
        watch = self._watch
        if not self._armed or watch is None or self.too_many:
            return self.scan()
        dirty = watch.drain(IGNORE_FILES)
        if dirty.everything:
            return self.scan()
        self.read_count = 0
        if not dirty.folders:
            return self.last
        found = dict(self.last)
        read = 0
        verdicts = self._verdicts
        for folder in dirty.folders:
            listed = self._chains.get(folder)
            if listed is None:
                continue  # not listed by the last full scan (ignored, or skipped)
            start, chain = listed
            for path in self._files_in.get(folder, ()):
                found.pop(path, None)
            try:
                with os.scandir(folder) as it:
                    entries = list(it)
            except OSError:
                return self.scan()
            kept: list[str] = []
            for entry in entries:
                name = entry.name
                if name == ".git":
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        continue  # folders are known: one made or gone is a full scan
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                path = entry.path
                if chain:
                    ignored = verdicts.get(path)
                    if ignored is None:
                        ignored = verdicts[path] = _ignored(chain, path[start:], name, False)
                    if ignored:
                        continue
                seen = self.last.get(path)
                if (
                    seen is None
                    or seen.mtime_ns != info.st_mtime_ns
                    or seen.ctime_ns != info.st_ctime_ns
                    or seen.size != info.st_size
                    or seen.ino != info.st_ino
                ):
                    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                        continue
                    seen = read_entry(Path(path), info, self.store, self.cap)
                    read += 1
                found[path] = seen
                kept.append(path)
            self._files_in[folder] = kept
        if len(found) > MAX_FILES:
            return self.scan()
        self.last = found
        self.read_count = read
        return found

    def scan(self) -> dict[str, Seen]:
        """Every entry now, by path; ``TooManyFiles`` past ``MAX_FILES``.

        The loop is the cost of every ``bash`` step: a directory is known from its entry's
        type (no system call), a file is one ``lstat``, an unchanged one (size, times and
        inode as before) is not opened, and an entry's ignore verdict is remembered until an
        ignore file changes."""
        if self.too_many:
            raise TooManyFiles(f"more than {MAX_FILES:,} files in the workspace")
        found: dict[str, Seen] = {}
        last = self.last
        read = 0
        self._check_rules()
        verdicts = self._verdicts
        skip = self._skip
        watch = self._rewatch()
        chains: dict[str, tuple[int, _Chain]] = {}
        files_in: dict[str, list[str]] = {}
        self._armed = False
        for root in self.roots:
            top = str(root)
            start = len(top) + 1
            stack: list[tuple[str, _Chain]] = [(top, ())]
            while stack:
                if len(found) > MAX_FILES:  # checked a folder at a time: the walk ends soon
                    self.too_many = True
                    self.close()
                    raise TooManyFiles(f"more than {MAX_FILES:,} files in the workspace")
                folder, chain = stack.pop()
                if watch is not None and not watch.add(folder):  # before it is listed
                    watch = None
                    self._watchable = False  # past the limits: not tried again
                try:
                    with os.scandir(folder) as it:
                        entries = list(it)
                except OSError:
                    continue  # unreadable folders are skipped
                chain = self._extend(chain, folder, entries, start)
                kept: list[str] = []
                chains[folder] = (start, chain)
                files_in[folder] = kept
                for entry in entries:
                    name = entry.name
                    if name == ".git":
                        continue
                    path = entry.path
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    if chain:
                        key = path + "/" if is_dir else path
                        ignored = verdicts.get(key)
                        if ignored is None:
                            ignored = verdicts[key] = _ignored(chain, path[start:], name, is_dir)
                        if ignored:
                            continue
                    if is_dir:
                        if path not in skip:
                            stack.append((path, chain))
                        continue
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    seen = last.get(path)
                    if (
                        seen is None
                        or seen.mtime_ns != info.st_mtime_ns
                        or seen.ctime_ns != info.st_ctime_ns
                        or seen.size != info.st_size
                        or seen.ino != info.st_ino
                    ):
                        mode = info.st_mode
                        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                            continue  # a FIFO, a socket, a device: not a file
                        seen = read_entry(Path(path), info, self.store, self.cap)
                        read += 1
                    found[path] = seen
                    kept.append(path)
            if len(found) > MAX_FILES:
                self.too_many = True
                self.close()
                raise TooManyFiles(f"more than {MAX_FILES:,} files in the workspace")
        self.last = found
        self.read_count = read
        self._chains = chains
        self._files_in = files_in
        self._armed = watch is not None and not watch.broken
        return found

    def _rewatch(self) -> FolderWatch | None:
        """The watch for a full scan to arm, folder by folder; None where the roots cannot
        be watched (then every scan is full)."""
        if self._watchable is None:
            self._watchable = local_only(self.roots)
        if not self._watchable:
            return None
        if self._watch is None or self._watch.broken:
            self._watch = FolderWatch.open()
        if self._watch is not None:
            self._watch.begin()
        return self._watch

    def _check_rules(self) -> None:
        """Forget every ignore verdict when an ignore file read before changed or went."""
        for path, (key, _) in list(self._rules.items()):
            try:
                info = os.lstat(path)
                now = (info.st_mtime_ns, info.st_size)
            except OSError:
                now = None
            if now != key:
                del self._rules[path]
                self._verdicts.clear()

    def _extend(
        self, chain: _Chain, folder: str, entries: list[os.DirEntry[str]], start: int
    ) -> _Chain:
        for entry in entries:
            if entry.name in IGNORE_FILES:
                rules = self._load(entry)
                if rules:
                    chain = (*chain, (len(folder) + 1 - start if folder else 0, rules))
        return chain

    def _load(self, entry: os.DirEntry[str]) -> tuple[IgnoreRule, ...]:
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode) or info.st_size > 1 << 20:
                return ()
            key = (info.st_mtime_ns, info.st_size)
            cached = self._rules.get(entry.path)
            if cached is not None and cached[0] == key:
                return cached[1]
            self._verdicts.clear()  # new or changed rules: every verdict is asked again
            with open(entry.path, "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return ()
        rules = parse_gitignore(text)
        self._rules[entry.path] = (key, rules)
        return rules


def _ignored(chain: _Chain, rel: str, name: str, is_dir: bool) -> bool:
    """Git's verdict for one entry (``rel``: from the root): the innermost ignore file with
    a matching rule decides, the last matching rule of a file wins."""
    for start, rules in reversed(chain):
        if start < 0:
            continue
        local = rel[start:]
        for rule in reversed(rules):
            if rule.matches(local, name, is_dir):
                return not rule.negate
    return False


@dataclass(frozen=True, slots=True)
class Change:
    """One path a step changed: what it was before and after (None: not there)."""

    path: Path
    before: Seen | None
    after: Seen | None


def changes(before: Mapping[str, Seen], after: Mapping[str, Seen]) -> list[Change]:
    """What differs between two scans, by path (a rename is a deletion and a creation)."""
    found: list[Change] = []
    for path, was in before.items():
        now = after.get(path)
        if now is not was and not was.same(now):
            found.append(Change(Path(path), was, now))
    for path, now in after.items():
        if path not in before:
            found.append(Change(Path(path), None, now))
    found.sort(key=lambda c: str(c.path))
    return found
