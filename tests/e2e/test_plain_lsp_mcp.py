"""An MCP call in an editor with a generic LSP client and no Tether plugin (vim-lsp here):
the one question it can be asked (``window/showMessageRequest``) names the server, the tool
and the arguments, Allow calls the server once, and Deny never calls it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..mcp.conftest import alive, started_pids, write_notes_config
from .conftest import Editor, script
from .test_plain_lsp import VIM_LSP, command, open_as, tether_log, vim_lsp_answer

ECHO = {"name": "mcp__notes__echo", "arguments": {"text": "hello from vim-lsp"}}


def user_config(editor: Editor, marks: Path) -> None:
    """The user's ``config.toml`` (the server's XDG_CONFIG_HOME) with the test's notes server."""
    folder = editor.state_dir.parent / "config" / "tether"
    write_notes_config(folder, marks)


@pytest.mark.parametrize("number", [1, 3], ids=["Allow", "Deny"])
async def test_an_mcp_call_is_asked_with_server_tool_and_arguments(
    editor: Editor, workspace: Path, tmp_path: Path, number: int
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    user_config(editor, marks)
    editor.message_answer = lambda: vim_lsp_answer(editor, number)  # Allow (1) or Deny (3)
    turns = script({"toolCalls": [ECHO]}, {"text": "ok"})
    await open_as(editor, workspace, VIM_LSP, {"provider": "scripted", "script": turns})
    assert (await command(editor, {"prompt": "say hello through notes"}))["outcome"] == "done"
    [request] = editor.message_requests
    assert request.message.splitlines()[0] == "Tether wants to: MCP notes: echo"
    assert '\nnotes › echo {"text": "hello from vim-lsp"}\n' in request.message  # no "$ "
    assert "(in MCP server 'notes'" in request.message
    assert [a.title for a in request.actions or []] == [
        "Allow",
        "Allow always (this exact call)",
        "Deny",
    ]
    called = marks / "called-echo"
    if number == 1:
        assert called.read_text() == "hello from vim-lsp"
        assert "[tether]   approval: allow" in tether_log(editor)
    else:
        assert not called.exists()
        assert "[tether]   approval: deny" in tether_log(editor)
    await editor.client.shutdown_session()
    editor.init_result = None  # shut down here: the server's MCP process is gone after it
    for pid in started_pids(marks):
        assert not alive(pid)
