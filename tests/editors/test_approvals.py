"""Approvals in a real Neovim: the inline view and the float, answered with their keys."""

from __future__ import annotations

import time
from typing import Any

from ..waiting import wait_until_sync
from .conftest import APP, Nvim, app_project, call, decisions, env, script, tool_results
from .test_chat import NvimInTmux

HINT = " Tether: Edit src/app.py   <leader>ta or :TetherApprove to decide "
FOOTER = " a allow · A always `src/app.py` · r always `src/*.py` · d deny · e edit · q deny "
"""The server's suggestedPatterns for the edit: `A` the file, `r` the folder's Python files."""
GO = "<leader>ta"  # the default key of :TetherApprove: enters the approval's float
EDIT = call("edit_file", path="src/app.py", old_text="'hello '", new_text="'hi '")


TYPED = ["def greet(name):", "    return 'hello ' + name", "# typed by the user, unsaved"]


def assert_nothing_left(r: Any) -> None:
    assert r["marks_after"] == [] and r["floats_after"] == 0 and r["pending_after"] is False


def test_inline_allow_lands_as_one_undoable_change(nvim: Nvim) -> None:
    app = app_project(nvim)
    r = nvim.run(
        "approve",
        script({"text": "Shorter.", "toolCalls": [EDIT]}),
        env(OPEN="src/app.py", MODIFY=TYPED, KEYS=[GO + "a"], UNDO="1"),
    )
    [shown] = r["shown"]
    assert shown["view"] == "inline" and shown["in_view"] is True
    assert shown["cursor"] == [1, 0]  # where the user left it: the approval moves nothing
    assert shown["user_maps"] == []  # no decision key in the user's buffer
    assert shown["statusline"] == "Tether: approve Edit src/app.py"
    assert shown["marks"] == [
        {"row": 1, "line_hl_group": "TetherRemoved", "above": False},
        {"row": 1, "virt_lines": [[[HINT, "TetherHint"]]], "above": True},
        {"row": 1, "virt_lines": [[["    return 'hi ' + name", "TetherAdded"]]], "above": False},
    ]
    run = r["run"]
    assert run["result"]["outcome"] == "done" and decisions(run) == ["allow"]
    assert run["result"]["changedFiles"] == [app.as_uri()]
    assert r["buffer_after"] == ["def greet(name):", "    return 'hi ' + name", TYPED[2]]
    assert r["disk_after"] == r["buffer_after"]  # agent/saveDocuments wrote it
    assert r["modified_after"] is False
    assert r["buffer_undone"] == TYPED  # only the agent's change is undone
    assert_nothing_left(r)
    assert "a" not in r["buffer_maps_after"] and "d" not in r["buffer_maps_after"]


def test_inline_marks_each_hunk_the_server_sent(nvim: Nvim) -> None:
    app_project(nvim)
    lines = ["one", "two", "three", "four", "five"]
    rewrite = call("write_file", path="src/app.py", content="ONE\ntwo\nthree\nfour\nFIVE\n")
    r = nvim.run(
        "approve",
        script({"toolCalls": [rewrite]}),
        env(OPEN="src/app.py", MODIFY=lines, KEYS=[GO + "a"]),
    )
    [shown] = r["shown"]
    hint = HINT.replace("Edit src/app.py", "Overwrite src/app.py")
    # Two changes, each marked where it is; the three lines between them are left alone.
    assert shown["view"] == "inline" and shown["marks"] == [
        {"row": 0, "line_hl_group": "TetherRemoved", "above": False},
        {"row": 0, "virt_lines": [[[hint, "TetherHint"]]], "above": True},
        {"row": 0, "virt_lines": [[["ONE", "TetherAdded"]]], "above": False},
        {"row": 4, "line_hl_group": "TetherRemoved", "above": False},
        {"row": 4, "virt_lines": [[["FIVE", "TetherAdded"]]], "above": False},
    ]
    assert r["buffer_after"] == ["ONE", "two", "three", "four", "FIVE"]
    assert_nothing_left(r)


