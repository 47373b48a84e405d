"""Undo of the hunks a user did not touch: a run's edit, the user's edits, then undo."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tether.host import EditOutcome, FileEdit, NoBuffers
from tether.session.hunks import CONTEXT_LINES, HUNK_LIMIT, context_around, revert_untouched
from tether.session.records import EditRecord, EditWindow
from tether.session.undo import undo_edits
from tether.text.edit import minimal_changes
from tether.workspace.folders import Workspace
from tether.writes.disk import DiskEditor
from tether_protocol import PartialUndo

LineEdit = tuple[int, int, list[str]]
"""Lines ``[start, end)`` of a text become these lines."""


def apply(lines: list[str], edits: list[LineEdit]) -> str:
    """``lines`` with the (non-overlapping) ``edits``, all in the original's line numbers."""
    out: list[str] = []
    at = 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        out += lines[at:start] + new
        at = max(at, end)
    return "".join(out + lines[at:])


def far_from(edit: LineEdit, run: list[LineEdit]) -> bool:
    """Whether ``edit`` leaves every run hunk's lines and its context lines alone."""
    start, end, _ = edit
    return all(end <= s - CONTEXT_LINES or start >= e + CONTEXT_LINES for s, e, _ in run)


def edits(draw: st.DrawFn, n: int, line: Callable[[], str], most: int) -> list[LineEdit]:
    """Up to ``most`` non-overlapping edits of a text of ``n`` lines, each changing it."""
    count = draw(st.integers(1, most))
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=2 * count, max_size=2 * count)))
    found: list[LineEdit] = []
    for i in range(count):
        start, end = cuts[2 * i], cuts[2 * i + 1]
        new = [line() for _ in range(draw(st.integers(0 if end > start else 1, 3)))]
        found.append((start, end, new))
    return found


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[str], list[LineEdit], Callable[[], str]]:
    """A text (distinct lines: the run's hunks are found once), a run's edits of it and
    a maker of new distinct lines."""
    ids = itertools.count()
    words = st.text(alphabet="ab {}();", max_size=8)

    def line() -> str:
        return f"<{next(ids)}> {draw(words)}\n"

    lines = [line() for _ in range(draw(st.integers(0, 60)))]
    return lines, edits(draw, len(lines), line, 3), line


def window_of(before: str, after: str) -> EditWindow:
    return EditWindow.between(before, after)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(scenarios(), st.data())
def test_edits_elsewhere_are_kept_and_every_hunk_of_the_run_goes_back(
    scenario: tuple[list[str], list[LineEdit], Callable[[], str]], data: st.DataObject
) -> None:
    lines, run, line = scenario
    original, after_run = "".join(lines), apply(lines, run)
    assume(original != after_run)
    users = [e for e in edits(data.draw, len(lines), line, 3) if far_from(e, run)]
    assume(users)
    current = apply(lines, run + users)
    found = window_of(original, after_run).hunks()
    assert found
    result = revert_untouched(current, found)
    assert result.text == apply(lines, users)
    assert (result.reverted, result.kept) == (len(found), 0)


@settings(max_examples=300, deadline=None)
@given(scenarios(), st.data())
def test_a_hunk_whose_lines_the_user_changed_is_kept(
    scenario: tuple[list[str], list[LineEdit], Callable[[], str]], data: st.DataObject
) -> None:
    lines, run, line = scenario
    with_lines = [e for e in run if e[2]]
    assume(with_lines)
    original, after_run = "".join(lines), apply(lines, run)
    touched = data.draw(st.sampled_from(with_lines))
    at = data.draw(st.integers(0, len(touched[2]) - 1))
    mine = line()
    changed = [
        (s, e, new[:at] + [mine] + new[at + 1 :] if (s, e, new) == touched else new)
        for s, e, new in run
    ]
    current = apply(lines, changed)
    found = window_of(original, after_run).hunks()
    assert found
    result = revert_untouched(current, found)
    assert result.kept >= 1 and result.reverted + result.kept == len(found)
    assert mine in result.text  # the user's line is there, with the run's hunk around it
    assert all(new_line in result.text for new_line in touched[2] if new_line != touched[2][at])


def test_the_context_is_the_rest_of_the_lines_and_three_more_each_side() -> None:
    text = "".join(f"{i}\n" for i in range(10))
    start = text.index("5")
    lead, trail = context_around(text, start, start + 1)
    assert lead == "2\n3\n4\n" and trail == "\n6\n7\n8\n"
    cut = "x" * 5000 + "\n"
    lead, trail = context_around(cut + "y\n" + cut, len(cut), len(cut) + 1)
    assert len(lead) == 1024 and len(trail) == 1024


def test_a_large_window_records_no_context_and_is_undone_only_whole() -> None:
    big = "x" * HUNK_LIMIT
    window = EditWindow.between("a\n", "a\n" + big + "\n")
    assert window.lead is None and window.hunks() is None
    assert EditWindow.between("a\nb\n", "a\nc\n").hunks()


def test_a_hunk_whose_text_is_there_twice_is_kept() -> None:
    before = "x\n" * 8
    after = "x\n" * 4 + "y\n" + "x\n" * 4
    found = window_of(before, after).hunks()
    assert found is not None
    result = revert_untouched("x\n" * 4 + "y\n" + "x\n" * 12 + "y\n" + "x\n" * 4, found)
    assert (result.reverted, result.kept) == (0, 1)


async def test_two_edits_of_a_file_one_touched_since(tmp_path: Path) -> None:
    """The newer edit's hunk goes back, the older one the user typed in is kept, and so
    are the user's lines; undo says so."""
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "f.py"
    t0 = "".join(f"line {i}\n" for i in range(20))
    t1 = t0.replace("line 2\n", "LINE TWO\n")
    t2 = t1.replace("line 15\n", "LINE FIFTEEN\n")
    records = [
        EditRecord(
            run_id="r", uri=target.as_uri(), path=str(target), window=EditWindow.between(a, b)
        )
        for a, b in ((t0, t1), (t1, t2))
    ]
    users = t2.replace("LINE TWO\n", "LINE TWO, the user's\n").replace(
        "line 9\n", "line 9\nthe user's line\n"
    )
    target.write_text(users)
    result = await undo_edits(records, Workspace([root], NoBuffers()), DiskEditor())
    assert result.partial == [PartialUndo(uri=target.as_uri(), reverted_hunks=1, kept_hunks=1)]
    assert result.reverted == [] and result.conflicts == []
    assert target.read_text() == users.replace("LINE FIFTEEN\n", "line 15\n")


async def test_a_partial_undo_the_editor_refuses_is_a_conflict(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "f.py"
    before, after = "a\nb\nc\nd\ne\nf\ng\nh\n", "a\nB\nc\nd\ne\nf\ng\nh\n"
    record = EditRecord(
        run_id="r", uri=target.as_uri(), path=str(target), window=EditWindow.between(before, after)
    )
    target.write_text(after + "mine\n")

    class Refusing(DiskEditor):
        async def apply_edit(self, edit: FileEdit, label: str) -> EditOutcome:
            assert edit.changes == minimal_changes(edit.base_text, edit.new_text)
            assert edit.new_text == before + "mine\n"  # what it was asked to write
            return EditOutcome(applied=False, failure="the user said no")

    result = await undo_edits([record], Workspace([root], NoBuffers()), Refusing())
    assert result.conflicts == [target.as_uri()] and result.partial == []
    assert target.read_text() == after + "mine\n"
