"""Rewinding from a real Neovim: ``:TetherRewind`` lists the session's checkpoints
(``agent/checkpoints``) with ``vim.ui.select``, asks what to restore, sends
``agent/rewind`` and says what came back and what conflicted; a conflict can be forced as
a second step. Restored files reach the open buffer through the server's edit path."""

from __future__ import annotations

from .conftest import APP, Nvim, app_project, call, env, script

EDIT = call("edit_file", path="src/app.py", old_text="'hello '", new_text="'hi '")
BASH = call("bash", command="echo more >> README.md && rm notes.txt # \x1b[2J\u202e")
TURNS = script({"toolCalls": [EDIT]}, {"toolCalls": [BASH]}, {"text": "done"})


def _project(nvim: Nvim) -> None:
    app_project(nvim)
    (nvim.workspace / "notes.txt").write_text("keep me\n")


def test_rewinding_to_before_the_edit_restores_the_buffer_and_the_disk(nvim: Nvim) -> None:
    _project(nvim)
    r = nvim.run("rewind", script=TURNS, env=env(PICK=2, RESTORE=2))
    assert r["after_run"]["app"] == APP.replace("hello", "hi").rstrip("\n")
    checkpoints, restore = r["selects"]
    assert checkpoints["prompt"] == "Tether: rewind to before"
    newest, oldest = checkpoints["items"]
    assert newest.startswith("step 2 · ") and "echo more >> README.md" in newest, newest
    assert "README.md (modified)" in newest and "notes.txt (deleted)" in newest, newest
    assert "\\x1b[2J\\u202e" in newest and "\x1b" not in newest and "\u202e" not in newest
    assert oldest.startswith("step 1 · ") and "src/app.py (modified)" in oldest, oldest
    assert restore["items"] == ["files and conversation", "files only", "conversation only"]
    assert r["buffer"] == APP.splitlines() and not r["modified"]
    assert r["disk"] == {"app": APP, "readme": "# demo\n", "notes": "keep me\n"}
    [note] = r["notes"]
    assert note.startswith("Tether: rewound to before step 1: 3 files restored"), note
    for path in ("src/app.py", "README.md", "notes.txt"):
        assert path in note


def test_unsaved_typing_is_a_conflict_kept_then_forced(nvim: Nvim) -> None:
    _project(nvim)
    typed = "# the user's unsaved line"
    r = nvim.run("rewind", script=TURNS, env=env(PICK=2, RESTORE=2, TYPE=typed, FORCE=2))
    first, forced = r["notes"]
    assert "conflict: src/app.py" in first and "kept as you have it" in first, first
    assert "2 files restored" in first, first
    force = r["selects"][2]
    assert force["prompt"].startswith("Tether: 1 file conflicted")
    assert force["items"] == ["keep mine", "force: put the checkpoint's version back"]
    assert "1 file restored" in forced and "src/app.py" in forced, forced
    assert r["buffer"] == APP.splitlines()
    assert r["disk"]["readme"] == "# demo\n" and r["disk"]["notes"] == "keep me\n"


def test_keeping_a_conflict_leaves_the_typing(nvim: Nvim) -> None:
    _project(nvim)
    typed = "# the user's unsaved line"
    r = nvim.run("rewind", script=TURNS, env=env(PICK=2, RESTORE=2, TYPE=typed, FORCE=1))
    assert r["buffer"][-1] == typed and r["modified"]
    assert r["disk"]["readme"] == "# demo\n" and r["disk"]["notes"] == "keep me\n"
    [note] = r["notes"]
    assert "conflict: src/app.py" in note and "2 files restored" in note, note