def test_inline_marks_an_older_servers_window_as_one_change(nvim: Nvim) -> None:
    # No proposed.hunks: the window less its unchanged first and last lines is one change.
    lines = ["keep", "one", "two", "three", "keep"]
    window = {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}}
    preview = {
        "kind": "diff",
        "uri": "file:///w/a.txt",
        "diff": "",
        "proposed": {
            "range": window,
            "baseText": "keep\none\ntwo\nthree\nkeep\n",
            "text": "keep\nONE\ntwo\nTHREE\nkeep\n",
        },
    }
    params = {"title": "Edit a.txt", "tool": "edit_file", "preview": preview}
    r = nvim.run("preview", env=env(LINES=lines, PARAMS=params))
    added = [[["ONE", "TetherAdded"]], [["two", "TetherAdded"]], [["THREE", "TetherAdded"]]]
    assert r["view"] == "inline" and r["marks"] == [
        {"row": 1, "line_hl_group": "TetherRemoved", "above": False},
        {"row": 1, "virt_lines": [[[" Tether: Edit a.txt   hint ", "TetherHint"]]], "above": True},
        {"row": 2, "line_hl_group": "TetherRemoved", "above": False},
        {"row": 3, "line_hl_group": "TetherRemoved", "above": False},
        {"row": 3, "virt_lines": added, "above": False},
    ]


def test_float_deny_with_feedback_changes_nothing(nvim: Nvim) -> None:
    app = app_project(nvim)
    r = nvim.run(
        "approve",
        script({"toolCalls": [EDIT]}),
        env(OPEN="README.md", KEYS=[GO + "d"], INPUTS=["keep hello"]),
    )
    [shown] = r["shown"]  # src/app.py is not on screen: a float with the diff
    assert shown["view"] == "float" and shown["marks"] == []
    assert shown["in_view"] is False and shown["current_is_float"] is False  # focus stays
    assert shown["title"] == [[" Tether: Edit src/app.py "]]
    assert shown["keys"] == FOOTER
    assert shown["float_lines"] == [
        "--- a/src/app.py",
        "+++ b/src/app.py",
        "@@ -1,2 +1,2 @@",
        " def greet(name):",
        "-    return 'hello ' + name",
        "+    return 'hi ' + name",
    ]
    assert r["inputs"] == ["Tether: deny — feedback for the model (optional): "]
    run = r["run"]
    assert decisions(run) == ["deny"] and run["result"]["changedFiles"] == []
    [result] = tool_results(run)
    assert result["ok"] is False
    assert "denied" in result["output"] and "keep hello" in result["output"]
    assert app.read_text() == APP
    assert_nothing_left(r)


def test_allow_always_of_a_write_allows_that_file_for_the_session(nvim: Nvim) -> None:
    app_project(nvim)

    def write(path: str, content: str) -> dict[str, Any]:
        return call("write_file", path=path, content=content)

    r = nvim.run(
        "approve",
        script(
            {"toolCalls": [write("notes/a.txt", "one\n")]},
            {"toolCalls": [write("notes/a.txt", "two\n")]},
            {"toolCalls": [write("notes/b.txt", "three\n")]},
        ),
        env(OPEN="README.md", KEYS=[GO + "A", GO + "a"]),
    )
    # asked for a.txt (A: the file, the narrowest rule the server offers), then for b.txt
    assert [(s["tool"], s["view"]) for s in r["shown"]] == [("write_file", "float")] * 2
    assert r["shown"][0]["title"] == [[" Tether: Create notes/a.txt "]]
    assert r["shown"][0]["keys"] == (
        " a allow · A always `notes/a.txt` · r always `notes/*.txt` · d deny · e edit · q deny "
    )
    run = r["run"]
    assert decisions(run) == ["allow-always", "auto", "allow"]
    # sent as the file's rule, so :TetherRules shows it and can revoke it
    [_, auto, _] = [e for e in run["events"] if e["kind"] == "approval"]
    rule = {"tool": "write_file", "pattern": "notes/a.txt", "decision": "allow", "scope": "session"}
    assert auto["rules"] == [rule]
    assert [e["ok"] for e in tool_results(run)] == [True, True, True], tool_results(run)
    assert (nvim.workspace / "notes" / "a.txt").read_text() == "two\n"
    assert (nvim.workspace / "notes" / "b.txt").read_text() == "three\n"
    assert_nothing_left(r)


