"""Logs as tools and people leave them: every kind of bad line is skipped, counted, reported
once per file, and the rest of the session (and every other session) still reads."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tether.cli import main
from tether.events import RunEvents
from tether.providers.base import AssistantMessage, UserMessage
from tether.session.index import session_log_path
from tether.session.records import read_session
from tether.session.store import list_sessions
from tether.session.writer import SessionLogWriter, SessionRecorder, SessionSink


def write_session(state: Path, session_id: str, prompt: str) -> Path:
    """A real session log of one finished run, written by the server's own writer."""
    writer = SessionLogWriter(state)
    events = RunEvents("r1", [SessionSink(writer, session_id)])
    recorder = SessionRecorder(writer, session_id, "r1")
    events.run_started(prompt, session_id)
    recorder.message(UserMessage(prompt))
    events.text_delta("an answer")
    events.assistant("an answer")
    recorder.message(AssistantMessage("an answer"))
    events.run_finished("done", 1)
    assert writer.flush()
    writer.close()
    return session_log_path(state, session_id)


BAD_LINES = [
    b"{}",
    b'{"record": "message", "role": 5}',
    b'{"record": "message", "runId": "r1", "message": {"role": "wizard"}}',
    b"[]",
    b'"x"',
    b'{"runId": "r1", "seq": 9, "kind": "text-delta", "text": 5}',
    b'["run-started"]',
    b'{"runId": "r1", "seq": 10, "kind": "run-finished", "outcome": 5, "steps": "x"}',
    b"\xff\xfe not utf-8 \x80",
    b'{"record": "bogus", "runId": "r1"}',
    b'{"record": 7}',
    b'{"kind": "' + b"x" * 3_000_000 + b'"}',
]


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """A state dir with a good session and one whose log also holds every kind of bad line."""
    write_session(tmp_path, "s-good", "a good session")
    bad = write_session(tmp_path, "s-bad", "a session with bad lines")
    good_lines = bad.read_bytes().splitlines()
    mixed = [good_lines[0], *BAD_LINES, *good_lines[1:]]
    bad.write_bytes(b"\n".join(mixed) + b"\n")
    return tmp_path


def test_bad_lines_are_skipped_counted_and_reported_once(
    state: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = session_log_path(state, "s-bad")
    with caplog.at_level(logging.WARNING, logger="tether.session.records"):
        data = read_session(path, "s-bad")
    assert data.skipped_lines == len(BAD_LINES)
    assert data.history == [UserMessage("a session with bad lines"), AssistantMessage("an answer")]
    assert [e["kind"] for e in data.events] == [
        "run-started",
        "text-delta",
        "assistant",
        "run-finished",
    ]
    [warning] = caplog.records
    text = warning.getMessage()
    assert f"skipped {len(BAD_LINES)} unreadable line(s)" in text and str(path) in text
    assert "line 2: " in text and "and 7 more" in text
    assert len(text) < 2_000  # the 3 MB line is not echoed


def test_every_reason_is_short_and_says_what_was_wrong(state: Path) -> None:
    path = session_log_path(state, "s-bad")
    lines = path.read_bytes().splitlines()
    # One bad line at a time, each after the good first line.
    reasons = []
    for bad in BAD_LINES:
        path.write_bytes(lines[0] + b"\n" + bad + b"\n")
        [reason] = read_session(path, "s-bad").skipped
        reasons.append(reason)
    assert "not a JSON object but list" in reasons[3]
    assert "not UTF-8" in reasons[8]
    assert "unknown record kind 'bogus'" in reasons[9]
    assert all(len(reason) < 200 for reason in reasons)


def test_sessions_lists_both_the_good_and_the_bad_session(state: Path) -> None:
    listed = {info.session_id: info for info in list_sessions(state)}
    assert set(listed) == {"s-good", "s-bad"}
    bad = listed["s-bad"]
    assert (bad.title, bad.runs, bad.last_outcome) == ("a session with bad lines", 1, "done")


def test_replay_shows_a_session_with_bad_lines(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = session_log_path(state, "s-bad")
    assert main(["replay", str(path)]) == 0
    assert "an answer" in capsys.readouterr().out
