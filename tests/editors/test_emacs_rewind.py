"""Rewinding from a real ``emacs -nw`` (in tmux): ``M-x tether-rewind`` lists the last
run's checkpoints (``agent/checkpoints``) with ``completing-read``, asks what to restore,
sends ``agent/rewind`` and says what came back; unsaved typing in the buffer of a file to
restore is a conflict, kept, then forced when the user says so."""

from __future__ import annotations

from pathlib import Path

from .emacs_tmux import EmacsInTmux
from .test_emacs_commands import requests
from .test_emacs_keys import APP, emacs_with_keys, start_run, wire_of

BASH = "echo more >> README.md && rm notes.txt"
EDIT = {"path": "src/app.py", "old_text": "'hello '", "new_text": "'hi '"}
TURNS = {
    "turns": [
        {"toolCalls": [{"name": "edit_file", "arguments": EDIT}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": BASH}}]},
        {"text": "Done."},
    ]
}


def _run_both_steps(emacs: EmacsInTmux, ws: Path) -> None:
    (ws / "README.md").write_text("# demo\n")
    (ws / "notes.txt").write_text("keep me\n")
    start_run(emacs, "go")
    emacs.wait_for("Tether wants to")
    emacs.keys("C-x", "o")
    emacs.keys("a")
    emacs.wait_for("Tether wants to: Run echo more")
    emacs.keys("a")
    emacs.wait_for("Tether done")
    assert (ws / "src" / "app.py").read_text() == APP.replace("hello", "hi")
    assert not (ws / "notes.txt").exists()


def _rewind_to_the_edit(emacs: EmacsInTmux) -> str:
    emacs.command("tether-rewind")
    listing = emacs.wait_for("rewind to before:")
    emacs.type("step 1")
    emacs.keys("Tab")
    emacs.wait_for("src/app.py (modified)")
    emacs.keys("Enter")
    emacs.wait_for("restore:")
    emacs.type("files o")
    emacs.keys("Tab", "Enter")
    return listing


def test_tether_rewind_puts_back_the_edit_and_the_commands_changes(tmp_path: Path) -> None:
    with emacs_with_keys(tmp_path, TURNS) as (emacs, folder):
        ws = folder / "ws"
        _run_both_steps(emacs, ws)
        emacs.keys("C-x", "1")
        _rewind_to_the_edit(emacs)
        screen = emacs.wait_for("rewound to before step 1: 3 files restored")
        assert "return 'hello ' + name" in emacs.wait_for("'hello '"), screen
        assert (ws / "src" / "app.py").read_text() == APP
        assert (ws / "README.md").read_text() == "# demo\n"
        assert (ws / "notes.txt").read_text() == "keep me\n"
    [rewind] = requests(wire_of(folder), "agent/rewind")
    assert rewind["restore"] == "files" and "force" not in rewind
    [listed] = requests(wire_of(folder), "agent/checkpoints")
    assert listed["sessionId"] == rewind["sessionId"]


def test_unsaved_typing_is_a_conflict_kept_then_forced(tmp_path: Path) -> None:
    with emacs_with_keys(tmp_path, TURNS) as (emacs, folder):
        ws = folder / "ws"
        _run_both_steps(emacs, ws)
        emacs.keys("C-x", "1")
        emacs.keys("M->")
        emacs.type("# mine")
        _rewind_to_the_edit(emacs)
        emacs.wait_for("conflicted (src/app.py)")
        assert (ws / "README.md").read_text() == "# demo\n"
        assert (ws / "notes.txt").read_text() == "keep me\n"
        assert "# mine" in emacs.screen()  # kept as the user has it
        emacs.type("force")
        emacs.keys("Tab", "Enter")
        emacs.wait_for("rewound to before step 1: 1 file restored (src/app.py)")
        screen = emacs.wait_for("'hello '")
        assert "# mine" not in screen
    first, forced = requests(wire_of(folder), "agent/rewind")
    assert forced == {**first, "restore": "files", "force": True}
