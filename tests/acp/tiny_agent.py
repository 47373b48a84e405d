"""A tiny ACP agent on the SDK's agent side, for the kit's own tests (no model, no peers).

``python -m tests.acp.tiny_agent [--linger]``. Each prompt's first text block is one
command:

- ``say WORDS``: the words as three ``agent_message_chunk`` updates, ``end_turn``;
- ``read PATH``: through ``fs/read_text_file`` when the client declared it, else the disk;
  ``read-anyway PATH`` calls it even when undeclared (an agent breaking the rule);
- ``edit PATH TEXT``: a ``tool_call`` with a diff, ``session/request_permission``, then
  (allowed) ``fs/write_text_file`` or the disk, ``completed``; rejected: ``failed`` and
  the turn goes on; a cancel while it is pending withdraws it (``$/cancel_request``);
- ``run COMMAND``: ``terminal/create`` → ``wait_for_exit`` → ``output`` → ``release``;
- ``bad-usage``: a ``usage_update`` with ``used: null`` (claude-agent-acp's bug);
- ``wait``: until ``session/cancel``, then ``cancelled``.

``--linger``: ignore stdin EOF and keep a child process alive (an agent that does not
exit, for the exit check's own test).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, run_agent, text_block, update_agent_message
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
)


class TinyAgent:
    """The SDK ``Agent`` protocol, just enough of it."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.capabilities: dict[str, Any] = {}
        self.cwd: dict[str, Path] = {}
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **kw: Any
    ) -> InitializeResponse:
        if client_capabilities is not None:
            self.capabilities = client_capabilities.model_dump(by_alias=True)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=False, prompt_capabilities=PromptCapabilities(embedded_context=True)
            ),
            agent_info=Implementation(name="tiny-agent", version="1"),
            auth_methods=[],
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kw: Any) -> NewSessionResponse:
        session_id = uuid.uuid4().hex
        self.cwd[session_id] = Path(cwd)
        self.cancelled[session_id] = asyncio.Event()
        return NewSessionResponse(session_id=session_id)

    async def cancel(self, session_id: str, **kw: Any) -> None:
        self.cancelled[session_id].set()

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> PromptResponse:
        self.cancelled[session_id].clear()
        text = next((block.text for block in prompt if getattr(block, "type", "") == "text"), "")
        command, _, rest = text.partition(" ")
        stop = await getattr(self, "do_" + command.replace("-", "_"))(session_id, rest)
        return PromptResponse(stop_reason=stop or "end_turn")

    # --- the commands ----------------------------------------------------------------------
    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id, update_agent_message(text_block(text)))

    async def do_say(self, session_id: str, words: str) -> None:
        third = max(1, len(words) // 3)
        for piece in (words[:third], words[third : 2 * third], words[2 * third :]):
            await self.say(session_id, piece)

    def _fs(self, name: str) -> bool:
        return bool((self.capabilities.get("fs") or {}).get(name))

    async def do_read(self, session_id: str, path: str) -> None:
        file = self.cwd[session_id] / path
        if self._fs("readTextFile"):
            text = (await self.conn.read_text_file(path=str(file), session_id=session_id)).content
        else:
            text = file.read_text()
        await self.say(session_id, text)

    async def do_read_anyway(self, session_id: str, path: str) -> None:
        """``fs/read_text_file`` whatever the client declared (an agent breaking the rule)."""
        file = self.cwd[session_id] / path
        try:
            text = (await self.conn.read_text_file(path=str(file), session_id=session_id)).content
        except Exception as error:
            text = f"refused: {error}"
        await self.say(session_id, text)

    async def _update(self, session_id: str, update: dict[str, Any]) -> None:
        raw = self.conn._conn  # raw, so the test can see exactly what is sent
        await raw.send_notification("session/update", {"sessionId": session_id, "update": update})

    async def do_edit(self, session_id: str, rest: str) -> str | None:
        path, _, new_text = rest.partition(" ")
        file = self.cwd[session_id] / path
        old = file.read_text() if file.exists() else None
        call = {
            "toolCallId": "edit-1",
            "title": f"Edit {path}",
            "kind": "edit",
            "status": "pending",
        }
        diff = {"type": "diff", "path": str(file), "oldText": old, "newText": new_text}
        await self._update(session_id, {"sessionUpdate": "tool_call", **call, "content": [diff]})
        options = [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "always", "name": "Always", "kind": "allow_always"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]
        raw = self.conn._conn
        request_id = raw._next_request_id
        params = {"sessionId": session_id, "toolCall": {"toolCallId": "edit-1"}, "options": options}
        asked = asyncio.ensure_future(raw.send_request("session/request_permission", params))
        cancelled = asyncio.ensure_future(self.cancelled[session_id].wait())
        await asyncio.wait({asked, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        if not asked.done():
            await raw.send_notification("$/cancel_request", {"requestId": request_id})
            await asked  # the client must still answer; that answer is ignored
            return "cancelled"
        cancelled.cancel()
        outcome = asked.result()["outcome"]
        if outcome.get("outcome") == "cancelled":
            return "cancelled"
        if outcome["optionId"] == "reject":
            update = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "edit-1",
                "status": "failed",
            }
            await self._update(session_id, update)
            await self.say(session_id, "the edit was rejected; going on")
            return None
        if self._fs("writeTextFile"):
            await self.conn.write_text_file(content=new_text, path=str(file), session_id=session_id)
        else:
            file.write_text(new_text)
        update = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "edit-1",
            "status": "completed",
        }
        await self._update(session_id, update)
        return None

    async def do_run(self, session_id: str, command: str) -> None:
        if not self.capabilities.get("terminal"):
            done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=30)
            await self.say(session_id, done.stdout)
            return
        cwd = str(self.cwd[session_id])
        made = await self.conn.create_terminal(command=command, session_id=session_id, cwd=cwd)
        terminal = made.terminal_id
        await self.conn.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal)
        output = await self.conn.terminal_output(session_id=session_id, terminal_id=terminal)
        await self.conn.release_terminal(session_id=session_id, terminal_id=terminal)
        await self.say(session_id, output.output)

    async def do_bad_usage(self, session_id: str, rest: str) -> None:
        await self._update(
            session_id, {"sessionUpdate": "usage_update", "used": None, "size": 200000}
        )
        await self.say(session_id, "after the usage")

    async def do_wait(self, session_id: str, rest: str) -> str:
        await self.cancelled[session_id].wait()
        return "cancelled"


def main() -> None:
    linger = "--linger" in sys.argv
    child = None
    if linger:
        child = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"])
    asyncio.run(run_agent(TinyAgent()))
    if linger:
        assert child is not None
        os.write(2, b"stdin closed; lingering\n")
        child.wait()


if __name__ == "__main__":
    main()