def test_allow_always_of_a_command_stores_the_exact_command(nvim: Nvim) -> None:
    app_project(nvim)
    once, other = call("bash", command="python3 -m platform"), call("bash", command="python3 -V")
    r = nvim.run(
        "approve",
        script({"toolCalls": [once]}, {"toolCalls": [once]}, {"toolCalls": [other]}),
        env(OPEN="README.md", KEYS=[GO + "A", GO + "a"]),
    )
    # An interpreter's module: the server offers its exact command only, so no `r` (issue 24)
    assert r["shown"][0]["keys"] == (
        " a allow · A always (this exact command) · d deny · e edit · q deny "
    )
    run = r["run"]
    assert decisions(run) == ["allow-always", "auto", "allow"]  # another command: asked
    [_, auto, _] = [e for e in run["events"] if e["kind"] == "approval"]
    pattern = "python3 -m platform"
    assert auto["rules"] == [
        {"tool": "bash", "pattern": pattern, "decision": "allow", "scope": "session"}
    ]
    assert [e["ok"] for e in tool_results(run)] == [True, True, True], tool_results(run)
    assert_nothing_left(r)


def test_edit_before_allow_sends_the_saved_text(nvim: Nvim) -> None:
    app = app_project(nvim)
    r = nvim.run(
        "approve",
        script({"toolCalls": [EDIT]}),
        env(OPEN="src/app.py", KEYS=[GO + "e"], EDIT_LINES=["    return 'good day ' + name"]),
    )
    [shown] = r["shown"]
    assert shown["view"] == "inline"
    assert shown["edit_name"] == "tether://edit/call_1_1/proposed"
    assert shown["edit_lines"] == ["    return 'hi ' + name"]  # the preview's changed window
    assert shown["marks_while_editing"] == 0  # the inline view is hidden while editing
    run = r["run"]
    assert decisions(run) == ["allow"]
    [result] = tool_results(run)
    assert result["ok"] is True and "the user changed this call" in result["output"]
    assert r["buffer_after"] == ["def greet(name):", "    return 'good day ' + name"]
    assert app.read_text() == "def greet(name):\n    return 'good day ' + name\n"
    assert_nothing_left(r)


def test_edit_before_allow_of_a_command(nvim: Nvim) -> None:
    app_project(nvim)
    r = nvim.run(
        "approve",
        script({"toolCalls": [call("bash", command="echo proposed")]}),
        env(KEYS=[GO + "e"], EDIT_LINES=["echo edited"]),
    )
    [shown] = r["shown"]
    assert shown["view"] == "float"
    assert shown["float_lines"] == ["$ echo proposed", "", f"in {nvim.workspace}"]
    assert shown["edit_lines"] == ["echo proposed"]
    [result] = tool_results(r["run"])
    assert result["ok"] is True
    assert "edited" in result["output"] and "proposed\n" not in result["output"]
    assert_nothing_left(r)


def test_edit_before_allow_of_a_new_file_keeps_its_final_newline(nvim: Nvim) -> None:
    app_project(nvim)
    r = nvim.run(
        "approve",
        script({"toolCalls": [call("write_file", path="new.txt", content="one\ntwo\n")]}),
        env(KEYS=[GO + "e"], EDIT_LINES=["uno", "dos"]),
    )
    [shown] = r["shown"]
    assert shown["edit_name"] == "tether://edit/call_1_1/proposed"
    assert shown["edit_lines"] == ["one", "two"]
    assert [e["ok"] for e in tool_results(r["run"])] == [True]
    assert (nvim.workspace / "new.txt").read_text() == "uno\ndos\n"
    assert_nothing_left(r)


def test_an_auto_approved_edit_is_its_own_undo_step(nvim: Nvim) -> None:
    app_project(nvim)
    r = nvim.run(
        "approve",
        script({"toolCalls": [EDIT]}),
        env(OPEN="src/app.py", MODIFY=TYPED, UNDO="1", SETTINGS={"autoApprove": ["edit_file"]}),
    )
    assert r["shown"] == []
    assert r["buffer_after"] == ["def greet(name):", "    return 'hi ' + name", TYPED[2]]
    assert r["buffer_undone"] == TYPED  # the user's typing is not undone with it


def test_save_documents_writes_the_buffer_before_a_command_runs(nvim: Nvim) -> None:
    app = app_project(nvim)
    typed = ["def greet(name):", "    return 'hello ' + name", "# typed, not saved"]
    r = nvim.run(
        "approve",
        script({"toolCalls": [EDIT]}, {"toolCalls": [call("bash", command="cat src/app.py")]}),
        env(OPEN="src/app.py", MODIFY=typed, SETTINGS={"autoApprove": ["edit_file", "bash"]}),
    )
    assert r["shown"] == []  # auto-approved
    expected = ["def greet(name):", "    return 'hi ' + name", "# typed, not saved"]
    assert r["buffer_after"] == expected and r["modified_after"] is False
    assert app.read_text() == "\n".join(expected) + "\n"
    bash = tool_results(r["run"])[1]
    assert bash["output"].splitlines()[1:4] == expected  # the command saw the editor's text


