"""What the edit path reads from an editor's answers and reports: ``applied_answer``, the
drift region shown to the model, and the hand-off of notes to the next tool result."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tether.host import BufferDrift, NoBuffers
from tether.lsp.editor import applied_answer
from tether.lsp.overlay import MAX_DRIFT_LINES, drift
from tether.lsp.prompt import fits_in_message, head_of
from tether.tools.base import ToolDeps, ToolResult
from tether.tools.registry import with_drift_notes
from tether.workspace.folders import Workspace


@pytest.mark.parametrize(
    ("raw", "applied"),
    [
        ({"applied": True}, True),
        ({"applied": True, "extra": 1}, True),
        ({"applied": False}, False),
        ({"applied": "false"}, False),
        ({"applied": "true"}, False),
        ({"applied": 1}, False),
        ({}, False),
        (None, False),
        ("yes", False),
        ([True], False),
    ],
)
def test_only_a_boolean_true_is_applied(raw: Any, applied: bool) -> None:
    assert applied_answer(raw)[0] is applied


def test_a_refusal_keeps_the_editors_reason() -> None:
    assert applied_answer({"applied": False, "failureReason": "read-only"}) == (False, "read-only")
    assert applied_answer({"applied": False, "failureReason": 3}) == (
        False,
        "the editor refused it",
    )
    assert "not understood" in (applied_answer({"applied": "no"})[1] or "")


def test_drift_shows_the_current_lines_that_differ_numbered_in_the_buffer() -> None:
    approved = "a\nb\nc\nd\n"
    current = "a\nb\nTYPED\nc\nd\n"
    found = drift(Path("/w/x.py"), approved, current)
    assert "TYPED" in found.lines and len(found.lines) <= 3  # at most a line around it
    assert "     3\tTYPED" in found.describe("x.py")  # numbered as in the buffer now


def test_drift_of_removed_lines_shows_where_they_were() -> None:
    found = drift(Path("/w/x.py"), "a\nb\nc\n", "a\nc\n")
    assert (found.first_line, found.lines) == (1, ("a", "c"))
    emptied = drift(Path("/w/x.py"), "a\n", "")
    assert emptied.lines == () and "the buffer is empty" in emptied.describe("x.py")


def test_drift_cuts_lines_as_the_editor_does() -> None:
    # A form feed or U+2028 ends no line (LSP): the typed line is one line, numbered so.
    found = drift(Path("/w/x.py"), "a\nb\nc\n", "a\nb\fB\u2028\nc\nTYPED\n")
    assert found.lines == ("b\fB\u2028", "c", "TYPED")
    assert "     4\tTYPED" in found.describe("x.py")


def test_drift_is_capped() -> None:
    current = "".join(f"new {n}\n" for n in range(500))
    found = drift(Path("/w/x.py"), "old\n", current)
    assert len(found.lines) == MAX_DRIFT_LINES and found.more_lines == 500 - MAX_DRIFT_LINES
    assert f"{500 - MAX_DRIFT_LINES} more lines" in found.describe("x.py")


class Reporting:
    """An editor with drift to report for one run."""

    def __init__(self, found: Sequence[BufferDrift]) -> None:
        self.found = {"run-1": list(found)}

    def take_drift(self, run_id: str) -> Sequence[BufferDrift]:
        return self.found.pop(run_id, [])


def test_drift_notes_reach_the_next_result_of_that_run_once(tmp_path: Path) -> None:
    editor = Reporting([BufferDrift(tmp_path / "x.py", 2, ("changed",))])
    ctx = ToolDeps(Workspace([tmp_path], NoBuffers()), "run-1", editor=editor)  # type: ignore[arg-type]
    other = ToolDeps(Workspace([tmp_path], NoBuffers()), "run-2", editor=editor)  # type: ignore[arg-type]
    result = ToolResult(ok=True, output="done")
    assert with_drift_notes(result, other) is result
    noted = with_drift_notes(result, ctx)
    assert noted.ok and noted.output.startswith("done\n\nNote: the editor reported x.py")
    assert "     2\tchanged" in noted.output
    assert with_drift_notes(result, ctx) is result


def test_a_message_prompt_shows_only_what_fits() -> None:
    assert fits_in_message("x" * 2000) and not fits_in_message("x" * 2001)
    assert not fits_in_message("x\n" * 40)
    long = "".join(f"line {n}\n" for n in range(100))
    head = head_of(long)
    assert "line 0" in head and "line 99" not in head and "more lines not shown" in head
