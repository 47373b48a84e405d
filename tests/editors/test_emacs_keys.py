"""Approvals in a real ``emacs -nw`` (in tmux) answered with keys, as a user does: two in
a row with ``a`` each, none of them typed into the user's buffer; ``d`` asks for a
reason and the model gets it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .emacs_harness import PROXY, STORIES, answers, approvals_asked, story_env, tool_results
from .emacs_tmux import EmacsInTmux, wait_for_report

KEYS_STORY = STORIES / "keys-story.el"
APP = "def greet(name):\n    return 'hello ' + name\n"


@contextmanager
def emacs_with_keys(
    tmp_path: Path, turns: dict[str, Any], extra: dict[str, str] | None = None
) -> Iterator[tuple[EmacsInTmux, Path]]:
    """keys-story.el in tmux on a fresh project, the server behind the wire recorder;
    the Emacs and the folder holding ``result.json`` and ``wire.jsonl``."""
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(APP)
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    env = story_env(tmp_path, root, turns)
    env.update(TETHER_PROXY=str(PROXY), TETHER_PROXY_LOG=str(tmp_path / "wire.jsonl"))
    env.update(extra or {})
    emacs = EmacsInTmux(tmp_path, KEYS_STORY, env)
    try:
        emacs.wait_for("keys-story: ready")  # Emacs reads the keyboard from here on
        yield emacs, tmp_path
    finally:
        emacs.close()


def wire_of(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "wire.jsonl").read_text().splitlines()]


def start_run(emacs: EmacsInTmux, prompt: str) -> None:
    """``M-x tether-run RET prompt RET`` from the user's buffer."""
    emacs.command("tether-run")
    emacs.wait_for("\nTether:")
    emacs.type(prompt)
    emacs.keys("Enter")


NOTE = {"path": "notes/one.txt", "content": "one\n"}
TWO_IN_A_ROW = {
    "turns": [
        {"toolCalls": [{"name": "write_file", "arguments": NOTE}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo two"}}]},
        {"text": "Wrote one, ran two."},
    ]
}


def test_two_approvals_in_a_row_answered_with_a_never_type_into_the_users_buffer(
    tmp_path: Path,
) -> None:
    # A short timeout: a key that missed the second approval still lets the run end.
    with emacs_with_keys(tmp_path, TWO_IN_A_ROW, {"TETHER_APPROVAL_TIMEOUT": "10"}) as (
        emacs,
        folder,
    ):
        start_run(emacs, "write a note and run two")
        emacs.wait_for("Tether wants to: Create notes/one.txt")
        emacs.keys("C-x", "o")  # the user goes to the approval's window...
        emacs.keys("a")  # ...and allows it
        emacs.wait_for("Tether wants to: Run echo two")
        emacs.keys("a")  # the next approval, with the same key
        emacs.wait_for("Tether done")
        report = wait_for_report(folder / "result.json", runs=1)
    # No key went into a buffer: both answered the approvals.
    assert report["typed"] == [], report["typed"]
    assert report["appBuffer"] == APP and report["appModified"] is False
    wire = wire_of(folder)
    first, second = approvals_asked(wire)
    assert [a["result"]["decision"] for a in answers(wire, first["id"])] == ["allow"]
    assert [a["result"]["decision"] for a in answers(wire, second["id"])] == ["allow"]
    assert report["outcome"] == "done", report
    assert (folder / "ws" / "notes" / "one.txt").read_text() == "one\n"
    # Nothing took the focus from the user's buffer; once they answered in the approval's
    # window, the next approval came there.
    assert report["selectedAtApproval"] == ["app.py", "*tether-approval*"], report
    # The echo area said how to go to the first approval.
    assert (
        "Tether wants to: Create notes/one.txt — M-x tether-goto-approval to answer it"
        in report["messages"]
    )


def test_d_asks_for_a_reason_and_the_model_gets_it(tmp_path: Path) -> None:
    turns = {
        "turns": [
            {"toolCalls": [{"name": "write_file", "arguments": NOTE}]},
            {"text": "Understood."},
        ]
    }
    with emacs_with_keys(tmp_path, turns) as (emacs, folder):
        start_run(emacs, "write a note")
        emacs.wait_for("Tether wants to: Create notes/one.txt")
        emacs.command("tether-goto-approval")  # what the echo area says to do
        emacs.wait_for("a allow · A always · d deny")
        emacs.keys("d")
        emacs.wait_for("why? (for the model, RET for no reason)")
        emacs.type("put it in docs/ instead")
        emacs.keys("Enter")
        emacs.wait_for("Tether done")
        report = wait_for_report(folder / "result.json", runs=1)
    wire = wire_of(folder)
    [asked] = approvals_asked(wire)
    [answer] = answers(wire, asked["id"])
    assert answer["result"] == {"decision": "deny", "feedback": "put it in docs/ instead"}
    [result] = tool_results(wire)
    assert result["ok"] is False
    assert "the user denied it" in result["output"]
    assert "The user said: put it in docs/ instead" in result["output"]
    assert not (folder / "ws" / "notes" / "one.txt").exists()
    assert report["typed"] == [] and report["appBuffer"] == APP
