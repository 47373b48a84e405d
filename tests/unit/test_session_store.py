"""Session storage: the index beside each log, small edit records, a writer handed over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.events import RunEvents
from tether.host import FileEdit, NoBuffers
from tether.session.index import index_path, read_index, session_log_path
from tether.session.records import EditRecord, EditWindow, read_session
from tether.session.store import RunIndex, find_run, list_sessions
from tether.session.undo import undo_edits
from tether.session.writer import SessionLogWriter, SessionRecorder, SessionSink
from tether.text.edit import minimal_changes
from tether.workspace.folders import Workspace
from tether.writes.disk import DiskEditor
from tether_protocol import PartialUndo, UndoResult

T0 = 1_600_000_000.0  # 2020-09-13T12:26:40Z


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def a_run(writer: SessionLogWriter, session_id: str, run_id: str, prompt: str) -> None:
    events = RunEvents(run_id, [SessionSink(writer, session_id)])
    events.run_started(prompt, session_id)
    events.step(1)
    events.run_finished("done", 1)


def test_created_at_is_the_first_write_and_does_not_move(tmp_path: Path) -> None:
    clock = Clock()
    writer = SessionLogWriter(tmp_path, clock=clock)
    a_run(writer, "s-a", "r1", "first")
    assert writer.flush()
    clock.now = T0 + 3600
    a_run(writer, "s-a", "r2", "second")
    writer.close()
    [info] = list_sessions(tmp_path)
    assert info.created_at == "2020-09-13T12:26:40+00:00"
    assert info.updated_at == "2020-09-13T13:26:40+00:00"
    assert info.runs == 2 and info.title == "first" and info.last_outcome == "done"


def test_created_at_comes_from_the_index_not_the_file_times(tmp_path: Path) -> None:
    writer = SessionLogWriter(tmp_path)
    a_run(writer, "s-a", "r1", "first")
    writer.close()
    log = session_log_path(tmp_path, "s-a")
    stored = read_index(log)
    assert stored is not None
    stored.created_at = T0  # as a server that wrote the first line then would have left it
    index_path(log).write_text(stored.model_dump_json(by_alias=True))
    [info] = list_sessions(tmp_path)
    assert info.created_at == "2020-09-13T12:26:40+00:00"


def test_listing_and_finding_a_run_do_not_read_the_log(tmp_path: Path) -> None:
    writer = SessionLogWriter(tmp_path)
    a_run(writer, "s-a", "r1", "the prompt")
    writer.close()
    log = session_log_path(tmp_path, "s-a")
    lines = log.read_bytes().split(b"\n")
    # blank the run-started line, same length: only a reader of the whole log would notice
    log.write_bytes(b"\n".join([b" " * len(lines[0]), *lines[1:]]))
    [info] = list_sessions(tmp_path)
    assert info.title == "the prompt" and info.runs == 1
    assert find_run(tmp_path, "r1") == "s-a"


def test_an_old_state_dir_without_indexes_is_indexed_and_kept_up_to_date(
    tmp_path: Path,
) -> None:
    log = session_log_path(tmp_path, "s-old")
    log.parent.mkdir(parents=True)

    def started(run_id: str, prompt: str) -> bytes:
        event = {"runId": run_id, "seq": 1, "kind": "run-started", "prompt": prompt}
        return json.dumps({**event, "sessionId": "s-old"}).encode() + b"\n"

    finished = {"runId": "r1", "seq": 2, "kind": "run-finished", "outcome": "error", "steps": 1}
    log.write_bytes(started("r1", "old   prompt") + json.dumps(finished).encode() + b"\n")
    [info] = list_sessions(tmp_path)
    assert (info.title, info.runs, info.last_outcome) == ("old prompt", 1, "error")
    assert index_path(log).is_file()  # stored: the next listing reads no log
    with log.open("ab") as handle:  # appended by an older server, which keeps no index
        handle.write(started("r2", "later"))
    [info] = list_sessions(tmp_path)
    assert info.runs == 2 and find_run(tmp_path, "r2") == "s-old"
    stored = read_index(log)
    assert stored is not None and stored.last_prompt == "later"
    log.write_bytes(started("r9", "rewritten"))  # replaced: read again from the start
    [info] = list_sessions(tmp_path)
    assert (info.title, info.runs) == ("rewritten", 1)


def test_a_writer_keeps_an_index_it_did_not_start_up_to_date(tmp_path: Path) -> None:
    first = SessionLogWriter(tmp_path)
    a_run(first, "s-a", "r1", "one")
    first.close()
    second = SessionLogWriter(tmp_path)  # a restarted server continues the session
    a_run(second, "s-a", "r2", "two")
    second.close()
    index = RunIndex(tmp_path)
    index.refresh()
    assert index.sessions_of("r1") == ["s-a"] and index.sessions_of("r2") == ["s-a"]
    stored = read_index(session_log_path(tmp_path, "s-a"))
    assert stored is not None and stored.events == 6 and stored.run_ids == ["r1", "r2"]


async def test_a_one_line_edit_of_a_1_mb_file_logs_a_small_record_and_undoes(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "big.txt"
    before = "".join(f"line {n}\n" for n in range(100_000))
    after = before.replace("line 50000\n", "LINE 50000\n")
    assert len(before) > 1_000_000
    target.write_text(after)  # as the editor left it
    writer = SessionLogWriter(tmp_path / "state")
    recorder = SessionRecorder(writer, "s", "r")
    edit = FileEdit(
        path=target,
        root=root,
        uri=target.as_uri(),
        base_text=before,
        after=after,
        version=None,
        create=False,
        changes=minimal_changes(before, after),
    )
    edit_id = await recorder.intended(edit)
    recorder.outcome(edit_id, applied=True)
    writer.close()
    log = session_log_path(tmp_path / "state", "s")
    [intent, outcome] = log.read_bytes().splitlines()
    assert len(intent) < 2048, len(intent)
    [record] = read_session(log, "s").edits
    result = await undo_edits([record], Workspace([root], NoBuffers()), DiskEditor())
    assert result.reverted == [target.as_uri()] and target.read_text() == before


async def _logged_edit_then(
    tmp_path: Path, user_text: str, *, old_log: bool = False
) -> tuple[Path, UndoResult]:
    """The run changed b to B in f.txt, then the user left ``user_text``; undo it."""
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "f.txt"
    target.write_text("a\nB\nc\n")
    writer = SessionLogWriter(tmp_path / "state")
    recorder = SessionRecorder(writer, "s", "r")
    edit = FileEdit(target, root, target.as_uri(), "a\nb\nc\n", None, False, (), after="a\nB\nc\n")
    recorder.outcome(await recorder.intended(edit), applied=True)
    writer.close()
    target.write_text(user_text)
    [record] = read_session(session_log_path(tmp_path / "state", "s"), "s").edits
    if old_log:  # as logs before hunks were undone one by one hold it: no context
        assert record.window is not None and record.window.lead is not None
        record = record.model_copy(
            update={"window": record.window.model_copy(update={"lead": None, "trail": None})}
        )
    result = await undo_edits([record], Workspace([root], NoBuffers()), DiskEditor())
    return target, result


async def test_a_window_record_refuses_a_file_changed_where_the_run_edited(
    tmp_path: Path,
) -> None:
    target, result = await _logged_edit_then(tmp_path, "a\nBee\nc\n")
    assert result.conflicts == [target.as_uri()] and result.reverted == [] and not result.partial
    assert target.read_text() == "a\nBee\nc\n"


async def test_an_old_window_record_still_refuses_a_changed_file(tmp_path: Path) -> None:
    target, result = await _logged_edit_then(tmp_path, "a\nB\nc\nthe user's line\n", old_log=True)
    assert result.conflicts == [target.as_uri()] and result.reverted == [] and not result.partial
    assert target.read_text() == "a\nB\nc\nthe user's line\n"


async def test_a_window_record_puts_back_the_hunk_the_user_did_not_touch(tmp_path: Path) -> None:
    target, result = await _logged_edit_then(tmp_path, "a\nB\nc\nthe user's line\n")
    assert result.partial == [PartialUndo(uri=target.as_uri(), reverted_hunks=1, kept_hunks=0)]
    assert result.conflicts == [] and result.reverted == []
    assert target.read_text() == "a\nb\nc\nthe user's line\n"


async def test_an_older_intent_with_whole_texts_is_still_undone(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "f.txt"
    target.write_text("two\n")
    log = session_log_path(tmp_path, "s")
    log.parent.mkdir(parents=True)
    intent = {
        "record": "edit-intent",
        "editId": "r.e1",
        "runId": "r",
        "uri": target.as_uri(),
        "path": str(target),
        "before": "one\n",
        "after": "two\n",
    }
    outcome = {"record": "edit-outcome", "editId": "r.e1", "runId": "r", "applied": True}
    log.write_text(json.dumps(intent) + "\n" + json.dumps(outcome) + "\n")
    [record] = read_session(log, "s").edits
    result = await undo_edits([record], Workspace([root], NoBuffers()), DiskEditor())
    assert result.reverted == [target.as_uri()] and target.read_text() == "one\n"


def test_a_retired_writer_finishes_the_runs_holding_it(tmp_path: Path) -> None:
    writer = SessionLogWriter(tmp_path)
    events = RunEvents("r1", [SessionSink(writer, "s-a")])
    SessionRecorder(writer, "s-a", "r1")  # the run holds the writer from its creation
    writer.retire()  # the state dir changed before the run even started
    assert writer.flush() and not writer.closed
    events.run_started("p", "s-a")
    events.step(1)
    events.run_finished("done", 1)
    assert writer.wait_closed(5)  # it stops by itself once the run has finished
    kinds = [
        json.loads(x)["kind"] for x in session_log_path(tmp_path, "s-a").read_text().splitlines()
    ]
    assert kinds == ["run-started", "step", "run-finished"]


def test_a_retired_writer_without_runs_closes_at_once(tmp_path: Path) -> None:
    writer = SessionLogWriter(tmp_path)
    writer.retire()
    assert writer.wait_closed(5)


@pytest.mark.parametrize("created", [False, True])
def test_a_window_turns_the_after_text_back(created: bool) -> None:
    before, after = ("", "new file\n") if created else ("x\ny\nz\n", "x\nY1\nY2\nz\n")
    window = EditWindow.between(before, after, created)
    record = EditRecord(run_id="r", uri="u", path="/p", window=window, created=created)
    assert record.is_after(after) and record.is_before(before)
    assert not record.is_after(before) and not record.is_after(None)
    assert record.text_before(after) == before


def test_a_retired_writer_that_cannot_write_still_closes_when_its_run_ends(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    writer = SessionLogWriter(blocker / "state")
    events = RunEvents("r1", [SessionSink(writer, "s-a")])
    SessionRecorder(writer, "s-a", "r1")
    events.run_started("p", "s-a")
    writer.retire()
    assert writer.flush() and not writer.closed
    events.run_finished("error", 1)
    assert writer.wait_closed(5) and writer.failed_writes == 2


def test_a_flush_stores_the_index_of_every_line_written_before_it(tmp_path: Path) -> None:
    writer = SessionLogWriter(tmp_path)
    a_run(writer, "s-a", "r1", "p")  # a run finishing stores the index at once
    events = RunEvents("r1", [SessionSink(writer, "s-a")])
    events.step(2)
    events.step(3)
    assert writer.flush()
    stored = read_index(session_log_path(tmp_path, "s-a"))
    assert stored is not None and stored.events == 5
    assert stored.log_bytes == session_log_path(tmp_path, "s-a").stat().st_size
    writer.close()


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("", ""),
        ("same", "same"),
        ("abc", ""),
        ("", "abc"),
        ("aaaa", "aaaaa"),  # the window is ambiguous; any correct one will do
        ("x" * 200_000 + "1" + "y" * 70_000, "x" * 200_000 + "22" + "y" * 70_000),
        ("x" * 131_072, "x" * 131_072 + "tail"),
        ("head" + "x" * 131_072, "x" * 131_072),
        ("é\ud800z", "é\ud801z"),
    ],
)
def test_the_window_is_the_changed_part_only(before: str, after: str) -> None:
    window = EditWindow.between(before, after)
    assert window.new is not None
    rebuilt = before[: window.start] + window.new + before[window.start + len(window.old) :]
    assert rebuilt == after
    assert len(window.old) + len(window.new) <= abs(len(before) - len(after)) + 4
