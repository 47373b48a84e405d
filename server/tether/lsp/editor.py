"""The ``Editor`` seam over LSP: approvals, ``workspace/applyEdit`` and saving documents."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from lsprotocol import types
from pydantic import ValidationError
from pygls.capabilities import get_capability

from tether_protocol import (
    AGENT_APPROVE_METHOD,
    AGENT_SAVE_DOCUMENTS_METHOD,
    ApproveParams,
    ApproveResult,
    CommandPreview,
    SaveDocumentsResult,
)

from ..diskedit import apply_on_disk, delete_on_disk
from ..host import ApprovalAnswer, ApprovalRequest, EditOutcome, FileEdit
from ..textedit import range_at
from .documents import encoding_name

if TYPE_CHECKING:
    from .server import TetherServer

log = logging.getLogger(__name__)

VERIFY_SECONDS = 2.0
"""How long an applied edit may take to show up in the buffer updates."""

ACTIONS = {"Allow": "allow", "Allow always": "allow-always", "Deny": "deny"}


class LspEditor:
    """Asks, edits and saves through the client, as far as its capabilities go."""

    def __init__(self, server: TetherServer) -> None:
        self._server = server

    # --- approvals ---------------------------------------------------------------------
    async def ask_approval(self, request: ApprovalRequest) -> ApprovalAnswer | None:
        if self._server.client_tether.approvals:
            return await self._ask_with_approve(request)
        return await self._ask_with_message(request)

    async def _ask_with_approve(self, request: ApprovalRequest) -> ApprovalAnswer | None:
        params = ApproveParams(
            run_id=request.run_id,
            call_id=request.call_id,
            tool=request.tool,
            title=request.title,
            arguments=request.arguments,
            preview=request.preview,
        )
        # shield: a cancelled run must not leave pygls a cancelled future for the late reply
        raw = await asyncio.shield(
            self._server.protocol.send_request_async(AGENT_APPROVE_METHOD, params.to_wire())
        )
        try:
            answer = ApproveResult.model_validate(raw, strict=False)
        except ValidationError:
            log.warning("malformed agent/approve answer (denied): %r", raw)
            return None
        return ApprovalAnswer(answer.decision, answer.feedback, answer.arguments)

    async def _ask_with_message(self, request: ApprovalRequest) -> ApprovalAnswer | None:
        preview = request.preview
        if isinstance(preview, CommandPreview):
            detail = f"$ {preview.command}\n(in {preview.cwd})"
        else:
            detail = preview.diff if len(preview.diff) < 2000 else preview.diff[:2000] + "…"
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=f"Tether wants to: {request.title}\n\n{detail}",
            actions=[types.MessageActionItem(title=t) for t in ACTIONS],
        )
        item = await asyncio.shield(self._server.window_show_message_request_async(params))
        title = getattr(item, "title", None)
        decision = ACTIONS.get(title) if isinstance(title, str) else None
        if decision is None:
            return None
        return ApprovalAnswer(decision)  # type: ignore[arg-type]

    # --- edits -------------------------------------------------------------------------
    def _can_apply_edits(self) -> bool:
        caps = self._server.client_capabilities
        return bool(get_capability(caps, "workspace.apply_edit", False))

    async def apply_edit(self, edit: FileEdit, label: str) -> EditOutcome:
        buffers = self._server.buffers
        current = buffers.get(edit.path)
        if (current.version if current else None) != edit.version:
            return EditOutcome(False, f"{edit.path.name} changed in the editor meanwhile", True)
        if not self._can_apply_edits():
            return await apply_on_disk(edit)
        if edit.create:
            await anyio.to_thread.run_sync(_make_parent, edit.path)
        result = await asyncio.shield(
            self._server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=self._workspace_edit(edit), label=label)
            )
        )
        if not result.applied:
            now = buffers.get(edit.path)
            stale = (now.version if now else None) != edit.version
            return EditOutcome(False, result.failure_reason or "the editor refused it", stale)
        return await self._confirm(edit)

    def _workspace_edit(self, edit: FileEdit) -> types.WorkspaceEdit:
        encoding = encoding_name(self._server.workspace.position_encoding)
        text_edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = []
        for change in edit.changes:
            start, end = range_at(edit.base_text, change.start, change.end, encoding)
            text_edits.append(
                types.TextEdit(
                    range=types.Range(
                        start=types.Position(line=start[0], character=start[1]),
                        end=types.Position(line=end[0], character=end[1]),
                    ),
                    new_text=change.new_text,
                )
            )
        changes: list[Any] = []
        if edit.create:
            changes.append(
                types.CreateFile(uri=edit.uri, options=types.CreateFileOptions(overwrite=False))
            )
        changes.append(
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=edit.uri, version=edit.version
                ),
                edits=text_edits,
            )
        )
        return types.WorkspaceEdit(document_changes=changes)

    async def _confirm(self, edit: FileEdit) -> EditOutcome:
        """Trust but verify: an open buffer must show the change (some editors skip an edit
        they cannot apply and still answer ``applied: true``)."""
        buffers = self._server.buffers
        buffers.note_agent_edit(edit.path, edit.uri, edit.new_text)
        if edit.version is not None or buffers.get_open(edit.path) is not None:
            seen = await buffers.wait_for_text(edit.path, edit.new_text, VERIFY_SECONDS)
            if not seen:
                return EditOutcome(
                    False,
                    "the editor answered that it applied the edit, but the buffer does not "
                    "show it (it changed meanwhile)",
                    True,
                )
        if self._server.client_tether.save_documents:
            await self.save_documents([edit.path])
        return EditOutcome(True)

    async def delete_file(self, path: Path, uri: str, version: int | None) -> EditOutcome:
        caps = self._server.client_capabilities
        operations = get_capability(caps, "workspace.workspace_edit.resource_operations", None)
        if not self._can_apply_edits() or not operations or "delete" not in operations:
            return await delete_on_disk(path)
        edit = types.WorkspaceEdit(document_changes=[types.DeleteFile(uri=uri)])
        result = await asyncio.shield(
            self._server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label=f"Tether: undo {path.name}")
            )
        )
        return EditOutcome(bool(result.applied), result.failure_reason)

    # --- saving ------------------------------------------------------------------------
    async def save_documents(self, paths: Sequence[Path]) -> Sequence[Path]:
        if not self._server.client_tether.save_documents or not paths:
            return ()
        buffers = self._server.buffers
        uris = [buffers.uri_of(p) for p in paths]
        try:
            raw = await asyncio.shield(
                self._server.protocol.send_request_async(
                    AGENT_SAVE_DOCUMENTS_METHOD, {"uris": uris}
                )
            )
            saved = SaveDocumentsResult.model_validate(raw, strict=False).saved
        except Exception:
            log.warning("agent/saveDocuments failed", exc_info=True)
            return ()
        done = [p for p, uri in zip(paths, uris, strict=True) if uri in saved]
        for path in done:
            buffers.saved(path)
        return done

    def unsaved_edits(self) -> Sequence[Path]:
        return self._server.buffers.unsaved_agent_edits()


def _make_parent(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
