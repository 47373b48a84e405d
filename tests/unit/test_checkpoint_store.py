"""The checkpoint store and the workspace scan, on real folders: contents kept once by
their hash, 0700/0600 from creation, checked on every read; a scan that follows git's
ignore rules, records links as links without following them, keeps files past the cap as
not restorable, and reads only what changed since the last scan."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from tether.session.blobs import BlobStore, StoreDamaged, digest_of
from tether.session.scan import TreeScanner, changes


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_blob_is_stored_once_private_and_checked_on_read(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "state")
    digest = store.put(b"hello")
    assert digest == digest_of(b"hello")
    assert BlobStore(tmp_path / "state").put(b"hello") == digest  # another process: kept
    path = store.path(digest)
    assert path.read_bytes() == b"hello" and _mode(path) == 0o600
    for folder in (tmp_path / "state" / "checkpoints", path.parent.parent, path.parent):
        assert _mode(folder) == 0o700
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left
    assert store.get(digest) == b"hello"
    path.write_bytes(b"changed")
    with pytest.raises(StoreDamaged, match="no longer holds"):
        store.get(digest)
    path.unlink()
    os.symlink(tmp_path / "elsewhere", path)
    with pytest.raises(StoreDamaged, match="cannot be read"):
        store.get(digest)
    with pytest.raises(StoreDamaged, match="not a sha256"):
        store.get("../../etc/passwd")


def test_concurrent_writers_of_the_same_content_leave_one_whole_blob(tmp_path: Path) -> None:
    data = os.urandom(1 << 20)
    errors: list[BaseException] = []

    def put() -> None:
        try:
            BlobStore(tmp_path / "state").put(data)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=put) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert BlobStore(tmp_path / "state").get(digest_of(data)) == data
    folder = BlobStore(tmp_path / "state").path(digest_of(data)).parent
    assert len(list(folder.iterdir())) == 1


def _scanner(root: Path, tmp_path: Path, cap: int = 1000) -> TreeScanner:
    state = tmp_path / "state"
    return TreeScanner((root,), BlobStore(state), cap, (state,))


def test_the_scan_follows_ignore_rules_and_keeps_links_as_links(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src" / "deep").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref")
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (root / "src" / ".ignore").write_text("secret.txt\n")
    (root / "build").mkdir()
    (root / "build" / "out").write_text("x")
    (root / "a.log").write_text("x")
    (root / "keep.log").write_text("x")
    (root / "src" / "secret.txt").write_text("x")
    (root / "src" / "deep" / "code.py").write_text("print()\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "theirs.txt").write_text("not ours")
    os.symlink(outside, root / "out")  # a link to a folder outside: never entered
    os.symlink("src/deep/code.py", root / "code")
    os.mkfifo(root / "pipe")  # not a file: left out (reading it would block)
    found = _scanner(root, tmp_path).scan()
    rel = {Path(p).relative_to(root).as_posix(): s for p, s in found.items()}
    assert sorted(rel) == [
        ".gitignore",
        "code",
        "keep.log",
        "out",
        "src/.ignore",
        "src/deep/code.py",
    ]
    assert rel["out"].kind == "link" and rel["out"].target == str(outside)
    assert rel["code"].kind == "link" and rel["code"].target == "src/deep/code.py"
    assert rel["src/deep/code.py"].digest == digest_of(b"print()\n")


def test_past_the_cap_or_unreadable_is_recorded_not_restorable(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "big.bin").write_bytes(b"x" * 2000)
    (root / "locked.txt").write_text("x")
    (root / "locked.txt").chmod(0)
    found = _scanner(root, tmp_path).scan()
    big = found[str(root / "big.bin")]
    assert big.digest is None and big.why is not None and "cap" in big.why
    locked = found[str(root / "locked.txt")]
    if os.geteuid() != 0:  # root reads anything
        assert locked.digest is None and locked.why is not None and "unreadable" in locked.why


def test_a_scan_reads_only_what_changed_and_the_change_set_says_what(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for name in ("a", "b", "c", "run.sh", "same"):
        (root / name).write_text(name)
    scanner = _scanner(root, tmp_path)
    before = scanner.scan()
    store = scanner.store
    # Unchanged files are not read again: their blobs, gone from the store, stay gone.
    for seen in before.values():
        assert seen.digest is not None
        store.path(seen.digest).unlink()
    (root / "a").write_text("changed")
    (root / "b").unlink()
    (root / "c").rename(root / "d")
    (root / "run.sh").chmod(0o755)
    after = scanner.scan()
    stored = {p.name for p in store.blobs.rglob("*") if p.is_file()}
    # Read again: the changed file and the two whose stat changed (renamed, chmod); not
    # the file left alone.
    assert stored == {digest_of(data)[2:] for data in (b"changed", b"c", b"run.sh")}
    found = {c.path.name: c for c in changes(before, after)}
    assert sorted(found) == ["a", "b", "c", "d", "run.sh"]
    assert found["b"].after is None and found["d"].before is None
    assert found["c"].after is None and found["d"].after is not None
    assert found["d"].after.digest == found["c"].before.digest  # type: ignore[union-attr]
    assert found["run.sh"].after.mode == 0o755  # type: ignore[union-attr]


def test_a_changed_or_removed_ignore_file_is_followed_at_the_next_scan(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".gitignore").write_text("*.log\n")
    (root / "a.log").write_text("x")
    scanner = _scanner(root, tmp_path)
    assert str(root / "a.log") not in scanner.scan()
    (root / ".gitignore").unlink()
    assert str(root / "a.log") in scanner.scan()
    (root / ".gitignore").write_text("a.*\n")
    assert str(root / "a.log") not in scanner.scan()


async def test_a_checkpoint_that_cannot_be_taken_says_why_and_never_stops_the_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tether.host import NoBuffers
    from tether.session import scan
    from tether.session.checkpoints import SessionCheckpoints
    from tether.session.store import load
    from tether.session.writer import SessionLogWriter
    from tether.workspace.folders import Workspace

    root = tmp_path / "ws"
    root.mkdir()
    for name in ("a", "b", "c"):
        (root / name).write_text(name)
    monkeypatch.setattr(scan, "MAX_FILES", 2)
    writer = SessionLogWriter(tmp_path / "state")
    try:
        checkpoints = SessionCheckpoints(writer, "s-x", "r-x", Workspace([root], NoBuffers()))
        taken = await checkpoints.before("bash", "call_1", "rm a", None, 1)
        (root / "a").unlink()
        await checkpoints.after(taken, ())
        await checkpoints.settle()
        assert writer.flush()
    finally:
        writer.close()
    data = load(tmp_path / "state", "s-x")
    assert data is not None
    [record] = data.checkpoints
    assert record.files == [] and record.incomplete == "more than 2 files in the workspace"


def test_the_next_process_starts_from_the_kept_scan_and_trusts_only_what_holds(
    tmp_path: Path,
) -> None:
    import json

    from tether.session import checkpoints
    from tether.session.scan_cache import cache_path

    root = tmp_path / "ws"
    root.mkdir()
    for i in range(300):  # enough reads for the first scan to be kept
        (root / f"f{i}").write_text(str(i))
    state = tmp_path / "state"

    def fresh() -> checkpoints._Scanner:  # what a new process makes
        store = BlobStore(state)
        tree = TreeScanner((root,), store, 1000, (state,))
        return checkpoints._Scanner(tree, threading.Lock(), cache_path(store, (root,), 1000))

    first = fresh()
    checkpoints._scan(first)
    assert first.scanner.read_count == 300
    assert _mode(first.cache) == 0o600 and _mode(first.cache.parent) == 0o700
    again = fresh()
    checkpoints._scan(again)
    assert again.scanner.read_count == 0  # nothing read again
    # A line naming a missing blob, a path outside, or garbage: that file is read again.
    lines = first.cache.read_text().splitlines()
    row = json.loads(lines[1])
    BlobStore(state).path(row[7]).unlink()
    outside = json.dumps([str(tmp_path / "elsewhere"), *row[1:]])
    first.cache.write_text("\n".join([*lines, outside, "not json", "[1, 2]"]) + "\n")
    third = fresh()
    checkpoints._scan(third)
    assert third.scanner.read_count == 1
    assert str(tmp_path / "elsewhere") not in third.scanner.last
    # A kept scan others may write is not trusted at all.
    third.cache.chmod(0o666)
    fourth = fresh()
    checkpoints._scan(fourth)
    assert fourth.scanner.read_count == 300


def test_past_its_limit_the_store_drops_what_only_the_oldest_sessions_need(
    tmp_path: Path,
) -> None:
    import json

    from tether.session.checkpoint_records import CheckpointFile, CheckpointRecord, FileState
    from tether.session.prune import GRACE_SECONDS, prune

    state = tmp_path / "state"
    store = BlobStore(state)
    old_only, new_only, shared, in_scan, recent, loose = (
        store.put(bytes([n]) * 1000) for n in range(6)
    )
    now = 1_000_000_000.0
    for digest in (old_only, new_only, shared, in_scan, loose):
        os.utime(store.path(digest), (now - 2 * GRACE_SECONDS, now - 2 * GRACE_SECONDS))
    os.utime(store.path(recent), (now - 60, now - 60))  # a step in flight elsewhere

    def log(session: str, digests: list[str], modified: float) -> None:
        files = [
            CheckpointFile(
                path=f"/ws/{d[:6]}",
                uri=f"file:///ws/{d[:6]}",
                before=FileState(kind="file", sha256=d),
            )
            for d in digests
        ]
        record = CheckpointRecord(id="c-1", run_id="r-1", tool="bash", files=files)
        path = state / "sessions" / f"{session}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(record.model_dump_json(by_alias=True, exclude_none=True) + "\n")
        os.utime(path, (modified, modified))

    log("s-old", [old_only, shared], now - 100)
    log("s-new", [new_only, shared], now - 10)
    scans = store.root / "scans"
    scans.mkdir()
    row = ["/ws/f", "file", 420, 1000, 1, 1, 1, in_scan, None, None]
    (scans / "x.jsonl").write_text(
        json.dumps({"version": 1, "roots": ["/ws"]}) + "\n" + json.dumps(row) + "\n"
    )

    assert prune(state, 10_000, now=now) == 0  # under the limit: nothing
    freed = prune(state, 4_500, now=now)
    left = {d for d in (old_only, new_only, shared, in_scan, recent, loose) if store.has(d)}
    assert left == {new_only, shared, in_scan, recent} and freed == 2000
