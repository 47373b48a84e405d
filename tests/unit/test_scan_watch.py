"""The scan before a step lists again only the folders inotify says changed since the last
full scan, and falls back to a full scan where it cannot say; the scan after a ``bash``
step runs in a thread of its own while the step's result goes back, and is recorded before
the next step's scan. Each test compares what the incremental path found with a fresh full
scan by another scanner (which knows nothing of the first)."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.host import NoBuffers
from tether.session import checkpoints as checkpoints_module
from tether.session import scan as scan_module
from tether.session import watch as watch_module
from tether.session.blobs import BlobStore
from tether.session.checkpoints import SessionCheckpoints
from tether.session.scan import Seen, TreeScanner
from tether.session.store import load
from tether.session.writer import SessionLogWriter
from tether.workspace.folders import Workspace

pytestmark = pytest.mark.skipif(
    watch_module.FolderWatch.open() is None, reason="inotify is Linux's"
)


def _tree(root: Path) -> None:
    (root / ".gitignore").write_text("build/\n")
    for pkg in ("a", "b", "c"):
        for sub in ("x", "y"):
            folder = root / pkg / sub
            folder.mkdir(parents=True)
            for n in range(5):
                (folder / f"f{n}.py").write_text(f"{pkg}{sub}{n}\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("ignored\n")


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[tuple[Path, TreeScanner, BlobStore]]:
    root = tmp_path / "ws"
    root.mkdir()
    _tree(root)
    store = BlobStore(tmp_path / "state")
    scanner = TreeScanner((root,), store, 1 << 20)
    scanner.scan()
    assert scanner.watching
    yield root, scanner, store
    scanner.close()


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every folder a scan lists, in order."""
    listed: list[str] = []
    real = os.scandir

    def counting(path: str) -> os.ScandirIterator[str]:
        listed.append(str(path))
        return real(path)

    monkeypatch.setattr(scan_module.os, "scandir", counting)
    return listed


def _fresh(root: Path, store: BlobStore) -> dict[str, Seen]:
    return TreeScanner((root,), store, 1 << 20).scan()


def _same(found: dict[str, Seen], fresh: dict[str, Seen]) -> None:
    assert sorted(found) == sorted(fresh)
    for path, seen in fresh.items():
        assert found[path].same(seen), path


def test_the_scan_before_a_step_lists_only_the_folder_that_changed(
    tree: tuple[Path, TreeScanner, BlobStore], listings: list[str]
) -> None:
    root, scanner, store = tree
    (root / "b" / "y" / "f3.py").write_text("changed by the user\n")
    found = scanner.scan_changed()
    assert listings == [str(root / "b" / "y")]
    assert scanner.read_count == 1
    listings.clear()
    _same(found, _fresh(root, store))
    assert (
        found[str(root / "b" / "y" / "f3.py")].digest
        != found[str(root / "a" / "y" / "f3.py")].digest
    )


def test_nothing_changed_lists_nothing(
    tree: tuple[Path, TreeScanner, BlobStore], listings: list[str]
) -> None:
    root, scanner, store = tree
    before = scanner.last
    assert scanner.scan_changed() is before
    assert listings == []


def _chmod(root: Path) -> None:
    (root / "a" / "x" / "f1.py").chmod(0o755)


def _symlink(root: Path) -> None:
    (root / "c" / "y" / "link").symlink_to("../../a/x/f0.py")


def _rename_across(root: Path) -> None:
    (root / "a" / "x" / "f2.py").rename(root / "c" / "x" / "moved.py")


def _replace(root: Path) -> None:
    temp = root / "b" / "x" / ".f1.tmp"
    temp.write_text("replaced atomically\n")
    os.replace(temp, root / "b" / "x" / "f1.py")


def _same_size_same_second(root: Path) -> None:
    path = root / "a" / "y" / "f0.py"
    info = path.stat()
    path.write_text("ay9\n")  # same size
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # and the same mtime


