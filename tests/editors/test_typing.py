"""A user typing while an approval waits, in a real Neovim driven with keys.

Each test models what a real user did (issue 13): keys typed in a burst inside Neovim's
150 ms ``didChange`` debounce, Insert mode when an approval arrives, Vim's own ``A``/``dd``/
``e`` in the buffer an inline approval marks, a shell changing the file before the save.
"""

from __future__ import annotations

from .conftest import APP, Nvim, app_project, call, env, script, tool_results

EDIT = call("edit_file", path="src/app.py", old_text="'hello '", new_text="'hi '")


def test_typing_then_allowing_inside_the_debounce_never_misplaces_the_edit(nvim: Nvim) -> None:
    app = app_project(nvim)
    r = nvim.run("typing", script({"toolCalls": [EDIT]}), env(MODE="race"))
    expected = ["# quick note", "def greet(name):", "    return 'hi ' + name"]
    assert r["buffer_after"] == expected
    [result] = tool_results(r["run"])
    assert result["ok"] is True, result
    assert app.read_text() == "\n".join(expected) + "\n"


def test_keys_typed_before_the_edit_arrives_are_kept_and_the_edit_lands(nvim: Nvim) -> None:
    app_project(nvim)
    r = nvim.run(
        "typing",
        script({"toolCalls": [EDIT]}),
        env(MODE="late", SETTINGS={"autoApprove": ["edit_file"]}),
    )
    # the edit computed on the old text is refused (applied: false), rebased and resent
    assert r["buffer_after"] == ["# typed meanwhile", "def greet(name):", "    return 'hi ' + name"]
    [result] = tool_results(r["run"])
    assert result["ok"] is True, result


def test_typing_in_insert_mode_when_an_inline_approval_arrives(nvim: Nvim) -> None:
    app_project(nvim)
    r = nvim.run("typing", script({"toolCalls": [EDIT]}), env(MODE="insert"))
    [seen] = r["shown"]
    assert seen["view"] == "inline" and seen["mode"] == "i" and seen["same_window"] is True
    assert seen["cursor"] == [3, 11]  # where the typing is (autoindented), not the edit's line
    assert seen["after_mode"] == "i" and seen["after_same_window"] is True
    assert seen["after_lines"][-1] == "    typed: abc def"  # every key landed in the buffer
    assert seen["after_pending"] is True  # and none of them decided
    assert r["marks_after"] == [] and r["floats_after"] == 0


def test_typing_in_insert_mode_when_a_float_approval_arrives(nvim: Nvim) -> None:
    app_project(nvim)
    r = nvim.run("typing", script({"toolCalls": [EDIT]}), env(MODE="insert", OPEN="README.md"))
    [seen] = r["shown"]
    assert seen["view"] == "float" and seen["mode"] == "i" and seen["same_window"] is True
    assert seen["after_mode"] == "i" and seen["after_same_window"] is True
    assert seen["after_lines"] == ["# demo", "typed: abc def"]
    assert seen["after_pending"] is True
    assert r["marks_after"] == [] and r["floats_after"] == 0


def test_vim_keys_in_the_users_buffer_keep_their_meaning(nvim: Nvim) -> None:
    app = app_project(nvim)
    r = nvim.run("typing", script({"toolCalls": [EDIT]}), env(MODE="keys"))
    [seen] = r["shown"]
    assert seen["view"] == "inline" and seen["user_maps"] == []
    assert seen["after_A"] == ["def greet(name):  # noted", "    return 'hello ' + name"]
    assert seen["pending_after_A"] is True
    assert seen["after_dd"] == ["def greet(name):  # noted"]
    assert seen["cursor_after_e"] == [1, 2]  # `e`: to the end of "def"
    assert seen["pending_after_keys"] is True and seen["floats_after_keys"] == 0
    assert seen["maparg"] == {"a": "", "A": "", "d": "", "e": ""}
    assert r["run"]["result"]["changedFiles"] == []  # denied afterwards
    assert app.read_text() == APP


def test_a_file_changed_on_disk_is_not_overwritten_by_the_save(nvim: Nvim) -> None:
    app = app_project(nvim)
    typed = ["def greet(name):", "    return 'hello ' + name", "# typed, unsaved"]
    r = nvim.run("typing", script({"toolCalls": [EDIT]}), env(MODE="disk", MODIFY=typed))
    assert app.read_text() == APP + "# appended from a shell\n"  # the outside change survives
    assert r["buffer_after"] == ["def greet(name):", "    return 'hi ' + name", typed[2]]
    assert r["modified_after"] is True  # the user's text is still in the buffer, unsaved


def test_an_approval_the_server_withdraws_closes_at_once(nvim: Nvim) -> None:
    app_project(nvim)
    r = nvim.run(
        "typing",
        script({"toolCalls": [EDIT]}, {"text": "ok"}, delaySeconds=1),
        env(MODE="withdraw", SETTINGS={"approvalTimeoutSeconds": 1}),
    )
    [seen] = r["shown"]
    # closed by $/cancelRequest while the run still goes on, not by the run's end
    assert seen["closed_while_running"] is True
    assert seen["marks_at_close"] == 0 and seen["floats_at_close"] == 0
    assert r["run"]["result"]["outcome"] == "done"
    assert r["marks_after"] == [] and r["pending_after"] is False


def test_configure_right_after_start_reaches_the_server(nvim: Nvim) -> None:
    app_project(nvim)
    r = nvim.run("configure", script({"toolCalls": [EDIT]}))
    assert r["clients_listed"] == 0  # the client was still starting
    assert r["shown"] == []  # autoApprove from configure() applied: nothing asked
    assert r["buffer_after"] == ["def greet(name):", "    return 'hi ' + name"]


def test_an_inline_approval_follows_the_user_to_another_buffer(nvim: Nvim) -> None:
    app = app_project(nvim)
    r = nvim.run("typing", script({"toolCalls": [EDIT]}), env(MODE="switch"))
    [seen] = r["shown"]
    assert seen["view"] == "inline"
    # src/app.py left the screen: the approval shows in a float the cursor does not enter
    assert seen["float_after_switch"] == 1 and seen["in_float"] is False
    assert seen["statusline"] == "Tether: approve Edit src/app.py"
    assert [e["ok"] for e in tool_results(r["run"])] == [True]  # :TetherAllow allowed it
    assert "Tether: allowed Edit src/app.py" in r["notes"]  # and said what it allowed
    assert app.read_text() == "def greet(name):\n    return 'hi ' + name\n"
    assert r["marks_after"] == [] and r["floats_after"] == 0


def test_closing_the_float_with_q_colon_keeps_the_approval_waiting(nvim: Nvim) -> None:
    app = app_project(nvim)
    r = nvim.run("typing", script({"toolCalls": [EDIT]}), env(MODE="close", OPEN="README.md"))
    [seen] = r["shown"]
    assert seen["view"] == "float" and seen["entered_float"] is True
    assert seen["pending_after_close"] is True and seen["back_in_window"] is True
    assert [e["decision"] for e in r["run"]["events"] if e["kind"] == "approval"] == ["deny"]
    assert app.read_text() == APP
    assert r["marks_after"] == [] and r["floats_after"] == 0 and r["pending_after"] is False
