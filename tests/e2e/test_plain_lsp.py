"""Editors with a generic LSP client and no Tether plugin (Eglot, coc.nvim, vim-lsp, Helix)
against the real server: they start runs the way those editors pass command arguments,
see the outcome and the transcript only through ``window/showMessage`` and
``window/logMessage``, and are told once when they cannot be asked for approvals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

from tests.providers.fakes import FakeApi, Sse, openai_stream, system_text

from .conftest import Editor, script

READ_APP = {"name": "read_file", "arguments": {"path": "src/app.py"}}

# The workspace, window and general capabilities each client declares (none declares
# experimental.tether). Eglot 1.9: its `eglot-client-capabilities` (Debian elpa-eglot
# 1.9-2); the others from ../shared/notes/real-editors-verified.md and their sources.
EGLOT_1_9: dict[str, Any] = {
    "workspace": {
        "applyEdit": True,
        "executeCommand": {"dynamicRegistration": False},
        "workspaceEdit": {"documentChanges": True},
        "didChangeWatchedFiles": {"dynamicRegistration": True},
        "symbol": {"dynamicRegistration": False},
        "configuration": True,
        "workspaceFolders": True,
    },
    "textDocument": {
        "synchronization": {
            "dynamicRegistration": False,
            "willSave": True,
            "willSaveWaitUntil": True,
            "didSave": True,
        }
    },
    "experimental": {},
}
HELIX_25_07: dict[str, Any] = {
    "workspace": {
        "configuration": True,
        "didChangeConfiguration": {"dynamicRegistration": False},
        "workspaceFolders": True,
        "applyEdit": True,
        "symbol": {"dynamicRegistration": False},
        "executeCommand": {"dynamicRegistration": False},
        "workspaceEdit": {
            "documentChanges": True,
            "resourceOperations": ["create", "rename", "delete"],
            "failureHandling": "abort",
            "normalizesLineEndings": False,
        },
        "didChangeWatchedFiles": {"dynamicRegistration": True},
    },
    "window": {"workDoneProgress": True},
    "general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
}
COC: dict[str, Any] = {
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {
            "documentChanges": True,
            "resourceOperations": ["create", "rename", "delete"],
            "failureHandling": "textOnlyTransactional",
        },
        "executeCommand": {"dynamicRegistration": True},
        "configuration": True,
        "workspaceFolders": True,
    },
    "window": {
        "workDoneProgress": True,
        "showMessage": {"messageActionItem": {"additionalPropertiesSupport": False}},
        "showDocument": {"support": True},
    },
}
VIM_LSP: dict[str, Any] = {
    "workspace": {
        "applyEdit": True,
        "configuration": True,
        "workspaceFolders": True,
        "workspaceEdit": {"documentChanges": True},
    },
    "window": {"workDoneProgress": False},
}


async def open_as(
    editor: Editor,
    root: Path,
    capabilities: dict[str, Any],
    options: dict[str, Any],
    *,
    events: bool = False,
) -> None:
    """``initialize`` as the editor whose ``capabilities`` are given (plus, when ``events``,
    a Tether plugin's declaration), with ``options`` as initializationOptions."""
    caps = dict(capabilities)
    if events:
        caps["experimental"] = {"tether": {"events": True}}
    editor.root = root
    editor.init_result = await editor.client.initialize_session(
        types.InitializeParams(
            capabilities=get_converter().structure(caps, types.ClientCapabilities),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=options,
        )
    )


async def command(editor: Editor, *arguments: Any, bare: bool = False) -> Any:
    """``workspace/executeCommand tether.run`` with ``arguments`` (none at all if ``bare``)."""
    return await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="tether.run", arguments=None if bare else list(arguments)
        )
    )


def tether_log(editor: Editor) -> list[str]:
    """The transcript lines the server logged."""
    return [m.message for m in editor.client.log_messages if m.message.startswith("[tether]")]


def user_text(body: dict[str, Any]) -> str:
    """The last user message's text of a chat request."""
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


async def test_coc_strings_are_the_prompt_and_the_last_changed_buffer_the_context(
    editor: Editor, workspace: Path, fake: FakeApi
) -> None:
    options = {"provider": "openai", "baseUrl": fake.url + "/v1", "model": "gpt-5.4"}
    await open_as(editor, workspace, COC, options)
    app = editor.open_document(workspace / "src" / "app.py", "def greet(name):\n    pass\n")
    editor.open_document(workspace / "README.md", "# demo\n")
    editor.replace_buffer(app, "def greet(name):\n    return name\n")  # the user types here
    fake.queue(Sse(openai_stream("Fixed.")))
    # `:CocCommand tether.run fix the bug` sends each word as an argument.
    result = await command(editor, "fix", "the", "bug")
    assert result["outcome"] == "done" and result["answer"] == "Fixed."
    [request] = fake.requests
    assert user_text(request.body) == "fix the bug"
    assert '\n- Active file: "src/app.py"' in system_text(request.body)


