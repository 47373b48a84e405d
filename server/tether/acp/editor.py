"""The Host seams over ACP: the editor's buffers (``fs/read_text_file``), approvals
(``session/request_permission``), writes (``fs/write_text_file``, else Tether's confined
disk writer) and terminals (``terminal/*``).

A method the client did not declare in ``initialize`` is never called: without
``fs.readTextFile`` reads go to the disk, without ``fs.writeTextFile`` the disk writer
(``writes/disk.py``) writes, without ``terminal`` Tether's own runner runs the command.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tether_protocol import (
    ApproveParams,
    ApproveResult,
    CommandPreview,
    DiffPreview,
    ProposedRule,
)

from ..host import Buffer, EditOutcome, FileEdit, TerminalOutcome
from ..text.display import shown, shown_value
from ..tools.ask import Question
from ..tools.base import one_line
from ..workspace.folders import uri_for
from ..writes.disk import apply_on_disk, delete_on_disk
from .ask import elicitation, elicited
from .updates import DiffShown, Translator, tool_call_id
from .wire import Connection, RpcError

log = logging.getLogger(__name__)

Mode = Literal["ask", "accept-edits", "read-only"]

READ_ONLY_REFUSAL = (
    "The session is in read-only mode: nothing may be changed or run. Tell the user what "
    "you would do; they can switch the mode."
)


@dataclass(frozen=True, slots=True)
class ClientCapabilities:
    """What the client declared in ``initialize``."""

    read: bool = False
    write: bool = False
    terminal: bool = False
    elicitation: bool = False
    """``elicitation.form`` declared: ``ask_user`` asks through ``elicitation/create``."""

    @classmethod
    def from_wire(cls, raw: object) -> ClientCapabilities:
        caps = raw if isinstance(raw, dict) else {}
        fs = caps.get("fs") if isinstance(caps.get("fs"), dict) else {}
        assert isinstance(fs, dict)
        return cls(
            read=fs.get("readTextFile") is True,
            write=fs.get("writeTextFile") is True,
            terminal=caps.get("terminal") is True,
            elicitation=_declared_form(caps.get("elicitation")),
        )


def _declared_form(raw: object) -> bool:
    """``elicitation: {form: {}}``: form elicitation declared (absent or null: not)."""
    return isinstance(raw, dict) and isinstance(raw.get("form"), dict)


class AcpBuffers:
    """The editor's buffers as ACP offers them: asked for by path when the client declared
    ``fs.readTextFile``; the text of embedded ``resource`` blocks of the prompt in between
    (what the user attached, as they see it)."""

    def __init__(self, connection: Connection, session_id: str, can_read: bool) -> None:
        self._connection = connection
        self._session_id = session_id
        self._can_read = can_read
        self._attached: dict[Path, Buffer] = {}

    def attach(self, path: Path, text: str) -> None:
        """The prompt carried ``path``'s text (an embedded resource)."""
        self._attached[path] = Buffer(path, uri_for(path), text, None)

    def clear_attached(self) -> None:
        self._attached.clear()

    def get(self, path: Path) -> Buffer | None:
        return self._attached.get(path)

    def all(self) -> Sequence[Buffer]:
        return tuple(self._attached.values())

    def mark_stale(self, path: Path) -> None:
        self._attached.pop(path, None)

    async def read_buffer(self, path: Path) -> Buffer | None:
        if not self._can_read:
            return None
        params = {"sessionId": self._session_id, "path": str(path)}
        try:
            raw = await self._connection.request("fs/read_text_file", params)
        except RpcError as exc:  # not there, or not readable: the disk says which
            log.debug("fs/read_text_file %s: %s", path, exc.message)
            return None
        content = raw.get("content") if isinstance(raw, dict) else None
        if not isinstance(content, str):
            log.warning("fs/read_text_file answer without content (disk read): %.200r", raw)
            return None
        return Buffer(path, uri_for(path), content, None)


