"""Edits and commands under approval, as an editor sees them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ..waiting import alive, pid_written, wait_until
from .calls import edit, one_call_a_turn
from .conftest import Editor

APP = "def greet(name):\n    return 'hello ' + name\n"


async def test_allowed_edit_of_a_file_not_open(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    result = await editor.run(prompt="shorter greeting", runId="r1")
    assert result["outcome"] == "done"
    app = workspace / "src" / "app.py"
    assert app.read_text() == "def greet(name):\n    return 'hi ' + name\n"
    assert result["changedFiles"] == [app.as_uri()]
    [approval] = editor.approvals
    assert approval["tool"] == "edit_file" and approval["title"] == "Edit src/app.py"
    assert approval["preview"]["kind"] == "diff" and approval["preview"]["uri"] == app.as_uri()
    diff = approval["preview"]["diff"]
    assert diff.startswith("--- a/src/app.py\n+++ b/src/app.py\n")
    assert "-    return 'hello ' + name\n+    return 'hi ' + name\n" in diff
    [applied] = editor.applied
    [doc_edit] = applied["edit"]["documentChanges"]
    assert doc_edit["textDocument"]["version"] is None  # not open
    assert doc_edit["edits"] == [  # only the changed line, never the whole file
        {
            "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}},
            "newText": "    return 'hi ' + name\n",
        }
    ]
    assert editor.decisions() == ["allow"]
    assert editor.tool_results()[0].ok


async def test_edit_of_an_open_buffer_uses_its_version_and_unsaved_text(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'héllo 🌍 '", "'hey 🌍 '")))
    app = workspace / "src" / "app.py"
    uri = editor.open_document(
        app, "def greet(name):\n    return 'héllo 🌍 ' + name  # 🌍\n", version=7
    )
    result = await editor.run(prompt="go", runId="r1")
    assert result["outcome"] == "done", editor.tool_results()
    assert editor.docs[uri][0] == "def greet(name):\n    return 'hey 🌍 ' + name  # 🌍\n"
    assert app.read_text() == APP  # the disk is the user's business (they save)
    doc_edit = editor.applied[0]["edit"]["documentChanges"][0]
    assert doc_edit["textDocument"]["version"] == 7


async def test_denied_edit_changes_nothing_and_the_model_hears_why(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    editor.approve = lambda params: {"decision": "deny", "feedback": "keep hello"}
    result = await editor.run(prompt="go", runId="r1")
    assert result["outcome"] == "done" and result["changedFiles"] == []
    assert (workspace / "src" / "app.py").read_text() == APP
    assert editor.applied == []
    [tool_result] = editor.tool_results()
    assert (
        not tool_result.ok and "denied" in tool_result.output and "keep hello" in tool_result.output
    )
    assert editor.decisions() == ["deny"]


@pytest.mark.parametrize("answer", [None, {"decision": "maybe"}, {"nope": 1}, "allow", [1]])
async def test_anything_but_an_explicit_allow_is_a_deny(
    editor: Editor, workspace: Path, answer: Any
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    editor.approve = lambda params: answer
    await editor.run(prompt="go", runId="r1")
    assert (workspace / "src" / "app.py").read_text() == APP and editor.applied == []
    assert editor.decisions() == ["denied-by-default"]


async def test_an_approval_request_that_errors_is_a_deny(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))

    def broken(params: Any) -> Any:
        raise RuntimeError("the plugin crashed")

    editor.approve = broken
    await editor.run(prompt="go", runId="r1")
    assert (workspace / "src" / "app.py").read_text() == APP and editor.applied == []
    assert editor.decisions() == ["denied-by-default"]


async def test_allow_always_holds_for_the_rest_of_the_session(
    editor: Editor, workspace: Path
) -> None:
    def write(content: str) -> dict[str, Any]:
        return {"name": "write_file", "arguments": {"path": "a.txt", "content": content}}

    await editor.open_session(workspace, script=one_call_a_turn(write("1\n"), write("2\n")))
    editor.approve = lambda params: {"decision": "allow-always"}
    first = await editor.run(prompt="go", runId="r1")
    assert editor.decisions() == ["allow-always", "auto"]
    assert len(editor.approvals) == 1 and (workspace / "a.txt").read_text() == "2\n"
    second = await editor.run(prompt="again", runId="r2", sessionId=first["sessionId"])
    assert second["outcome"] == "done" and editor.decisions("r2") == ["auto", "auto"]
    assert len(editor.approvals) == 1
    other = await editor.run(prompt="other session", runId="r3")
    assert len(editor.approvals) == 2  # a new session asks again
    assert other["sessionId"] != first["sessionId"]


async def test_auto_approve_from_configuration(editor: Editor, workspace: Path) -> None:
    await editor.open_session(
        workspace,
        options={"autoApprove": ["edit_file"]},
        script=one_call_a_turn(edit("'hello '", "'hi '")),
    )
    await editor.run(prompt="go", runId="r1")
    assert editor.approvals == [] and editor.decisions() == ["auto"]
    assert "'hi '" in (workspace / "src" / "app.py").read_text()


async def test_allow_with_edited_arguments_runs_the_users_version(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    editor.approve = lambda params: {
        "decision": "allow",
        "arguments": {**params["arguments"], "new_text": "'good day '"},
    }
    await editor.run(prompt="go", runId="r1")
    assert "'good day ' + name" in (workspace / "src" / "app.py").read_text()
    [tool_result] = editor.tool_results()
    assert tool_result.ok and "the user changed this call" in tool_result.output


@pytest.mark.parametrize(
    "change",
    [
        {"arguments": {"path": "src/app.py", "old_text": "'hello '", "new_text": "'yo '"}},
        {"editedText": "    return 'yo ' + name\n"},
    ],
    ids=["arguments", "editedText"],
)
async def test_a_call_the_user_changed_is_in_the_runs_changed_files(
    editor: Editor, workspace: Path, change: dict[str, Any]
) -> None:
    # The note that the user changed the call must not cost the result its edits (issue 28).
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    editor.approve = lambda params: {"decision": "allow", **change}
    result = await editor.run(prompt="go", runId="r1")
    assert "'yo ' + name" in (workspace / "src" / "app.py").read_text()
    [tool_result] = editor.tool_results()
    assert tool_result.ok and "the user changed this call" in tool_result.output
    assert result["changedFiles"] == [(workspace / "src" / "app.py").as_uri()]


async def test_show_message_request_fallback(editor: Editor, workspace: Path) -> None:
    await editor.open_session(
        workspace, approvals=False, script=one_call_a_turn(edit("'hello '", "'hi '"))
    )
    editor.message_choice = "Allow"
    await editor.run(prompt="go", runId="r1")
    [request] = editor.message_requests
    assert request.type == 2  # Warning
    assert [a.title for a in request.actions] == ["Allow", "Allow always", "Deny"]
    assert "Edit src/app.py" in request.message and "+    return 'hi ' + name" in request.message
    assert "'hi '" in (workspace / "src" / "app.py").read_text()


@pytest.mark.parametrize("choice", [None, "Deny", "Something else"])
async def test_show_message_request_without_allow_denies(
    editor: Editor, workspace: Path, choice: str | None
) -> None:
    await editor.open_session(
        workspace, approvals=False, script=one_call_a_turn(edit("'hello '", "'hi '"))
    )
    editor.message_choice = choice
    await editor.run(prompt="go", runId="r1")
    assert (workspace / "src" / "app.py").read_text() == APP and editor.applied == []


async def test_a_client_without_apply_edit_gets_an_atomic_disk_write(
    editor: Editor, workspace: Path
) -> None:
    app = workspace / "src" / "app.py"
    app.chmod(0o640)
    await editor.open_session(
        workspace, apply_edit=False, script=one_call_a_turn(edit("'hello '", "'hi '"))
    )
    await editor.run(prompt="go", runId="r1")
    assert app.read_text() == "def greet(name):\n    return 'hi ' + name\n"
    assert app.stat().st_mode & 0o777 == 0o640
    assert editor.applied == []
    assert [p.name for p in app.parent.iterdir()] == ["app.py"]  # no temporary file left


async def test_stale_buffer_is_rebased_when_the_change_still_fits(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    uri = editor.open_document(workspace / "src" / "app.py", APP)

    def user_types(params: Any) -> Any:  # the user types while the approval is shown
        editor.replace_buffer(uri, "# typed by the user\n" + APP)
        return {"decision": "allow"}

    editor.approve = user_types
    result = await editor.run(prompt="go", runId="r1")
    assert result["outcome"] == "done"
    assert editor.docs[uri][0] == "# typed by the user\ndef greet(name):\n    return 'hi ' + name\n"
    assert editor.tool_results()[0].ok
    assert editor.applied[0]["edit"]["documentChanges"][0]["textDocument"]["version"] == 2


async def test_stale_buffer_conflict_keeps_what_the_user_typed(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    uri = editor.open_document(workspace / "src" / "app.py", APP)
    mine = "def greet(name):\n    return 'HELLO ' + name\n"

    def user_rewrites(params: Any) -> Any:
        editor.replace_buffer(uri, mine)
        return {"decision": "allow"}

    editor.approve = user_rewrites
    await editor.run(prompt="go", runId="r1")
    assert editor.docs[uri][0] == mine and editor.applied == []
    [tool_result] = editor.tool_results()
    assert not tool_result.ok and "read the file again" in tool_result.output.lower()


async def test_an_edit_the_editor_skipped_but_claimed_is_told_to_the_model(
    editor: Editor, workspace: Path
) -> None:
    bash = {"name": "bash", "arguments": {"command": "true"}}
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '"), bash))
    uri = editor.open_document(workspace / "src" / "app.py", APP)
    # Neovim 0.11 skips an edit older than its buffer and still answers applied: true; the
    # buffer's didChange for the newer typing follows 150 ms later.
    editor.apply_mode = "claim"
    prompts = 0

    def answer(params: Any) -> Any:
        nonlocal prompts
        prompts += 1
        if prompts == 1:
            editor.type_unreported(uri, APP + "# typed\n")
        else:
            editor.flush_changes()  # the debounced didChange, before the next answer
        return {"decision": "allow"}

    editor.approve = answer
    result = await editor.run(prompt="go", runId="r1")
    assert editor.docs[uri][0] == APP + "# typed\n" and len(editor.applied) == 1
    claimed, ran = editor.tool_results()
    assert claimed.ok  # the editor said it applied it: never sent again
    assert "differs from the edit that was approved" in ran.output
    assert "'hello ' + name" in ran.output and "# typed" in ran.output
    assert result["changedFiles"] == [(workspace / "src" / "app.py").as_uri()]


async def test_applied_false_is_a_failed_call(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    editor.apply_mode = "refuse"
    await editor.run(prompt="go", runId="r1")
    [tool_result] = editor.tool_results()
    assert not tool_result.ok and "refused" in tool_result.output
    assert (workspace / "src" / "app.py").read_text() == APP


async def test_crlf_file_keeps_its_line_endings(editor: Editor, workspace: Path) -> None:
    win = workspace / "win.txt"
    win.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await editor.open_session(
        workspace, script=one_call_a_turn(edit("two\nthree", "2\n3", path="win.txt"))
    )
    await editor.run(prompt="go", runId="r1")
    assert win.read_bytes() == b"one\r\n2\r\n3\r\n"


async def test_new_file_is_created_first(editor: Editor, workspace: Path) -> None:
    call = {"name": "write_file", "arguments": {"path": "pkg/new.py", "content": "x = 1\n"}}
    await editor.open_session(workspace, script=one_call_a_turn(call))
    result = await editor.run(prompt="go", runId="r1")
    new = workspace / "pkg" / "new.py"
    assert new.read_text() == "x = 1\n"
    changes = editor.applied[0]["edit"]["documentChanges"]
    assert changes[0]["kind"] == "create" and changes[0]["uri"] == new.as_uri()
    assert changes[1]["textDocument"] == {"uri": new.as_uri(), "version": None}
    assert editor.approvals[0]["preview"]["diff"].startswith("--- /dev/null\n+++ b/pkg/new.py\n")
    assert result["changedFiles"] == [new.as_uri()]


@pytest.mark.parametrize(
    ("old", "message"),
    [("'nope'", "was not found"), ("name", "occurs 2 times in src/app.py (at lines 1, 2)")],
)
async def test_edits_that_do_not_fit_explain_why(
    editor: Editor, workspace: Path, old: str, message: str
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit(old, "x")))
    await editor.run(prompt="go", runId="r1")
    [tool_result] = editor.tool_results()
    assert not tool_result.ok and message in tool_result.output
    assert editor.approvals == []  # nothing to approve


async def test_save_documents_after_an_applied_edit(editor: Editor, workspace: Path) -> None:
    await editor.open_session(
        workspace, save_documents=True, script=one_call_a_turn(edit("'hello '", "'hi '"))
    )
    app = workspace / "src" / "app.py"
    uri = editor.open_document(app, APP)
    await editor.run(prompt="go", runId="r1")
    assert editor.saves == [[uri]]
    assert "'hi '" in app.read_text()


async def test_bash_asks_with_the_command_and_folder(editor: Editor, workspace: Path) -> None:
    call = {"name": "bash", "arguments": {"command": "echo made > made.txt && echo ok"}}
    await editor.open_session(workspace, script=one_call_a_turn(call))
    await editor.run(prompt="go", runId="r1")
    [approval] = editor.approvals
    assert approval["preview"] == {
        "kind": "command",
        "command": "echo made > made.txt && echo ok",
        "cwd": str(workspace.resolve()),
    }
    assert (workspace / "made.txt").read_text() == "made\n"
    assert editor.tool_results()[0].ok and "ok" in editor.tool_results()[0].output


async def test_denied_bash_runs_nothing(editor: Editor, workspace: Path) -> None:
    call = {"name": "bash", "arguments": {"command": "touch ran.txt"}}
    await editor.open_session(workspace, script=one_call_a_turn(call))
    editor.approve = lambda params: {"decision": "deny"}
    await editor.run(prompt="go", runId="r1")
    assert not (workspace / "ran.txt").exists()


async def test_a_command_that_changes_open_files(editor: Editor, workspace: Path) -> None:
    clean, dirty = workspace / "clean.txt", workspace / "dirty.txt"
    clean.write_text("old\n")
    dirty.write_text("old\n")
    command = "echo new > clean.txt && echo new > dirty.txt"
    read_clean = {"name": "read_file", "arguments": {"path": "clean.txt"}}
    await editor.open_session(
        workspace,
        script=one_call_a_turn({"name": "bash", "arguments": {"command": command}}, read_clean),
    )
    editor.open_document(clean, "old\n")
    dirty_uri = editor.open_document(dirty, "old\nunsaved typing\n")
    await editor.run(prompt="go", runId="r1")
    bash_result, read_result = editor.tool_results()
    assert (
        "unsaved changes in the editor" in bash_result.output and "dirty.txt" in bash_result.output
    )
    assert (
        "Conflict" in bash_result.output and "dirty.txt" in bash_result.output.split("Conflict")[1]
    )
    assert "new" in read_result.output  # the clean buffer is read from disk now
    assert editor.docs[dirty_uri][0] == "old\nunsaved typing\n"  # never overwritten
    assert dirty.read_text() == "new\n"


async def test_cancel_during_a_command_kills_its_process_group(
    editor: Editor, workspace: Path
) -> None:
    command = "sleep 300 & echo $! > child.pid; sleep 300"
    await editor.open_session(
        workspace,
        script=one_call_a_turn({"name": "bash", "arguments": {"command": command}}),
    )
    task = asyncio.ensure_future(editor.run(prompt="go", runId="r1"))
    pid_file = workspace / "child.pid"
    pid = await wait_until(lambda: pid_written(pid_file), "the command to write child.pid")
    await editor.client.protocol.send_request_async("agent/cancel", {"runId": "r1"})
    # generous bounds: a loaded CI machine; cancel latency is measured by the "cancel" bench
    result = await asyncio.wait_for(task, 15)
    assert result["outcome"] == "cancelled"
    # the kill is sent before the run ends; the process leaving /proc may lag under load
    await wait_until(lambda: not alive(pid), f"the background child {pid} to be killed")
