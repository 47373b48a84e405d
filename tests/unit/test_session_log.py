"""The session log writer: every event, in order, flushed without blocking the caller."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest

from tether.events import RunEvents, event_json
from tether.session.index import session_log_path
from tether.session.records import EditRecord, LoggedMessage, MessageRecord
from tether.session.writer import (
    MAX_OPEN_LOGS,
    SessionLogWriter,
    SessionSink,
    json_pieces,
)
from tether_protocol import StepEvent, ToolResultEvent

from ..waiting import wait_until_sync


def test_events_are_appended_per_session_and_flushed(tmp_path: Path) -> None:
    writer = SessionLogWriter(tmp_path)
    events = RunEvents("r1", [SessionSink(writer, "s-1")])
    events.run_started("hello", "s-1")
    events.text_delta("hi ")
    events.run_finished("done", 1)
    path = session_log_path(tmp_path, "s-1")
    wait_until_sync(  # written by the background thread, without close()
        lambda: path.exists() and len(path.read_text().splitlines()) == 3, f"3 lines in {path}"
    )
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


def test_a_flush_asked_while_or_after_it_closes_is_answered(tmp_path: Path) -> None:
    """A run finishing as the server exits asks for a flush the closing writer will never
    do: it is answered, not left to its timeout (the exit used to wait 2 s for it)."""
    writer = SessionLogWriter(tmp_path)
    writer.append("s-3", b'{"kind":"text-delta"}')
    answers: list[bool] = []
    flushing = [
        threading.Thread(target=lambda: answers.append(writer.flush(timeout=10))) for _ in range(20)
    ]
    for thread in flushing[:10]:
        thread.start()
    writer.close()
    for thread in flushing[10:]:
        thread.start()
    for thread in flushing:
        thread.join(20)
    assert answers == [True] * 20
    assert writer.flush(timeout=10)


def test_unsafe_session_ids_stay_inside_the_state_dir(tmp_path: Path) -> None:
    path = session_log_path(tmp_path, "../../etc/passwd")
    assert path.parent == tmp_path / "sessions"


def test_one_serialization_serves_every_sink(tmp_path: Path) -> None:
    event = StepEvent(run_id="r1", seq=1, step=1)
    first = event_json(event)
    assert event_json(event) is first
    assert json.loads(first) == {"runId": "r1", "seq": 1, "kind": "step", "step": 1}


def test_an_event_with_a_lone_surrogate_is_still_valid_json() -> None:
    event = ToolResultEvent(
        run_id="r1", seq=2, call_id="c", tool="read_file", ok=True, output="a\ud800"
    )
    assert json.loads(event_json(event))["output"] == "a\ud800"


def test_many_sessions_keep_few_files_open_and_lose_nothing(tmp_path: Path) -> None:
    writer = SessionLogWriter(tmp_path)
    for round_ in range(2):
        for n in range(MAX_OPEN_LOGS * 3):
            RunEvents(f"r{n}", [SessionSink(writer, f"s-{n}")]).step(round_ + 1)
    assert writer.flush()
    assert len(writer._files) <= MAX_OPEN_LOGS
    writer.close()
    for n in range(MAX_OPEN_LOGS * 3):
        lines = session_log_path(tmp_path, f"s-{n}").read_text().splitlines()
        assert [json.loads(x)["step"] for x in lines] == [1, 2]


def test_an_edit_of_a_large_file_is_logged_whole(tmp_path: Path) -> None:
    writer = SessionLogWriter(tmp_path)
    before = "é line\n" * 200_000 + "\ud800 lone surrogate"  # an editor may send one
    after = before.replace("line", "LINE", 1)
    record = EditRecord(run_id="r1", uri="file:///f", path="/f", before=before, after=after)
    writer.append("s-big", record)
    writer.close()
    line = session_log_path(tmp_path, "s-big").read_bytes()
    assert EditRecord.model_validate(json.loads(line)) == record


def test_json_pieces_is_compact_json() -> None:
    value = {"a": [1, 2.5, None, True, 'x"y'], "é": {}, "long": "z" * 300_000}
    assert json.loads(b"".join(json_pieces(value))) == value


def test_a_record_with_a_lone_surrogate_does_not_stop_the_log(tmp_path: Path) -> None:
    writer = SessionLogWriter(tmp_path)
    message = MessageRecord(run_id="r1", message=LoggedMessage(role="user", text="a\ud800"))
    writer.append("s-odd", message)
    RunEvents("r1", [SessionSink(writer, "s-odd")]).step(1)
    writer.close()
    lines = session_log_path(tmp_path, "s-odd").read_text().splitlines()
    assert json.loads(lines[0])["message"]["text"] == "a\ud800" and len(lines) == 2


def test_an_unwritable_state_dir_is_reported_once_and_logged_in_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")  # a state dir under a file: unwritable even for root
    reports: list[str] = []
    writer = SessionLogWriter(blocker / "state", on_error=reports.append)
    with caplog.at_level(logging.WARNING, logger="tether.session.writer"):
        for index in range(50):
            writer.append(f"s-{index % 3}", StepEvent(run_id="r1", seq=index + 1, step=1))
            if index % 10 == 0:
                assert writer.flush()
        assert writer.flush()
        writer.close()
    assert len(reports) == 1 and str(blocker / "state") in reports[0]
    assert writer.failed_writes == 50
    [line] = caplog.records
    assert line.exc_info is None and line.getMessage() == reports[0]


def test_a_failing_error_report_does_not_stop_the_writer(tmp_path: Path) -> None:
    def refuse(message: str) -> None:
        raise RuntimeError("the client is gone")

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    writer = SessionLogWriter(blocker / "state", on_error=refuse)
    writer.append("s", StepEvent(run_id="r1", seq=1, step=1))
    assert writer.flush()
    writer.append("s", StepEvent(run_id="r1", seq=2, step=2))
    assert writer.flush()  # the thread still takes work
    writer.close()
    assert writer.failed_writes == 2
