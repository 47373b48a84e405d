"""Lone ``\\r`` line ends through the real server: edits land on the line the model meant.

The test editor resolves ``workspace/applyEdit`` positions by LSP's rules (``\\n``, ``\\r\\n``
and a lone ``\\r`` end a line), as Neovim and VS Code do; before the one text model the
server counted ``\\n`` only and an edit of line ``c`` replaced line ``b`` (issue 11 item 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .calls import one_call_a_turn
from .conftest import Editor
from .documents import send_did_change_range

TEXT = "a = 1\rb = 2\nc = 3\n"


def edit_c(path: str) -> dict[str, Any]:
    return {
        "name": "edit_file",
        "arguments": {"path": path, "old_text": "c = 3", "new_text": "c = 4"},
    }


async def test_an_edit_in_an_open_buffer_after_a_lone_cr(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit_c("mixed.py")))
    path = workspace / "mixed.py"
    path.write_bytes(TEXT.encode())
    uri = editor.open_document(path, TEXT)
    result = await editor.run(prompt="change c", runId="r1")
    assert result["outcome"] == "done", editor.tool_results()
    assert editor.docs[uri][0] == "a = 1\rb = 2\nc = 4\n"  # b intact, c changed
    [text_edit] = editor.applied[0]["edit"]["documentChanges"][0]["edits"]
    assert text_edit["range"]["start"] == {"line": 2, "character": 0}


async def test_an_edit_of_a_closed_file_after_a_lone_cr(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit_c("mixed.py")))
    path = workspace / "mixed.py"
    path.write_bytes(TEXT.encode())
    result = await editor.run(prompt="change c", runId="r1")
    assert result["outcome"] == "done", editor.tool_results()
    assert path.read_bytes() == b"a = 1\rb = 2\nc = 4\n"


async def test_read_file_numbers_lines_as_the_editor_does(editor: Editor, workspace: Path) -> None:
    call = {"name": "read_file", "arguments": {"path": "mixed.py"}}
    await editor.open_session(workspace, script=one_call_a_turn(call))
    path = workspace / "mixed.py"
    path.write_bytes(b"a = 1\rb = 2\x0cstill b\nc = 3\n")
    await editor.run(prompt="read", runId="r1")
    [read] = editor.tool_results()
    assert read.output.split("\n") == ["     1\ta = 1", "     2\tb = 2\x0cstill b", "     3\tc = 3"]


async def test_a_multi_line_edit_of_a_cr_file_keeps_its_line_ends(
    editor: Editor, workspace: Path
) -> None:
    path = workspace / "mac.txt"
    path.write_bytes(b"one\rtwo\rthree\r")
    call = {
        "name": "edit_file",
        "arguments": {"path": "mac.txt", "old_text": "two\nthree", "new_text": "2\n3"},
    }
    await editor.open_session(workspace, script=one_call_a_turn(call))
    result = await editor.run(prompt="go", runId="r1")
    assert result["outcome"] == "done" and editor.tool_results()[0].ok, editor.tool_results()
    assert path.read_bytes() == b"one\r2\r3\r"


async def test_write_file_keeps_a_cr_file_line_ends(editor: Editor, workspace: Path) -> None:
    path = workspace / "mac.txt"
    path.write_bytes(b"one\rtwo\r")
    call = {"name": "write_file", "arguments": {"path": "mac.txt", "content": "1\n2"}}
    await editor.open_session(workspace, script=one_call_a_turn(call))
    await editor.run(prompt="go", runId="r1")
    [written] = editor.tool_results()
    assert written.ok and "(2 lines)" in written.output, written
    assert path.read_bytes() == b"1\r2\r"


async def test_an_incremental_change_sent_twice_is_applied_once(
    editor: Editor, workspace: Path
) -> None:
    """A client that repeats a ``didChange`` (same version) must not have its typing doubled
    in the server's copy of the buffer, which edits are computed on."""
    call = {"name": "read_file", "arguments": {"path": "typed.py"}}
    await editor.open_session(workspace, script=one_call_a_turn(call))
    path = workspace / "typed.py"
    path.write_text("x = 1\n")
    uri = editor.open_document(path, "x = 1\n", version=1)
    for _ in range(2):  # the same notification again
        send_did_change_range(editor.client, uri, 2, (0, 0), (0, 0), "# typed\n")
    await editor.run(prompt="read", runId="r1")
    [read] = editor.tool_results()
    assert read.output.split("\n") == ["     1\t# typed", "     2\tx = 1"]