async def test_helix_without_arguments_gets_an_error_it_can_see(
    editor: Editor, workspace: Path
) -> None:
    await open_as(editor, workspace, HELIX_25_07, {"provider": "scripted", "script": script()})
    # The command picker sends no arguments; Helix shows command errors only in its log.
    with pytest.raises(JsonRpcException) as caught:
        await command(editor, bare=True)
    assert caught.value.code == -32602 and "needs a prompt" in str(caught.value)
    [shown] = editor.client.messages
    assert shown.type == types.MessageType.Error
    assert ':lsp-workspace-command tether.run "fix the bug"' in shown.message
    # `:lsp-workspace-command tether.run "fix it"`: one JSON string; then the object form.
    assert (await command(editor, "fix it"))["outcome"] == "done"
    result = await command(editor, {"prompt": "fix it", "runId": "h1"})
    assert result["outcome"] == "done" and result["runId"] == "h1"


@pytest.mark.parametrize("arguments", [[42], ["  "], [{"prompt": "a"}, {"prompt": "b"}]])
async def test_arguments_that_are_no_prompt_are_refused_and_shown(
    editor: Editor, workspace: Path, arguments: list[Any]
) -> None:
    await open_as(editor, workspace, HELIX_25_07, {"provider": "scripted", "script": script()})
    with pytest.raises(JsonRpcException) as caught:
        await command(editor, *arguments)
    assert caught.value.code == -32602
    [shown] = editor.client.messages
    assert shown.type == types.MessageType.Error and "tether.run" in shown.message
    assert (await command(editor, "still", "serving"))["outcome"] == "done"


async def test_a_client_without_events_is_told_the_outcome_and_the_transcript(
    editor: Editor, workspace: Path
) -> None:
    turns = script(
        {"text": "I will read the app.", "toolCalls": [READ_APP]},
        {"text": "It greets people.\nThat is all it does."},
    )
    await open_as(editor, workspace, VIM_LSP, {"provider": "scripted", "script": turns})
    result = await command(editor, {"prompt": "what does app.py do?"})
    assert result["outcome"] == "done"
    [shown] = editor.client.messages
    assert shown.type == types.MessageType.Info
    assert shown.message == "Tether done · 2 steps · It greets people."
    lines = tether_log(editor)
    assert lines[0].endswith("started: what does app.py do?")
    assert "[tether] assistant: I will read the app." in lines
    assert "[tether] → read_file src/app.py" in lines
    assert "[tether]   ✓ read_file: 1\tdef greet(name):" in lines
    assert lines[-1].endswith("done after 2 steps")


async def test_a_run_that_stops_early_is_a_warning(editor: Editor, workspace: Path) -> None:
    loop = script({"text": "again", "toolCalls": [READ_APP]}, repeatLast=True)
    options = {"provider": "scripted", "script": loop, "maxSteps": 2}
    await open_as(editor, workspace, EGLOT_1_9, options)
    assert (await command(editor, {"prompt": "loop"}))["outcome"] == "max-steps"
    [shown] = editor.client.messages
    assert shown.type == types.MessageType.Warning
    assert shown.message == "Tether max-steps · 2 steps · again"


async def test_the_transcript_is_bounded(editor: Editor, workspace: Path) -> None:
    reads = [
        {"name": "read_file", "arguments": {"path": "src/app.py", "offset": n}}
        for n in range(1, 151)
    ]
    turns = script({"text": "x" * 5000, "toolCalls": reads}, {"text": "done"})
    await open_as(editor, workspace, VIM_LSP, {"provider": "scripted", "script": turns})
    assert (await command(editor, {"prompt": "read a lot"}))["outcome"] == "done"
    lines = tether_log(editor)
    assert len(lines) <= 200
    assert all(len(line) <= 410 for line in lines)
    assert any("transcript lines not shown" in line for line in lines)
    assert lines[-1].endswith("done after 2 steps")


async def test_progress_carries_a_percentage_of_max_steps(editor: Editor, workspace: Path) -> None:
    turns = script({"toolCalls": [READ_APP]}, {"text": "ok"})
    await open_as(editor, workspace, HELIX_25_07, {"provider": "scripted", "script": turns})
    await command(editor, {"prompt": "go", "runId": "p1", "limits": {"maxSteps": 4}})
    reports = editor.client.progress_reports["tether-p1"]
    assert reports[0].kind == "begin" and reports[0].percentage == 0
    steps = [r for r in reports if r.kind == "report"]
    assert [r.percentage for r in steps] == [25, 25, 50]  # step 1, its read_file, step 2