def test_closing_the_float_denies(nvim: Nvim) -> None:
    app_project(nvim)
    marker = nvim.workspace / "ran.txt"
    r = nvim.run(
        "approve",
        script({"toolCalls": [call("bash", command=f"touch {marker}")]}),
        env(KEYS=[GO + "q"]),
    )
    assert [s["view"] for s in r["shown"]] == ["float"]
    assert decisions(r["run"]) == ["deny"] and r["inputs"] == []  # no feedback asked
    assert not marker.exists()
    assert_nothing_left(r)


def test_abandoning_edit_before_allow_shows_the_approval_again(nvim: Nvim) -> None:
    app = app_project(nvim)
    r = nvim.run(
        "approve", script({"toolCalls": [EDIT]}), env(OPEN="src/app.py", KEYS=[GO + "e", GO + "a"])
    )
    assert [s["view"] for s in r["shown"]] == ["inline", "inline"]
    assert r["shown"][1]["marks"] == r["shown"][0]["marks"]
    assert decisions(r["run"]) == ["allow"]
    assert app.read_text() == "def greet(name):\n    return 'hi ' + name\n"
    assert_nothing_left(r)


def test_allow_always_with_the_files_rule_covers_the_next_edit_of_such_a_file(nvim: Nvim) -> None:
    app_project(nvim)
    (nvim.workspace / "src" / "util.py").write_text("X = 1\n")
    other = call("edit_file", path="src/util.py", old_text="X = 1", new_text="X = 2")
    r = nvim.run(
        "approve",
        script({"toolCalls": [EDIT]}, {"toolCalls": [other]}),
        env(OPEN="README.md", KEYS=[GO + "r"], INPUTS=["<default>"]),
    )
    assert [s["view"] for s in r["shown"]] == ["float"]  # the second edit was not asked
    assert r["input_defaults"] == ["src/*.py"]  # the folder and extension of the file
    run = r["run"]
    assert decisions(run) == ["allow-always", "auto"]
    [_, auto] = [e for e in run["events"] if e["kind"] == "approval"]
    rule = {"tool": "edit_file", "pattern": "src/*.py", "decision": "allow", "scope": "session"}
    assert auto["rules"] == [rule]
    assert (nvim.workspace / "src" / "util.py").read_text() == "X = 2\n"
    assert_nothing_left(r)


FIVE = ["one", "two", "three", "four", "five"]
REWRITE = call("write_file", path="src/app.py", content="ONE\ntwo\nthree\nfour\nFIVE\n")
DIFF = [
    "--- a/src/app.py",
    "+++ b/src/app.py",
    "@@ -1,5 +1,5 @@",
    "-one",
    "+ONE",
    " two",
    " three",
    " four",
    "-five",
    "+FIVE",
]


def hunks(nvim: Nvim, steps: list[str], open_: str = "src/app.py") -> Any:
    """The two-change rewrite of src/app.py (FIVE on disk) decided with ``steps``."""
    app = nvim.workspace / "src" / "app.py"
    if not app.exists():
        app_project(nvim)
    app.write_text("\n".join(FIVE) + "\n")
    return nvim.run(
        "hunks",
        script({"toolCalls": [REWRITE]}, {"text": "Noted."}),
        env(OPEN=open_, STEPS=steps),
    )


def test_float_accepts_one_change_and_rejects_the_other(nvim: Nvim) -> None:
    r = hunks(nvim, ["h", "n", "y"])  # the edited file is on screen: inline, then its float
    assert r["view"] == "inline" and r["marks"] > 0
    entered = r["entered"]
    assert entered["entered"] is True and entered["lines"] == DIFF
    # The first change is current: marked, highlighted, the cursor on it; the keys say
    # how to walk the changes.
    assert entered["labels"] == [[4, "  ◀ change 1 of 2"]] and entered["cursor"] == 4
    assert entered["highlighted"] == [[4, 5]]
    assert entered["keys"].endswith(
        "· q deny · change 1 of 2 · h next change · y accept · n reject "
    )
    after_h, after_n, after_y = r["steps"]
    assert after_h["labels"] == [[9, "  ◀ change 2 of 2"]] and after_h["cursor"] == 9
    assert after_h["highlighted"] == [[9, 10]]
    # `n` rejected the second: back to the first, still undecided.
    assert after_n["labels"] == [[4, "  ◀ change 1 of 2"], [9, "  ✗ change 2 rejected"]]
    assert after_n["keys"].endswith(" · 0 of 2 accepted ")
    # The file no longer marks the rejected change: it shows what the file will keep.
    assert [m["row"] for m in entered["inline"]] == [0, 0, 0, 4, 4]
    assert [m["row"] for m in after_n["inline"]] == [0, 0, 0]
    assert after_y is None  # every change decided: answered, the float closed
    run = r["run"]
    assert decisions(run) == ["allow"]
    [result] = tool_results(run)
    # The model is told what ran: the user's version, the first change alone.
    assert result["output"].startswith("Note: the user changed this call before allowing it")
    assert r["buffer_after"] == ["ONE", "two", "three", "four", "five"]
    assert r["disk_after"] == r["buffer_after"]
    assert r["marks_after"] == [] and r["floats_after"] == 0


