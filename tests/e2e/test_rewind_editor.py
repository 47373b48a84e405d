"""A rewind in an editor: a file open in a buffer goes back through the buffer (the
editor's ``workspace/applyEdit``, as undo does), never behind it on disk; a buffer with
the user's unsaved typing is a conflict and is left exactly as the user has it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .calls import bash, edit, one_call_a_turn
from .conftest import Editor

APP = "def greet(name):\n    return 'hello ' + name\n"


async def _request(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    return await editor.client.protocol.send_request_async(method, params)


async def _edited(editor: Editor, workspace: Path) -> tuple[str, str, str]:
    """A session whose run edited the open ``src/app.py``: its id, the buffer's URI, the
    edit's checkpoint."""
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    uri = editor.open_document(workspace / "src" / "app.py", APP)
    result = await editor.run(prompt="go", runId="r1")
    assert result["outcome"] == "done", editor.tool_results()
    assert editor.docs[uri][0] == APP.replace("hello", "hi")
    listed = await _request(editor, "agent/checkpoints", {"sessionId": result["sessionId"]})
    [checkpoint] = listed["checkpoints"]
    assert [f["path"] for f in checkpoint["files"]] == ["src/app.py"]
    return result["sessionId"], uri, checkpoint["id"]


async def test_an_open_buffer_goes_back_through_the_editor(editor: Editor, workspace: Path) -> None:
    session, uri, checkpoint = await _edited(editor, workspace)
    applied = len(editor.applied)
    done = await _request(
        editor,
        "agent/rewind",
        {"sessionId": session, "checkpointId": checkpoint, "restore": "files"},
    )
    assert done["restored"] == [uri] and done["conflicts"] == []
    assert editor.docs[uri][0] == APP  # the buffer is back
    assert len(editor.applied) == applied + 1  # through the editor
    assert (workspace / "src" / "app.py").read_text() == APP  # the disk was never touched


async def test_unsaved_typing_in_the_buffer_is_a_conflict_left_alone(
    editor: Editor, workspace: Path
) -> None:
    session, uri, checkpoint = await _edited(editor, workspace)
    typed = editor.docs[uri][0] + "# the user's unsaved line\n"
    editor.replace_buffer(uri, typed)
    applied = len(editor.applied)
    asked = {"sessionId": session, "checkpointId": checkpoint, "restore": "files"}
    done = await _request(editor, "agent/rewind", asked)
    assert done["conflicts"] == [uri] and done["restored"] == []
    assert editor.docs[uri][0] == typed and len(editor.applied) == applied


async def test_a_bash_step_is_checkpointed_under_an_editor_too(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(bash("rm README.md")))
    result = await editor.run(prompt="go", runId="r1")
    assert not (workspace / "README.md").exists()
    asked = {"sessionId": result["sessionId"]}
    [checkpoint] = (await _request(editor, "agent/checkpoints", asked))["checkpoints"]
    await _request(
        editor, "agent/rewind", {"sessionId": result["sessionId"], "checkpointId": checkpoint["id"]}
    )
    assert (workspace / "README.md").read_text() == "# demo\n"