async def test_a_client_with_events_gets_no_messages(editor: Editor, workspace: Path) -> None:
    turns = script({"text": "reading", "toolCalls": [READ_APP]}, {"text": "ok"})
    await open_as(editor, workspace, COC, {"provider": "scripted", "script": turns}, events=True)
    await command(editor, {"prompt": "go", "runId": "e1", "limits": {"maxSteps": 10}})
    assert editor.kinds("e1")[-1] == "run-finished"  # its plugin shows these
    assert editor.client.messages == [] and tether_log(editor) == []
    reports = editor.client.progress_reports["tether-e1"]
    assert [getattr(r, "percentage", None) for r in reports] == [0, 10, 10, 20, None]


def write(path: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": "new\n"}}


async def test_helix_without_message_requests_is_told_once(editor: Editor, workspace: Path) -> None:
    def method_not_found() -> Any:
        raise JsonRpcMethodNotFound.of(types.WINDOW_SHOW_MESSAGE_REQUEST)  # Helix 25.07

    editor.message_answer = method_not_found
    turns = script({"toolCalls": [write("a.txt")]}, {"toolCalls": [write("b.txt")]})
    await open_as(editor, workspace, HELIX_25_07, {"provider": "scripted", "script": turns})
    assert (await command(editor, {"prompt": "write two files"}))["outcome"] == "done"
    assert (await command(editor, {"prompt": "again", "runId": "h2"}))["outcome"] == "done"
    assert len(editor.message_requests) == 4  # each approval was asked, and refused
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
    notices = [m for m in editor.client.messages if "approval" in m.message]
    assert len(notices) == 1
    assert notices[0].type == types.MessageType.Error
    assert "autoApprove" in notices[0].message and "Helix" in notices[0].message
    assert "[tether]   approval: denied-by-default" in tether_log(editor)


async def test_the_approval_message_starts_short_and_ends_with_the_title(
    editor: Editor, workspace: Path
) -> None:
    edit = {
        "name": "edit_file",
        "arguments": {"path": "src/app.py", "old_text": "hello ", "new_text": "hi "},
    }
    turns = script({"toolCalls": [edit]}, {"text": "ok"})
    await open_as(editor, workspace, VIM_LSP, {"provider": "scripted", "script": turns})
    await command(editor, {"prompt": "say hi"})
    [request] = editor.message_requests
    lines = request.message.splitlines()
    assert lines[0] == "Tether wants to: Edit src/app.py (+1 −1 lines)"
    assert lines[-1] == "Allow? Edit src/app.py"
    assert "+    return 'hi ' + name" in request.message


def vim_lsp_answer(editor: Editor, number: int) -> Any:
    """What vim-lsp answers when the user types ``number`` at its ``inputlist`` of the
    last prompt: the action for 1, ``null`` for any other (its index check only lets the
    first through), as for Escape."""
    actions = editor.message_requests[-1].actions or []
    return actions[0] if number == 1 else None


@pytest.mark.parametrize("number", [3, 0], ids=["Deny", "Escape"])
async def test_vim_lsp_deny_reaches_the_model_as_the_users_deny(
    editor: Editor, workspace: Path, number: int
) -> None:
    editor.message_answer = lambda: vim_lsp_answer(editor, number)  # Deny (3), or Escape
    turns = script({"toolCalls": [write("a.txt")]}, {"text": "ok"})
    await open_as(editor, workspace, VIM_LSP, {"provider": "scripted", "script": turns})
    assert (await command(editor, {"prompt": "write a file"}))["outcome"] == "done"
    [request] = editor.message_requests
    assert [a.title for a in request.actions or []] == ["Allow", "Allow always", "Deny"]
    assert not (workspace / "a.txt").exists()
    denied = [line for line in tether_log(editor) if "✗ write_file" in line]
    assert denied == ["[tether]   ✗ write_file: Not done: the user denied it; nothing was changed."]
    assert "[tether]   approval: deny" in tether_log(editor)


async def test_an_answer_that_is_no_offered_action_still_denies_by_default(
    editor: Editor, workspace: Path
) -> None:
    editor.message_choice = "Something else"
    turns = script({"toolCalls": [write("a.txt")]}, {"text": "ok"})
    await open_as(editor, workspace, VIM_LSP, {"provider": "scripted", "script": turns})
    await command(editor, {"prompt": "write a file"})
    assert not (workspace / "a.txt").exists()
    assert "[tether]   approval: denied-by-default" in tether_log(editor)