EDITS: dict[str, Callable[[Path], object]] = {
    "modify": lambda r: (r / "a" / "x" / "f0.py").write_text("new\n"),
    "create": lambda r: (r / "c" / "x" / "new.py").write_text("new\n"),
    "delete": lambda r: (r / "b" / "x" / "f4.py").unlink(),
    "chmod": _chmod,
    "symlink": _symlink,
    "rename across folders": _rename_across,
    "replace atomically": _replace,
    "same size and mtime": _same_size_same_second,
    "ignored file": lambda r: (r / "build" / "out.o").write_text("still ignored\n"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_change_made_between_steps_is_caught(
    tree: tuple[Path, TreeScanner, BlobStore], listings: list[str], edit: str
) -> None:
    root, scanner, store = tree
    EDITS[edit](root)
    found = scanner.scan_changed()
    assert len(listings) <= 2  # only the folders the change was in
    _same(found, _fresh(root, store))


FALLBACKS: dict[str, Callable[[Path], object]] = {
    "folder made": lambda r: (r / "a" / "z").mkdir(),
    "folder removed": lambda r: (
        [p.unlink() for p in (r / "c" / "y").iterdir()] and (r / "c" / "y").rmdir()
    ),
    "folder renamed": lambda r: (r / "b" / "x").rename(r / "b" / "w"),
    "ignore file changed": lambda r: (r / ".gitignore").write_text("*.pyc\n"),
    "folder made writable": lambda r: (r / "a").chmod(0o700),
}


@pytest.mark.parametrize("edit", sorted(FALLBACKS))
def test_what_the_watch_cannot_tell_makes_a_full_scan(
    tree: tuple[Path, TreeScanner, BlobStore], listings: list[str], edit: str
) -> None:
    root, scanner, store = tree
    FALLBACKS[edit](root)
    if edit == "folder made":
        (root / "a" / "z" / "inside.py").write_text("in a new folder\n")
    found = scanner.scan_changed()
    assert str(root) in listings  # the walk started again from the root
    _same(found, _fresh(root, store))
    listings.clear()
    (root / "a" / "y" / "f1.py").write_text("later\n")
    assert scanner.watching  # the full scan armed the watch again
    later = scanner.scan_changed()
    assert listings == [str(root / "a" / "y")]
    _same(later, _fresh(root, store))


def test_an_overflowed_queue_makes_a_full_scan(
    tree: tuple[Path, TreeScanner, BlobStore], listings: list[str]
) -> None:
    root, scanner, store = tree
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    one, two = root / "a" / "x" / "f0.py", root / "a" / "x" / "f1.py"
    for n in range(limit // 2 + 10):  # alternating: the kernel merges repeats only
        os.utime(one, ns=(n, n))
        os.utime(two, ns=(n, n))
    (root / "c" / "y" / "f2.py").write_text("its event was dropped\n")
    found = scanner.scan_changed()
    assert str(root) in listings
    _same(found, _fresh(root, store))


def test_past_the_watch_limit_every_scan_is_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listings: list[str]
) -> None:
    monkeypatch.setattr(watch_module, "MAX_WATCHES", 3)
    root = tmp_path / "ws"
    root.mkdir()
    _tree(root)
    store = BlobStore(tmp_path / "state")
    scanner = TreeScanner((root,), store, 1 << 20)
    scanner.scan()
    assert not scanner.watching
    (root / "b" / "y" / "f0.py").write_text("changed\n")
    listings.clear()
    found = scanner.scan_changed()
    assert str(root) in listings
    _same(found, _fresh(root, store))


def test_a_network_filesystem_is_not_watched() -> None:
    mounts = [("/", "ext4"), ("/home/u/ws/remote", "nfs4"), ("/mnt", "cifs")]
    assert watch_module.local_only((Path("/home/u/other"),), mounts)
    assert not watch_module.local_only((Path("/home/u/ws"),), mounts)
    assert not watch_module.local_only((Path("/mnt/share/ws"),), mounts)
    assert not watch_module.local_only((Path("/x"),), [])


async def test_the_scan_after_a_step_ends_in_the_background_and_the_next_step_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The step's result does not wait for its full scan; the next step's scan does, and
    each step gets its own change: the step's own, not the user's made between steps."""
    root = tmp_path / "ws"
    root.mkdir()
    _tree(root)
    release = threading.Event()
    real = checkpoints_module._scan

    def held(scanner: object, changed_only: bool = False) -> dict[str, Seen]:
        if not changed_only:
            assert release.wait(60), "never released"
        return real(scanner, changed_only)  # type: ignore[arg-type]

    monkeypatch.setattr(checkpoints_module, "_scan", held)
    writer = SessionLogWriter(tmp_path / "state")
    try:
        cps = SessionCheckpoints(writer, "s-w", "r-w", Workspace([root], NoBuffers()))
        release.set()  # the first scan of the process is a full one
        first = await cps.before("bash", "call_1", "edit a", None, 1)
        release.clear()
        (root / "a" / "x" / "f0.py").write_text("the first step's\n")
        with anyio.fail_after(30):
            await cps.after(first, ())  # returns while its scan is held
        release.set()
        await cps.settle()  # the model's turn: the step's scan ends before the user types
        (root / "c" / "y" / "f1.py").write_text("the user's, between steps\n")
        second = await cps.before("bash", "call_2", "edit b", None, 2)
        (root / "b" / "y" / "f2.py").write_text("the second step's\n")
        await cps.after(second, ())
        await cps.settle()
        assert writer.flush()
    finally:
        writer.close()
    data = load(tmp_path / "state", "s-w")
    assert data is not None
    one, two = data.checkpoints
    assert (one.call_id, [Path(f.path).name for f in one.files]) == ("call_1", ["f0.py"])
    assert Path(one.files[0].path).parent.name == "x"
    assert (two.call_id, [f.path for f in two.files]) == (
        "call_2",
        [str(root / "b" / "y" / "f2.py")],
    )


NAMES = st.sampled_from(["a/x/f0.py", "a/x/new", "b/y/f1.py", "c/new.txt", "top", "b/z/f"])
OPS = st.one_of(
    st.tuples(st.just("write"), NAMES, st.binary(max_size=8)),
    st.tuples(st.just("delete"), NAMES, st.just(b"")),
    st.tuples(st.just("chmod"), NAMES, st.sampled_from([b"\x01", b"\x00"])),
    st.tuples(st.just("rename"), NAMES, NAMES.map(str.encode)),
    st.tuples(st.just("link"), NAMES, NAMES.map(str.encode)),
    st.tuples(st.just("mkdir"), st.sampled_from(["b/z", "c/d", "a/x/sub"]), st.just(b"")),
    st.tuples(
        st.just("ignore"), st.sampled_from(["a/.gitignore", ".gitignore"]), NAMES.map(str.encode)
    ),
)


def _apply(root: Path, op: str, name: str, arg: bytes) -> None:
    path = root / name
    try:
        if op == "write":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(arg)
        elif op == "delete":
            path.unlink()
        elif op == "chmod":
            path.chmod(0o755 if arg == b"\x01" else 0o644)
        elif op == "rename":
            target = root / arg.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
        elif op == "link":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(arg.decode())
        elif op == "mkdir":
            path.mkdir(parents=True)
        else:
            path.write_text(arg.decode() + "\n")
    except OSError:
        pass  # not possible in this tree now: nothing changed


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(OPS, max_size=4), min_size=1, max_size=4))
def test_generated_changes_between_scans_are_all_found(
    batches: list[list[tuple[str, str, bytes]]],
) -> None:
    with tempfile.TemporaryDirectory() as base:
        root = Path(base) / "ws"
        root.mkdir()
        _tree(root)
        store = BlobStore(Path(base) / "state")
        scanner = TreeScanner((root,), store, 1 << 20)
        try:
            scanner.scan()
            for batch in batches:
                for op, name, arg in batch:
                    _apply(root, op, name, arg)
                _same(scanner.scan_changed(), _fresh(root, store))
        finally:
            scanner.close()