class AcpEditor:
    """Approvals, writes and commands of one ACP session, as far as the client declared."""

    def __init__(
        self,
        connection: Connection,
        session_id: str,
        capabilities: ClientCapabilities,
        buffers: AcpBuffers,
        translator: Translator,
        mode: Callable[[], Mode],
    ) -> None:
        self._connection = connection
        self._session_id = session_id
        self.capabilities = capabilities
        self._buffers = buffers
        self._translator = translator
        self._mode = mode

    # --- approvals ---------------------------------------------------------------------
    async def ask_approval(
        self, request: ApproveParams, change: FileEdit | None = None
    ) -> ApproveResult | None:
        if self._mode() == "read-only":
            return ApproveResult(decision="deny", feedback=READ_ONLY_REFUSAL)
        call = tool_call_id(request.run_id, request.call_id)
        # What the question shows of the call is text from outside (``text.display``).
        kind = self._translator.presented(request.tool, request.arguments)[0]
        title = request.title
        if kind == "other" and request.arguments:  # an MCP tool's call: its title names no
            # file or command, and title-only clients (codecompanion) show nothing else
            title = f"{title} {one_line(json.dumps(request.arguments, ensure_ascii=False), 60)}"
        tool_call: dict[str, Any] = {
            "toolCallId": call,
            "title": shown(title),
            "kind": kind,
            "status": "pending",
            "rawInput": shown_value(request.arguments),
        }
        preview = request.preview
        if change is not None:  # the whole change, as the tool computed it: nothing re-read
            old = None if change.create else change.base_text
            diff = DiffShown(change.path, old, change.new_text)
            self._translator.diffs[call] = diff
            tool_call["content"] = [diff.to_wire()]
            tool_call["locations"] = [{"path": str(diff.path)}]
        elif isinstance(preview, DiffPreview):  # a change of several files (a rename)
            text = shown(preview.diff, lines=True)
            tool_call["content"] = [{"type": "content", "content": {"type": "text", "text": text}}]
        elif isinstance(preview, CommandPreview):
            tool_call["kind"] = "execute"
            command, cwd = shown(preview.command, lines=True), shown(preview.cwd)
            tool_call["rawInput"] = {**tool_call["rawInput"], "command": command, "cwd": cwd}
            text = f"$ {command}\n(in {cwd})"
            tool_call["content"] = [{"type": "content", "content": {"type": "text", "text": text}}]
        patterns = request.suggested_patterns or []
        options = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
        if patterns:  # absent for a sensitive path: always asked
            name = f"Always allow {shown(patterns[0])} (this session)"
            options.append({"optionId": "allow-always", "name": name, "kind": "allow_always"})
        options.append({"optionId": "reject", "name": "Reject", "kind": "reject_once"})
        params = {"sessionId": self._session_id, "toolCall": tool_call, "options": options}
        try:
            raw = await self._connection.request("session/request_permission", params)
        except RpcError as exc:
            log.warning("session/request_permission answered with an error (denied): %s", exc)
            return None
        return _answer(raw, patterns)

    # --- questions (``ask_user``) ------------------------------------------------------
    def can_ask(self) -> bool:
        return self.capabilities.elicitation

    async def ask_user(self, question: Question) -> str | None:
        """``elicitation/create`` in form mode, tied to the asking call (``acp/ask.py``)."""
        call = tool_call_id(question.run_id, question.call_id) if question.call_id else None
        params = elicitation(self._session_id, call, question)
        try:
            raw = await self._connection.request("elicitation/create", params)
        except RpcError as exc:
            log.warning("elicitation/create answered with an error (no answer): %s", exc)
            return None
        return elicited(raw, question)

    # --- edits -------------------------------------------------------------------------
    async def apply_edit(self, edit: FileEdit, label: str) -> EditOutcome:
        call = self._translator.current_call
        if call is not None:
            old = None if edit.create else edit.base_text
            self._translator.diffs[call] = DiffShown(edit.path, old, edit.new_text)
        self._buffers.mark_stale(edit.path)
        if not self.capabilities.write:
            return await apply_on_disk(edit)
        if self.capabilities.read and not edit.create:
            now = await self._buffers.read_buffer(edit.path)
            if now is not None and now.text != edit.base_text:
                return EditOutcome(False, f"{edit.path.name} changed in the editor meanwhile", True)
        params = {"sessionId": self._session_id, "path": str(edit.path), "content": edit.new_text}
        try:
            await self._connection.request("fs/write_text_file", params)
        except RpcError as exc:
            return EditOutcome(False, f"the editor did not write it: {exc.message[:300]}")
        return EditOutcome(True)

    async def save_documents(self, paths: Sequence[Path]) -> Sequence[Path]:
        return ()  # fs/write_text_file writes the file itself; nothing is left unsaved

    async def delete_file(
        self, path: Path, uri: str, version: int | None, root: Path
    ) -> EditOutcome:
        return await delete_on_disk(path, root)

    def shows_change_sets(self) -> bool:
        """A change of several files (a rename) is shown as its diff, as text."""
        return True

    def unsaved_edits(self) -> Sequence[Path]:
        return ()

    # --- terminals ---------------------------------------------------------------------
    def has_terminal(self) -> bool:
        return self.capabilities.terminal

    async def run_in_terminal(
        self, command: str, cwd: Path, seconds: float, output_limit: int
    ) -> TerminalOutcome:
        """``terminal/create`` → ``wait_for_exit`` (killed at the timeout) → ``output``,
        always ``release``d; the terminal is shown in the running call."""
        params = {
            "sessionId": self._session_id,
            "command": "bash",
            "args": ["-c", command],
            "env": [],
            "cwd": str(cwd),
            "outputByteLimit": output_limit,
        }
        try:
            created = await self._connection.request("terminal/create", params)
        except RpcError as exc:
            raise OSError(f"the editor could not start it: {exc.message[:300]}") from exc
        terminal_id = created.get("terminalId") if isinstance(created, dict) else None
        if not isinstance(terminal_id, str):
            raise OSError(f"terminal/create answered without a terminalId: {created!r:.200}")
        ids = {"sessionId": self._session_id, "terminalId": terminal_id}
        call = self._translator.current_call
        if call is not None:
            self._connection.notify(
                "session/update",
                {
                    "sessionId": self._session_id,
                    "update": {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": call,
                        "status": "in_progress",
                        "content": [{"type": "terminal", "terminalId": terminal_id}],
                    },
                },
            )
        timed_out = False
        try:
            try:
                with_timeout = asyncio.wait_for(
                    self._connection.request("terminal/wait_for_exit", ids), seconds
                )
                exited = await with_timeout
            except TimeoutError:
                timed_out = True
                exited = None
                await self._quietly("terminal/kill", ids)
            except asyncio.CancelledError:
                await asyncio.shield(self._quietly("terminal/kill", ids))
                raise
            output = await self._connection.request("terminal/output", ids)
        except RpcError as exc:
            raise OSError(f"the editor's terminal failed: {exc.message[:300]}") from exc
        finally:
            await asyncio.shield(self._quietly("terminal/release", ids))
        text = output.get("output") if isinstance(output, dict) else None
        status = output.get("exitStatus") if isinstance(output, dict) else None
        if not isinstance(status, dict) and isinstance(exited, dict):
            status = exited
        code = status.get("exitCode") if isinstance(status, dict) else None
        if isinstance(output, dict) and output.get("truncated") is True and isinstance(text, str):
            text = "… [the beginning was cut by the terminal]\n" + text
        return TerminalOutcome(
            output=text if isinstance(text, str) else "",
            exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            timed_out=timed_out,
        )

    async def _quietly(self, method: str, params: dict[str, Any]) -> None:
        try:
            await asyncio.wait_for(self._connection.request(method, params), 5)
        except (RpcError, TimeoutError) as exc:
            log.warning("%s failed: %s", method, exc)


def _answer(raw: object, patterns: Sequence[str]) -> ApproveResult | None:
    """The permission answer as Tether's: only a selected allow is an allow."""
    outcome = raw.get("outcome") if isinstance(raw, dict) else None
    if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
        return None  # cancelled, or not understood: deny
    chosen = outcome.get("optionId")
    if chosen == "allow":
        return ApproveResult(decision="allow")
    if chosen == "allow-always" and patterns:
        return ApproveResult(decision="allow-always", rule=ProposedRule(pattern=patterns[0]))
    if chosen == "reject":
        return ApproveResult(decision="deny")
    log.warning("session/request_permission chose an unknown option (denied): %.100r", chosen)
    return None
