"""``session/list``'s cursor and answer, generated: any string a client sends as a cursor
is either refused as one this agent did not give or answers a page the schema accepts, and
the cursors the agent gives walk every stored session once, newest first."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.acp.history import PAGE, BadCursor, list_page
from tether.session.index import session_log_path

from .validation import problems


def _store(state: Path, count: int) -> list[str]:
    """``count`` sessions with a run and a folder, as a run writes them (oldest first)."""
    ids = []
    for n in range(count):
        session_id = f"s-{n:04d}"
        log = session_log_path(state, session_id)
        log.parent.mkdir(parents=True, exist_ok=True)
        workspace = {"record": "workspace", "runId": f"r-{n}", "roots": ["/w"]}
        started = {
            "kind": "run-started",
            "runId": f"r-{n}",
            "seq": 1,
            "prompt": f"task {n}",
            "sessionId": session_id,
        }
        lines = [json.dumps(workspace, separators=(",", ":")), json.dumps(started)]
        log.write_text("\n".join(lines) + "\n")
        stamp = time.time() - 1000 + n
        os.utime(log, (stamp, stamp))
        ids.append(session_id)
    return ids


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80) | st.binary(max_size=60).map(lambda b: b.hex()))
def test_any_cursor_is_a_page_or_refused(
    tmp_path_factory: pytest.TempPathFactory, cursor: str
) -> None:
    state = tmp_path_factory.mktemp("state")
    _store(state, 3)
    try:
        answer = list_page(state, None, cursor)
    except BadCursor:
        return
    assert problems("ListSessionsResponse", answer) == []


def test_the_cursors_walk_every_session_once_newest_first(tmp_path: Path) -> None:
    made = _store(tmp_path, 2 * PAGE + 5)
    seen: list[str] = []
    cursor = None
    while True:
        page = list_page(tmp_path, Path("/w"), cursor)
        assert problems("ListSessionsResponse", page) == []
        seen += [s["sessionId"] for s in page["sessions"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert seen == made[::-1]
    assert list_page(tmp_path, Path("/elsewhere"), None) == {"sessions": []}
