"""Tether's own files and folders are the user's alone from creation (``writes/private.py``),
and the session lock a second process meets (``session/lock.py``)."""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.session.lock import SessionBusy, SessionLocks, lock_path
from tether.writes.disk import own_folder, update_confined
from tether.writes.private import append_private, private_folder


@pytest.fixture(autouse=True)
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_every_folder_made_is_0700_and_every_file_0600(tmp_path: Path) -> None:
    state = tmp_path / "a" / "b" / "state"
    private_folder(state)
    assert [mode(p) for p in (tmp_path / "a", tmp_path / "a" / "b", state)] == [0o700] * 3
    with append_private(state / "log.jsonl") as handle:
        handle.write(b"{}\n")
    root = own_folder(tmp_path / "config" / "tether")
    assert update_confined(root, root / "sub" / "rules.toml", lambda _: b"x", private=True)
    assert mode(state / "log.jsonl") == 0o600
    assert mode(root) == mode(root / "sub") == 0o700 and mode(root / "sub" / "rules.toml") == 0o600
    # a file of the project keeps the umask's mode
    assert update_confined(tmp_path, tmp_path / "project.toml", lambda _: b"x")
    assert mode(tmp_path / "project.toml") == 0o644


def test_a_folder_of_the_users_that_lets_others_in_is_narrowed_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    (state / "old.jsonl").write_text("{}\n")
    private_folder(state)
    private_folder(state)
    assert mode(state) == 0o700
    assert mode(state / "old.jsonl") == 0o644  # the folder keeps others out
    said = [r.getMessage() for r in caplog.records if str(state) in r.getMessage()]
    assert said == [f"{state} let other users in (mode 755); now 700: the user's alone"]


def test_a_folder_someone_else_owns_or_a_link_leads_to_is_left_alone(tmp_path: Path) -> None:
    chosen = tmp_path / "dotfiles"
    chosen.mkdir(mode=0o755)
    own_folder(chosen, narrowed=False)
    assert mode(chosen) == 0o755
    if os.geteuid() == 0:  # as root, a folder of nobody's; otherwise /tmp is root's
        other = tmp_path / "theirs"
        other.mkdir(mode=0o755)
        os.chown(other, pwd.getpwnam("nobody").pw_uid, -1)
    else:
        other = Path("/tmp")
    before = mode(other)
    private_folder(other)
    assert mode(other) == before


HOLD = """
import sys
from pathlib import Path
from tether.session.lock import SessionLocks
SessionLocks(Path(sys.argv[1])).claim(sys.argv[2])
print("held", flush=True)
sys.stdin.read()
"""


def test_a_session_held_by_another_process_is_refused_until_it_ends(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path), "s-1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        locks = SessionLocks(tmp_path)
        with pytest.raises(SessionBusy) as busy:
            locks.claim("s-1")
        assert str(busy.value) == (
            f"session 's-1' is open in another Tether process (pid {holder.pid}): close it "
            "there first"
        )
        assert not locks.holds("s-1")
        locks.claim("s-2")  # another session is free
        assert mode(lock_path(tmp_path, "s-1")) == 0o600
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    locks.claim("s-1")  # gone with its process
    assert locks.holds("s-1")
    locks.release_all()


def test_claims_in_one_process_share_the_lock_and_count(tmp_path: Path) -> None:
    first, second = SessionLocks(tmp_path), SessionLocks(tmp_path)
    first.claim("s-1")
    second.claim("s-1")  # the same process: shared, not refused
    first.release("s-1")
    probe = [sys.executable, "-c", HOLD, str(tmp_path), "s-1"]
    held = subprocess.run(probe, input="", capture_output=True, text=True, timeout=30)
    assert "SessionBusy" in held.stderr  # still held by the second claim
    second.release("s-1")
    free = subprocess.run(probe, input="", capture_output=True, text=True, timeout=30)
    assert free.returncode == 0 and free.stdout == "held\n", free.stderr


def test_a_state_folder_that_cannot_be_written_holds_no_lock_and_refuses_nothing(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    locks = SessionLocks(blocker / "state")
    locks.claim("s-1")  # no lock can be made: the session goes on without one
    assert locks.holds("s-1")
    locks.release_all()
    assert not locks.holds("s-1")
