"""The checkpoint store is brought under its limit when a front starts, before any prompt:
its scan of every stored blob runs while the user is still typing, not beside the first
prompt (it used to start after the first step that took a checkpoint)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tether.session.blobs import BlobStore
from tether.session.prune import GRACE_SECONDS

from ..acp.recorder import NOTHING, RecordingClient
from ..acp.tether import tether_acp, turns
from ..waiting import wait_until
from .conftest import serving

LIMIT = 1 << 20
"""``checkpointStoreMaxBytes`` of the servers below (its least): under the old blobs' 2 MB."""


def over_the_limit(state_dir: Path) -> list[Path]:
    """Ten old 200 KB blobs no session names: what a prune deletes."""
    store = BlobStore(state_dir)
    old = time.time() - 2 * GRACE_SECONDS
    paths = []
    for n in range(10):
        path = store.path(store.put(bytes([n]) * 200_000))
        os.utime(path, (old, old))
        paths.append(path)
    return paths


def gone(paths: list[Path]) -> bool:
    return not any(path.exists() for path in paths)


async def test_tether_serve_prunes_the_store_once_initialized(
    tmp_path: Path, workspace: Path
) -> None:
    state = tmp_path / "state"
    blobs = over_the_limit(state)
    env = {"TETHER_CHECKPOINT_STORE_MAX_BYTES": str(LIMIT)}
    async with serving(state, env=env) as editor:
        await editor.open_session(workspace)
        await wait_until(lambda: gone(blobs), "the old blobs pruned, no prompt sent")


async def test_tether_acp_prunes_the_store_at_its_first_session(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    blobs = over_the_limit(tmp_path / "sessions")  # tether_acp's state folder
    client = RecordingClient(capabilities=NOTHING, permission="allow_once")
    env = {"TETHER_CHECKPOINT_STORE_MAX_BYTES": str(LIMIT)}
    async with tether_acp(root, tmp_path, turns({"text": "hi"}), client, **env) as agent:
        await agent.new_session(root)
        await wait_until(lambda: gone(blobs), "the old blobs pruned, no prompt sent")