def test_float_every_change_accepted_is_a_plain_allow_none_a_deny(nvim: Nvim) -> None:
    r = hunks(nvim, ["y", "y"], open_="README.md")  # not on screen: the float alone
    assert r["view"] == "float" and r["marks"] == 0
    assert r["steps"][0]["labels"] == [[4, "  ✓ change 1 accepted"], [9, "  ◀ change 2 of 2"]]
    assert r["steps"][0]["keys"].endswith(" · 1 of 2 accepted ")
    [result] = tool_results(r["run"])
    assert decisions(r["run"]) == ["allow"] and "Note: the user changed" not in result["output"]
    assert (nvim.workspace / "src" / "app.py").read_text() == "ONE\ntwo\nthree\nfour\nFIVE\n"

    r = hunks(nvim, ["n", "n"], open_="README.md")
    assert decisions(r["run"]) == ["deny"]
    [result] = tool_results(r["run"])
    assert result["ok"] is False and "denied" in result["output"]
    assert (nvim.workspace / "src" / "app.py").read_text() == "\n".join(FIVE) + "\n"


WIDE_OLD = "# " + "old " * 30 + "END-OLD"
WIDE_NEW = "x = '" + "new " * 30 + "END-NEW'"


def test_on_an_80_column_terminal_the_float_wraps_and_marks_the_first_change(
    nvim: Nvim,
) -> None:
    # Lines wider than the editor, in both changes: the float wraps them, and the first
    # change is the current one as soon as the float is entered, so `h` goes to the second.
    app = nvim.workspace / "src" / "app.py"
    if not app.exists():
        app_project(nvim)
    app.write_text("\n".join([WIDE_OLD, *FIVE[1:]]) + "\n")
    rewrite = call("write_file", path="src/app.py", content=f"ONE\ntwo\nthree\nfour\n{WIDE_NEW}\n")
    scenario = env(OPEN="README.md", WATCHDOG_MS="60000")
    command, full_env, out, marker = nvim.prepare(
        "float_screen", script({"toolCalls": [rewrite]}, {"text": "Noted."}), scenario
    )
    command.remove("--headless")
    started = time.monotonic()
    term = NvimInTmux(nvim.tmp_path, command, full_env, nvim.workspace, size=(80, 24))
    try:
        term.wait_for("float-screen: ready")
        term.type(":Tether make the change")
        term.keys("Enter")
        term.wait_for("Tether: Overwrite src/app.py")
        term.type("\\ta")  # <leader>ta: into the float
        screen = term.wait_for("q deny · change 1 of 2")  # the keys name the current one
        rows = screen.splitlines()
        assert all(len(row) <= 80 for row in rows)
        # Every character of the wide lines is on the screen, wrapped inside the float.
        shown = "".join(row.strip("│ ") for row in rows)
        assert "END-OLD" in shown and "END-NEW'" in shown, screen
        # Each key of the hint is on the screen, none cut at the edge.
        for key in ("a allow", "d deny", "e edit", "q deny", "h next change", "n reject"):
            assert key in screen, screen
        assert "◀ change 1 of 2" in screen  # and its line says it, where it fits
        term.type("h")
        screen = term.wait_for("◀ change 2 of 2")
        assert "change 1 of 2" not in screen and "q deny · change 2 of 2" in screen
        term.type("q")
        report = wait_until_sync(lambda: out.exists() or None, "the scenario's report")
        assert report
    finally:
        term.close()
    r = nvim.outcome("float_screen", out, marker, None, "", "", time.monotonic() - started)
    assert decisions(r["run"]) == ["deny"]
