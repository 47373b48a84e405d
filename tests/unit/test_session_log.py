"""The session log writer: every event, in order, flushed without blocking the caller."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tether.events import RunEvents
from tether.session import SessionLogWriter, SessionSink, session_log_path


def test_events_are_appended_per_session_and_flushed(tmp_path: Path) -> None:
    writer = SessionLogWriter(tmp_path)
    events = RunEvents("r1", [SessionSink(writer, "s-1")])
    events.run_started("hello", "s-1")
    events.text_delta("hi ")
    events.run_finished("done", 1)
    path = session_log_path(tmp_path, "s-1")
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:  # written by the background thread, without close()
        if path.exists() and len(path.read_text().splitlines()) == 3:
            break
        time.sleep(0.01)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["kind"] for x in lines] == ["run-started", "text-delta", "run-finished"]
    assert [x["seq"] for x in lines] == [1, 2, 3]
    assert lines[0] == {
        "runId": "r1",
        "seq": 1,
        "kind": "run-started",
        "prompt": "hello",
        "sessionId": "s-1",
    }
    writer.close()


def test_close_writes_everything_queued(tmp_path: Path) -> None:
    writer = SessionLogWriter(tmp_path)
    events = RunEvents("r1", [SessionSink(writer, "s-2")])
    for i in range(500):
        events.text_delta(str(i))
    writer.close()
    lines = session_log_path(tmp_path, "s-2").read_text().splitlines()
    assert len(lines) == 500 and json.loads(lines[-1])["text"] == "499"


def test_unsafe_session_ids_stay_inside_the_state_dir(tmp_path: Path) -> None:
    path = session_log_path(tmp_path, "../../etc/passwd")
    assert path.parent == tmp_path / "sessions"
