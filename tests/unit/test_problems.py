"""The editor's problems around an edit: compared without ranges, told compactly, asked
for until they settle and never waited for past the cap."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from tether.diagnostics import watch
from tether.diagnostics.report import (
    MAX_MESSAGE_CHARS,
    MAX_NEW_LISTED,
    Problem,
    compare,
    describe_delta,
    listing,
    problems_in,
)
from tether.diagnostics.watch import EditProblems, ProblemWatcher
from tether.host import NoBuffers, ReportsDiagnostics
from tether.workspace.folders import Workspace
from tether_protocol import FileDiagnostics


def problem(
    message: str,
    line: int = 1,
    severity: int = 1,
    source: str | None = "pyright",
    path: str = "/w/a.py",
) -> Problem:
    return Problem(Path(path), line, severity, source, None, message)


def shown(path: Path) -> str:
    return path.name


def test_a_problem_that_only_moved_is_not_new() -> None:
    before = [problem("x is not defined", line=3)]
    after = [problem("x is not defined", line=5), problem("y is not defined", line=2)]
    delta = compare(before, after)
    assert [p.message for p in delta.new] == ["y is not defined"] and delta.fixed == ()


def test_counts_matter_and_fixed_ones_are_told() -> None:
    before = [problem("unused import", severity=2), problem("bad"), problem("bad")]
    after = [problem("bad"), problem("bad"), problem("bad")]
    delta = compare(before, after)
    assert len(delta.new) == 1 and delta.new[0].message == "bad"
    assert [p.message for p in delta.fixed] == ["unused import"]
    text = describe_delta(delta, shown, ["a.py"])
    assert "a.py:1: error [pyright] bad" in text
    assert "Fixed by this edit (1): a.py: warning [pyright] unused import" in text


def test_information_and_hints_are_left_out() -> None:
    delta = compare([], [problem("consider this", severity=3), problem("hint", severity=4)])
    assert delta.new == () and delta.fixed == ()
    assert describe_delta(delta, shown, ["a.py"]) == (
        "The editor reports no new errors or warnings in a.py."
    )


def test_the_list_is_capped_and_long_messages_cut() -> None:
    after = [problem(f"error number {i}", line=i) for i in range(MAX_NEW_LISTED + 7)]
    after.append(problem("x" * 5000 + "\nsecond line"))
    text = describe_delta(compare([], after), shown, ["a.py"])
    lines = text.splitlines()
    assert lines[0] == f"The editor reports {MAX_NEW_LISTED + 8} new problem(s) after this edit:"
    assert len(lines) == 1 + MAX_NEW_LISTED + 1 and lines[-1] == "… and 8 more"
    long = describe_delta(compare([], after[-1:]), shown, ["a.py"]).splitlines()[1]
    assert len(long) < MAX_MESSAGE_CHARS + 40 and long.endswith("…")


def test_a_listing_puts_errors_and_warnings_first() -> None:
    found = [problem("note", line=1, severity=3), problem("b", line=9), problem("a", line=2)]
    shown_list = listing(found, shown, 2)
    assert shown_list.lines == ["a.py:2: error [pyright] a", "a.py:9: error [pyright] b"]
    assert shown_list.more == 1 and shown_list.files == 1


async def test_only_documents_inside_the_workspace_count(tmp_path: Path) -> None:
    ws = Workspace([tmp_path / "w"], NoBuffers())
    items = [
        FileDiagnostics.model_validate(
            {
                "uri": uri,
                "diagnostics": [
                    {
                        "range": {
                            "start": {"line": 4, "character": 0},
                            "end": {"line": 4, "character": 1},
                        },
                        "message": "m",
                        "code": 7,
                    }
                ],
            }
        )
        for uri in ((tmp_path / "w" / "a.py").as_uri(), (tmp_path / "b.py").as_uri(), "untitled:1")
    ]
    (tmp_path / "w").mkdir()
    [only] = await problems_in(items, ws)
    assert only.path == tmp_path / "w" / "a.py" and only.line == 5 and only.code == "7"
    assert only.severity == 1  # none given: an error, as editors show it


def diagnostics(uri: str, *messages: str) -> list[FileDiagnostics]:
    span = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    return [
        FileDiagnostics.model_validate(
            {
                "uri": uri,
                "diagnostics": [{"range": span, "message": m, "severity": 1} for m in messages],
            }
        )
    ]


class Publishing:
    """A language server behind an editor: the old problems for the first ``stale`` answers
    after the edit, the new ones from then on (deterministic: counted, not timed)."""

    def __init__(self, uri: str, stale: int) -> None:
        self.uri = uri
        self.stale = stale
        self.asked = 0

    async def diagnostics(self, uris: Sequence[str] | None) -> list[FileDiagnostics] | None:
        self.asked += 1
        if self.asked <= 1 + self.stale:  # the question before the edit, then stale ones
            return diagnostics(self.uri, "old problem")
        return diagnostics(self.uri, "new problem")


class VirtualClock:
    """``anyio`` as the watcher sees it, on a clock that moves by each sleep it takes (and a
    microsecond: a real sleep ends a little late, never early): its polls and its settle are
    counted, however late a loaded machine wakes it."""

    def __init__(self) -> None:
        self.now = 0.0

    def current_time(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds + 1e-6
        await anyio.lowlevel.checkpoint()

    def __getattr__(self, name: str) -> Any:
        return getattr(anyio, name)


async def test_the_answer_is_awaited_until_it_settles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch, "anyio", VirtualClock())
    uri = (tmp_path / "a.py").as_uri()
    editor = Publishing(uri, stale=2)
    assert isinstance(editor, ReportsDiagnostics)
    watcher = ProblemWatcher(editor, Workspace([tmp_path], NoBuffers()), 300, 5000)
    edit = EditProblems(watcher)
    await edit.take_before(uri)
    note = await edit.note()
    assert "a.py:1: error new problem" in note
    assert "Fixed by this edit (1): a.py: error old problem" in note
    # Asked before the edit, twice stale, then the new answer and 300 ms of polls (3 of 100 ms).
    assert editor.asked == 1 + 2 + 1 + 3


class Silent:
    """An editor that takes the request and never answers."""

    def __init__(self) -> None:
        self.asked = 0

    async def diagnostics(self, uris: Sequence[str] | None) -> list[FileDiagnostics] | None:
        self.asked += 1
        await anyio.Event().wait()
        return None


async def test_a_silent_editor_is_waited_for_once_at_most_the_cap(tmp_path: Path) -> None:
    editor = Silent()
    watcher = ProblemWatcher(editor, Workspace([tmp_path], NoBuffers()), 300, 200)
    for _ in range(3):  # three edits in a run
        edit = EditProblems(watcher)
        await edit.take_before((tmp_path / "a.py").as_uri())
        assert await edit.note() == ""
    # Asked once: the later edits did not wait for it (a wait not capped would never end,
    # and the test's own timeout would say so).
    assert editor.asked == 1 and watcher.silent


async def test_settle_zero_turns_the_check_off(tmp_path: Path) -> None:
    editor = Publishing((tmp_path / "a.py").as_uri(), stale=0)
    watcher = ProblemWatcher(editor, Workspace([tmp_path], NoBuffers()), 0, 3000)
    edit = EditProblems(watcher)
    await edit.take_before((tmp_path / "a.py").as_uri())
    assert await edit.note() == "" and editor.asked == 0


def test_a_partly_malformed_answer_keeps_what_fits() -> None:
    from tether.lsp.editor import diagnostics_answer

    span = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    raw = {
        "items": [
            {
                "uri": "file:///w/a.py",
                "diagnostics": [{"range": span, "message": "kept"}, {"x": 1}],
            },
            {"uri": 5, "diagnostics": []},
            "junk",
        ]
    }
    [item] = diagnostics_answer(raw)
    assert item.uri == "file:///w/a.py" and [d.message for d in item.diagnostics] == ["kept"]
    assert diagnostics_answer({"items": "nothing"}) == []
    assert diagnostics_answer(None) == []


def test_settle_zero_is_kept_as_off_and_the_defaults_are_documented_ones() -> None:
    from tether.config.layers import resolve
    from tether_protocol import TetherSettings

    off = resolve(TetherSettings(diagnostics_settle_ms=0), {})
    assert off.diagnostics_settle_ms == 0 and off.diagnostics_max_wait_ms == 3000
    default = resolve(TetherSettings(), {})
    assert (default.diagnostics_settle_ms, default.diagnostics_max_wait_ms) == (300, 3000)
