"""Promise: whatever a step does to whatever files, rewinding to before it gives back the
tree exactly — bytes, permission bits, links as links — under every spelling of a file name
(spaces, newlines, tabs, a leading dash, bidi controls, backslashes, colons, non-ASCII), and
never follows a link out of the workspace. Generated trees and steps, run through the real
checkpoint and rewind code with the session log and the confined disk writer."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import uuid
from pathlib import Path

import anyio
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tether.host import NoBuffers
from tether.session.checkpoints import SessionCheckpoints
from tether.session.rewind import rewind_session
from tether.session.store import load
from tether.session.writer import SessionLogWriter
from tether.workspace.folders import Workspace
from tether.writes.disk import DiskEditor

NAMES = st.text(
    st.sampled_from(list("ab- .\n\t\\:é") + ["\u202e", "\u200b", "\x1b"]), min_size=1, max_size=6
).filter(lambda n: n not in (".", "..", ".git") and "/" not in n)
CONTENT = st.binary(max_size=64)
MODES = st.sampled_from([0o644, 0o600, 0o755, 0o700])


def tree(root: Path) -> dict[str, tuple[str, str, int]]:
    found: dict[str, tuple[str, str, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in files + [d for d in dirs if Path(folder, d).is_symlink()]:
            path = Path(folder, name)
            info = path.lstat()
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path), 0)
            else:
                found[rel] = ("file", hashlib.sha256(path.read_bytes()).hexdigest(), info.st_mode)
        dirs[:] = [d for d in dirs if not Path(folder, d).is_symlink()]
    return found


@st.composite
def steps(
    draw: st.DrawFn,
) -> tuple[dict[str, tuple[bytes, int]], list[tuple[str, str, bytes, int]]]:
    names = draw(st.lists(NAMES, min_size=1, max_size=5, unique=True))
    files = {f"d/{n}" if i % 2 else n: (draw(CONTENT), draw(MODES)) for i, n in enumerate(names)}
    actions = []
    for name in names[: draw(st.integers(1, len(names)))]:
        what = draw(st.sampled_from(["write", "delete", "chmod", "rename", "link", "create"]))
        actions.append((what, name, draw(CONTENT), draw(MODES)))
    return files, actions


def apply(
    root: Path, files: dict[str, tuple[bytes, int]], actions: list[tuple[str, str, bytes, int]]
) -> None:
    keys = list(files)
    for what, name, data, mode in actions:
        # By its whole name: ``:`` must not pick ``d/::`` (a link out, after a 'link' action).
        path = root / next(k for k in keys if k in (name, f"d/{name}"))
        if not path.exists() and not path.is_symlink():
            continue
        if what == "write":
            path.write_bytes(data + b"!")
        elif what == "delete":
            path.unlink()
        elif what == "chmod":
            path.chmod(mode ^ 0o100)
        elif what == "rename":
            path.rename(path.with_name(path.name + "~"))
        elif what == "link":  # the file becomes a link out of the workspace
            path.unlink()
            path.symlink_to(root.parent / "outside")
        else:
            (root / f"new {name}").write_bytes(data)


@settings(max_examples=30, deadline=None)
@given(steps())
@example(  # a file ``:`` next to ``d/::``, which a step made a link out of the workspace
    (
        {"\\": (b"", 0o644), "d/::": (b"", 0o644), ":": (b"", 0o644)},
        [("write", "\\", b"", 0o644), ("link", "::", b"", 0o644), ("write", ":", b"", 0o644)],
    )
)
def test_a_rewind_gives_back_the_tree_exactly(
    case: tuple[dict[str, tuple[bytes, int]], list[tuple[str, str, bytes, int]]],
) -> None:
    files, actions = case
    base = Path(tempfile.mkdtemp(prefix="rewind-"))  # one per example: no fixture is reset
    root = base / "ws"
    (root / "d").mkdir(parents=True)
    outside = base / "outside"
    outside.write_text("not the workspace's")
    for rel, (data, mode) in files.items():
        (root / rel).write_bytes(data)
        (root / rel).chmod(mode)
    before = tree(root)

    async def main() -> None:
        writer = SessionLogWriter(base / "state")
        try:
            ws = Workspace([root], NoBuffers())
            checkpoints = SessionCheckpoints(writer, "s-prop", f"r-{uuid.uuid4().hex[:8]}", ws)
            taken = await checkpoints.before("bash", "call_1", "a step", None, 1)
            apply(root, files, actions)
            await checkpoints.after(taken, ())
            await checkpoints.settle()  # the scan after a bash step ends in a thread
            await anyio.to_thread.run_sync(writer.flush)
            data = load(base / "state", "s-prop")
            assert data is not None
            [record] = data.checkpoints
            done = await rewind_session(writer, "s-prop", record.id, "files", ws, DiskEditor())
            assert done.result.conflicts == [] and done.result.failed == [], done.result
        finally:
            writer.close()

    try:
        anyio.run(main)
        assert tree(root) == before
        assert outside.read_text() == "not the workspace's"
    finally:
        shutil.rmtree(base, ignore_errors=True)
