"""Approvals the server stops waiting for are withdrawn, and unanswered ones time out.

A real editor keeps an approval open (VS Code's diff tab and buttons, Neovim's float, an
Emacs minibuffer prompt) until its request goes away. When the run is cancelled or ends,
or no one answers within ``approvalTimeoutSeconds``, the server sends ``$/cancelRequest``
for the ``agent/approve`` (or ``window/showMessageRequest``) it stopped waiting for; pygls
clients cancel the handler, as vscode-languageclient cancels its token.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tether_protocol import ToolResultEvent

from .conftest import Editor, script

WRITE = {"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}


class Withdrawn:
    """An approval UI that stays open until the server withdraws it."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.withdrawn = asyncio.Event()

    async def wait_forever(self, params: Any) -> Any:
        self.opened.set()
        try:
            await asyncio.Event().wait()  # the user never answers
        except asyncio.CancelledError:
            self.withdrawn.set()
            raise
        return {"decision": "allow"}


async def test_cancelling_a_run_withdraws_its_open_approval(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=script({"toolCalls": [WRITE]}))
    ui = Withdrawn()
    editor.approve = ui.wait_forever
    running = asyncio.ensure_future(editor.run(prompt="go", runId="r1"))
    async with asyncio.timeout(10):
        await ui.opened.wait()
    await editor.client.protocol.send_request_async("agent/cancel", {"runId": "r1"})
    result = await asyncio.wait_for(running, 10)
    assert result["outcome"] == "cancelled"
    async with asyncio.timeout(10):
        await ui.withdrawn.wait()  # the client was told to close it
    assert not (workspace / "new.txt").exists()


async def test_an_unanswered_approval_is_denied_after_the_timeout_and_withdrawn(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(
        workspace,
        options={"approvalTimeoutSeconds": 1},
        script=script({"toolCalls": [WRITE]}, {"text": "ok"}),
    )
    ui = Withdrawn()
    editor.approve = ui.wait_forever
    result = await asyncio.wait_for(editor.run(prompt="go", runId="r1"), 30)
    assert result["outcome"] == "done"  # the run went on without the call
    [denied] = [e for e in editor.events_of("r1") if isinstance(e, ToolResultEvent)]
    assert not denied.ok
    assert "No one answered the approval within 1 seconds" in denied.output
    assert "The user said" not in denied.output  # Tether's words, not the user's
    async with asyncio.timeout(10):
        await ui.withdrawn.wait()
    assert not (workspace / "new.txt").exists()


async def test_an_unanswered_message_prompt_is_withdrawn_too(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(
        workspace,
        approvals=False,
        options={"approvalTimeoutSeconds": 1},
        script=script({"toolCalls": [WRITE]}, {"text": "ok"}),
    )
    ui = Withdrawn()
    editor.message_answer = lambda: ui.wait_forever(None)
    result = await asyncio.wait_for(editor.run(prompt="go", runId="r1"), 30)
    assert result["outcome"] == "done"
    async with asyncio.timeout(10):
        await ui.withdrawn.wait()
    assert not (workspace / "new.txt").exists()
