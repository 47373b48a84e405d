"""Approvals the server withdraws (``$/cancelRequest``) in a real Emacs with tether.el:
they close unanswered, in batch and with the minibuffer prompt open in ``emacs -nw``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .emacs_harness import (
    STORIES,
    answers,
    approvals_asked,
    proxied_story,
    tool_results,
    withdrawn_ids,
)

WITHDRAW_STORY = STORIES / "withdraw-story.el"
EDIT = {"path": "src/app.py", "old_text": "'hello '", "new_text": "'hi '"}
WRITE = {"path": "notes/after.txt", "content": "later\n"}


def withdrawn_story(
    tmp_path: Path, how: str, turns: dict[str, Any], *, terminal: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run withdraw-story.el (``how``: timeout or cancel; in ``emacs -nw`` with the
    minibuffer prompt open when ``terminal``); its report and the wire."""
    extra = {"TETHER_WITHDRAW": how, **({"TETHER_READ": "1"} if terminal else {})}
    return proxied_story(tmp_path, WITHDRAW_STORY, turns, extra, terminal=terminal)


TIMEOUT_TURNS = {
    "turns": [
        {"toolCalls": [{"name": "edit_file", "arguments": EDIT}]},
        {"toolCalls": [{"name": "write_file", "arguments": WRITE}]},
        {"text": "Wrote the note instead."},
    ]
}


@pytest.mark.parametrize("terminal", [False, True], ids=["batch", "minibuffer-open"])
def test_an_approval_that_times_out_closes_unanswered_and_the_next_one_works(
    tmp_path: Path, terminal: bool
) -> None:
    report, wire = withdrawn_story(tmp_path, "timeout", TIMEOUT_TURNS, terminal=terminal)
    first, second = approvals_asked(wire)
    assert answers(wire, first["id"]) == []  # Emacs never answered the withdrawn request
    assert "error" not in report, report
    assert report["firstShown"] is True and report["toldWithdrawn"] is True, report
    # The withdrawn prompt is gone (the next approval may already be shown in its place).
    assert "'hi '" not in (report["shownAfterWithdraw"] or ""), report
    assert "Edit src/app.py" not in report["pendingAfterWithdraw"], report
    assert "Tether: approval withdrawn" in report["messages"]
    assert first["params"]["title"] == "Edit src/app.py"
    assert withdrawn_ids(wire) == [first["id"]]
    [answer] = answers(wire, second["id"])
    assert answer["result"]["decision"] == "allow"
    denied, written = tool_results(wire)
    assert denied["ok"] is False and "No one answered the approval" in denied["output"], denied
    assert written["ok"] is True
    assert report["outcome"] == "done", report
    assert (tmp_path / "ws" / "notes" / "after.txt").read_text() == "later\n"
    assert (tmp_path / "ws" / "src" / "app.py").read_text().count("'hello '") == 1
    if terminal:  # the open `M-x tether-approve' prompt was closed by the withdrawal
        assert (report["readFrom"], report["readClosed"]) == (0, 0), report


def test_cancelling_the_run_closes_its_approval_unanswered(tmp_path: Path) -> None:
    turns = {"turns": [{"toolCalls": [{"name": "edit_file", "arguments": EDIT}]}]}
    report, wire = withdrawn_story(tmp_path, "cancel", turns)
    # The approval buffer's keys are Tether's, not diff-mode's (`A' ediff, `q' quit-window).
    assert report["keys"] == [
        "tether-approval-allow",
        "tether-approval-allow-always",
        "tether-approval-deny",
        "tether-approval-quit",
    ], report
    [asked] = approvals_asked(wire)
    # Not even the `a' pressed after the run ended answers it.
    assert answers(wire, asked["id"]) == []
    assert "error" not in report, report
    assert report["firstShown"] is True and report["toldWithdrawn"] is True, report
    assert report["shownAfterWithdraw"] is False and report["pendingAfterWithdraw"] == []
    assert report["outcome"] == "cancelled", report
    assert withdrawn_ids(wire) == [asked["id"]]
    assert "Tether: no approval is waiting" in report["messages"]
    assert (tmp_path / "ws" / "src" / "app.py").read_text().count("'hello '") == 1
