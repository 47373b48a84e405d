"""A real ``tether serve`` rehearses a first run before the editor's first prompt
(``lsp.rehearsal``): the editor sees none of it, nothing of it stays on disk, and the
editor's own first run and its session are as without it."""

from __future__ import annotations

import queue
from pathlib import Path
from typing import Any

from ..waiting import wait_until_sync
from .conftest import SERVER
from .raw_client import RawServer

VSCODE_LIKE = {
    "window": {"workDoneProgress": True},
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]},
    },
    "experimental": {"tether": {"events": True, "approvals": True}},
}
SCRIPT = {
    "turns": [
        {"toolCalls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {
            "toolCalls": [
                {"name": "write_file", "arguments": {"path": "notes.txt", "content": "b\n"}}
            ]
        },
        {"text": "Changed."},
    ]
}
REHEARSED = "a first run rehearsed in"


def received(server: RawServer) -> list[dict[str, Any]]:
    """Every message the server sent so far that is not an answer the test took."""
    messages = list(server.pending)
    while True:
        try:
            message = server.messages.get_nowait()
        except queue.Empty:
            return messages
        if message is not None:
            messages.append(message)


def test_the_rehearsal_is_invisible_to_the_editor_and_leaves_nothing(tmp_path: Path) -> None:
    workspace, temp = tmp_path / "ws", tmp_path / "tmp"
    workspace.mkdir()
    temp.mkdir()
    (workspace / "notes.txt").write_text("a\n")
    server = RawServer(
        tmp_path, {"TMPDIR": str(temp)}, argv=[*SERVER[:-1], "--log-level", "INFO", "serve"]
    )
    try:
        server.request(
            1,
            "initialize",
            {
                "processId": None,
                "rootUri": workspace.as_uri(),
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": "ws"}],
                "capabilities": VSCODE_LIKE,
                "initializationOptions": {"provider": "scripted", "script": SCRIPT},
            },
        )
        assert "result" in server.answer(1, timeout=30)
        server.notify("initialized", {})
        wait_until_sync(lambda: REHEARSED in server.stderr(), "the rehearsal's end", 60)
        # The editor got nothing of the rehearsal's run: no event, request or progress.
        assert received(server) == []
        assert list(temp.iterdir()) == []

        server.request(2, "agent/run", {"prompt": "change it"})
        asked = []
        while True:
            message = server.next_message(timeout=30)
            if message.get("id") == 2 and "method" not in message:
                break
            if "id" in message and "method" in message:
                asked.append(message["method"])
                result: Any = None
                if message["method"] == "agent/approve":
                    result = {"decision": "allow"}
                elif message["method"] == "workspace/applyEdit":
                    (workspace / "notes.txt").write_text("b\n")
                    result = {"applied": True}
                server.respond(message["id"], result)
        assert message["result"]["outcome"] == "done", message
        assert "agent/approve" in asked and "workspace/applyEdit" in asked
        assert (workspace / "notes.txt").read_text() == "b\n"
        server.request(3, "agent/sessions", {})
        sessions = server.answer(3)["result"]["sessions"]
        assert [s["sessionId"] for s in sessions] == [message["result"]["sessionId"]]
        assert server.stderr().count(REHEARSED) == 1
    finally:
        server.close()
        server.kill()
