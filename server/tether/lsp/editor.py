"""The ``Editor`` seam over LSP: approvals, ``workspace/applyEdit`` and saving documents."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio.to_thread
from lsprotocol import types
from pydantic import ValidationError
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException

from tether_protocol import (
    AGENT_APPROVE_METHOD,
    AGENT_ASK_METHOD,
    AGENT_DIAGNOSTICS_METHOD,
    AGENT_SAVE_DOCUMENTS_METHOD,
    ApproveParams,
    ApproveResult,
    CommandPreview,
    Diagnostic,
    DiagnosticsResult,
    FileDiagnostics,
    SaveDocumentsResult,
)
from tether_protocol.code import CodeParams, CodeResult
from tether_protocol.methods import AGENT_CODE

from ..host import BufferDrift, EditOutcome, FileEdit
from ..text.display import shown
from ..text.edit import range_at
from ..tools.ask import Question
from ..tools.base import ToolError
from ..writes.disk import Refused, apply_on_disk, delete_on_disk, make_parents
from .ask import ask_params, asked_answer
from .documents import encoding_name
from .host import LspBuffers
from .link import ClientLink
from .prompt import MessagePrompt

log = logging.getLogger(__name__)

RAW_MESSAGE_METHODS = frozenset(
    {types.WORKSPACE_APPLY_EDIT, types.PROGRESS, types.WINDOW_WORK_DONE_PROGRESS_CREATE}
)
"""Messages whose params Tether writes as plain JSON: with lsprotocol's types, pygls'
converter builds its code for each type on first use, several ms of a server's first run
(``ApplyWorkspaceEditParams`` alone: 3-10 ms), in the middle of an editor's first prompt."""

RAW_ANSWER_METHODS = frozenset(
    {types.WORKSPACE_APPLY_EDIT, types.WINDOW_SHOW_MESSAGE_REQUEST, types.WINDOW_SHOW_DOCUMENT}
)
"""Requests whose answers are read raw and checked here: pygls would structure them into
lsprotocol types, and an answer that does not fit (``{}``, ``"yes"``) is then dropped,
leaving the request unanswered forever; ``{"applied": "false"}`` would read as applied."""

CANNOT_CREATE = "written to disk by Tether; your editor cannot create files"


def displayed(request: ApproveParams) -> ApproveParams:
    """``request`` as the editor shows it: its title, command, folder, diff and offered rules
    are text from outside (``text.display``: no control or bidi character of theirs reaches
    the editor raw). The arguments stay as the call has them: an answer may carry them back."""
    preview = request.preview
    if isinstance(preview, CommandPreview):
        command, cwd = shown(preview.command, lines=True), shown(preview.cwd)
        preview = preview.model_copy(update={"command": command, "cwd": cwd})
    else:
        preview = preview.model_copy(update={"diff": shown(preview.diff, lines=True)})
    patterns = request.suggested_patterns
    return request.model_copy(
        update={
            "title": shown(request.title),
            "preview": preview,
            "suggested_patterns": None if patterns is None else [shown(p) for p in patterns],
        }
    )


def applied_answer(raw: object) -> tuple[bool, str | None]:
    """(applied, why not) from a raw ``workspace/applyEdit`` answer: only a boolean ``true``
    is applied; anything malformed is not, with a one-line warning."""
    if isinstance(raw, dict) and isinstance(raw.get("applied"), bool):
        if raw["applied"]:
            return True, None
        reason = raw.get("failureReason")
        return False, reason if isinstance(reason, str) and reason else "the editor refused it"
    log.warning("workspace/applyEdit answer not understood (not applied): %.200r", raw)
    return False, f"the editor's answer was not understood ({_excerpt(raw)})"


def diagnostics_answer(raw: object) -> list[FileDiagnostics]:
    """The documents' problems in a raw ``agent/diagnostics`` answer: what does not fit the
    shape (the answer, an item, one diagnostic) is left out with a one-line warning."""
    try:
        return DiagnosticsResult.model_validate(raw).items
    except ValidationError:
        pass
    items = raw.get("items") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        log.warning("malformed agent/diagnostics answer (no problems): %.200r", raw)
        return []
    kept: list[FileDiagnostics] = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            continue
        found = item.get("diagnostics")
        diagnostics = []
        for entry in found if isinstance(found, list) else []:
            with contextlib.suppress(ValidationError):
                diagnostics.append(Diagnostic.model_validate(entry))
        kept.append(FileDiagnostics(uri=item["uri"], diagnostics=diagnostics))
    log.warning("agent/diagnostics answer partly malformed; the rest is used: %.200r", raw)
    return kept


def _read_late_answer(answer: asyncio.Future[Any]) -> None:
    if not answer.cancelled():
        answer.exception()


def _excerpt(raw: object) -> str:
    text = repr(raw)
    return text if len(text) <= 80 else text[:79] + "…"


class LspEditor:
    """Asks, edits and saves through the client, as far as its capabilities go."""

    def __init__(self, link: ClientLink, buffers: LspBuffers, previews: Callable[[], Path]) -> None:
        self._link = link
        self._buffers = buffers
        self._previews = previews
        """Where long previews are written for ``window/showDocument`` (the state dir's)."""
        self._diagnostics_refused = False
        """The client answered ``agent/diagnostics`` with an error: not asked again."""
        self._code_refused = False
        """The client answered ``agent/code`` with an error: not asked again."""

    async def _request(self, method: str, params: Any) -> Any:
        """Send a request and await its raw answer; an error answer raises
        ``JsonRpcException``. Shielded: a cancelled run must not leave pygls a cancelled
        future for the late reply. When the wait is cancelled (the run was cancelled or
        ended, an approval timed out) the request is withdrawn with ``$/cancelRequest``, so
        the client closes what it shows for it (an approval's diff, buttons, prompt)."""
        msg_id = str(uuid.uuid4())
        future = self._link.send_request(method, params, msg_id=msg_id)
        answer = asyncio.wrap_future(future)
        try:
            return await asyncio.shield(answer)
        except asyncio.CancelledError:
            if not future.done():
                self._link.send_notification(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            # The client's late answer (mostly its "cancelled" error) is read by no one:
            # unread, asyncio would log it as an error once collected.
            answer.add_done_callback(_read_late_answer)
            raise

    # --- approvals ---------------------------------------------------------------------
    async def ask_approval(
        self, request: ApproveParams, change: FileEdit | None = None
    ) -> ApproveResult | None:
        request = displayed(request)  # the gate keeps the call as it is
        if self._link.client_tether.approvals:
            return await self._ask_with_approve(request)
        return await self._ask_with_message(request)

    async def _ask_with_approve(self, request: ApproveParams) -> ApproveResult | None:
        raw = await self._request(AGENT_APPROVE_METHOD, request.to_wire())
        try:
            return ApproveResult.model_validate(raw, strict=False)
        except ValidationError:
            log.warning("malformed agent/approve answer (denied): %.200r", raw)
            return None

    async def _ask_with_message(self, request: ApproveParams) -> ApproveResult | None:
        prompt = MessagePrompt(self._request, self._link.client_capabilities, self._previews())
        return await prompt.ask(request)

    # --- edits -------------------------------------------------------------------------
    def _can_apply_edits(self) -> bool:
        caps = self._link.client_capabilities
        return bool(get_capability(caps, "workspace.apply_edit", False))

    def _can(self, operation: str) -> bool:
        """The client declares ``operation`` in ``workspaceEdit.resourceOperations``."""
        caps = self._link.client_capabilities
        operations = get_capability(caps, "workspace.workspace_edit.resource_operations", None)
        return operation in (operations or ())

    async def apply_edit(self, edit: FileEdit, label: str) -> EditOutcome:
        """Apply ``edit``; ``applied`` as soon as the editor answers ``applied: true`` (its
        ``didChange`` is reconciled whenever it comes, see ``LspBuffers``)."""
        buffers = self._buffers
        current = buffers.get(edit.path)
        if (current.version if current else None) != edit.version:
            if current is None or current.text != edit.base_text:
                return EditOutcome(False, f"{edit.path.name} changed in the editor meanwhile", True)
            # Same text under a version now known (the editor reported an earlier edit).
            edit = replace(edit, version=current.version)
        if not self._can_apply_edits():
            return await apply_on_disk(edit)
        if edit.create and not self._can("create"):
            outcome = await apply_on_disk(edit)
            return replace(outcome, note=CANNOT_CREATE) if outcome.applied else outcome
        if edit.create:
            try:  # the folders the editor's CreateFile needs, made without following a link
                await anyio.to_thread.run_sync(make_parents, edit.root, edit.path)
            except Refused as exc:
                return EditOutcome(False, f"refused to create {edit.path.name}: {exc}")
        params = {"edit": self._workspace_edit(edit), "label": label}
        record = buffers.expect(edit)
        answers: list[tuple[bool, str | None]] = []

        def on_answer(done: Future[Any]) -> None:
            # Runs as the answer is read, before any didChange that follows it is handled.
            answers.append(_applied(done))
            buffers.answered(record, answers[0][0])

        future = await self._send_edit(params, on_answer)
        applied, failure = answers[0] if answers else _applied(future)
        if not applied:
            now = buffers.get(edit.path)
            stale = (now.version if now else None) != edit.version
            return EditOutcome(False, failure, stale)
        if self._link.client_tether.save_documents:
            await self.save_documents([edit.path])
        return EditOutcome(True)

    def _workspace_edit(self, edit: FileEdit) -> dict[str, Any]:
        """The ``WorkspaceEdit`` of ``edit`` as plain JSON (see ``RAW_MESSAGE_METHODS``)."""
        encoding = encoding_name(self._link.workspace.position_encoding)
        text_edits: list[dict[str, Any]] = []
        for change in edit.changes:
            start, end = range_at(edit.base_text, change.start, change.end, encoding)
            text_edits.append(
                {
                    "range": {
                        "start": {"line": start[0], "character": start[1]},
                        "end": {"line": end[0], "character": end[1]},
                    },
                    "newText": change.new_text,
                }
            )
        changes: list[dict[str, Any]] = []
        if edit.create:
            changes.append({"kind": "create", "uri": edit.uri, "options": {"overwrite": False}})
        document = {"uri": edit.uri, "version": edit.version}
        changes.append({"textDocument": document, "edits": text_edits})
        return {"documentChanges": changes}

    async def delete_file(
        self, path: Path, uri: str, version: int | None, root: Path
    ) -> EditOutcome:
        if not self._can_apply_edits() or not self._can("delete"):
            return await delete_on_disk(path, root)
        edit = {"documentChanges": [{"kind": "delete", "uri": uri}]}
        params = {"edit": edit, "label": f"Tether: undo {path.name}"}
        return EditOutcome(*_applied(await self._send_edit(params, None)))

    async def _send_edit(
        self,
        params: dict[str, Any],
        on_answer: Callable[[Future[Any]], None] | None,
    ) -> Future[Any]:
        """Send ``workspace/applyEdit`` and wait for the answer (an error answer too);
        ``on_answer`` runs as it is read."""
        future: Future[Any] = self._link.send_request(types.WORKSPACE_APPLY_EDIT, params)
        if on_answer is not None:
            future.add_done_callback(on_answer)
        with contextlib.suppress(Exception):  # an error answer is read from the future
            await asyncio.shield(asyncio.wrap_future(future))
        return future

    def take_drift(self, run_id: str) -> Sequence[BufferDrift]:
        return self._buffers.take_drift(run_id)

    # --- diagnostics -------------------------------------------------------------------
    async def diagnostics(self, uris: Sequence[str] | None) -> Sequence[FileDiagnostics] | None:
        """``agent/diagnostics``, asked only of a client that declared it; after an error
        answer (MethodNotFound or any other) never again on this connection. A malformed
        answer is no problems."""
        if not self._link.client_tether.diagnostics or self._diagnostics_refused:
            return None
        params: dict[str, Any] = {} if uris is None else {"uris": list(uris)}
        try:
            raw = await self._request(AGENT_DIAGNOSTICS_METHOD, params)
        except JsonRpcException as exc:
            self._diagnostics_refused = True
            message = " ".join(str(exc.message or exc).split())[:200]
            log.warning("agent/diagnostics answered with an error (not asked again): %s", message)
            return None
        return diagnostics_answer(raw)

    # --- code (the editor's language servers) ---------------------------------------------
    def answers_code(self) -> bool:
        """The client declared ``agent/code`` and has not answered it with an error."""
        return self._link.client_tether.code and not self._code_refused

    async def code(self, params: CodeParams, seconds: float) -> CodeResult | None:
        """``agent/code``, asked only of a client that declared it; after an error answer
        (MethodNotFound or any other) never again on this connection. None: not asked, or
        that error (the server answers from its own language servers). ``ToolError`` when
        no answer comes within ``seconds`` (the request is withdrawn) or the answer
        is malformed."""
        if not self.answers_code():
            return None
        wire = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            with anyio.fail_after(seconds):
                raw = await self._request(AGENT_CODE, wire)
        except TimeoutError:
            raise ToolError(
                f"the editor's language server did not answer within {seconds:g} s"
            ) from None
        except JsonRpcException as exc:
            self._code_refused = True
            message = " ".join(str(exc.message or exc).split())[:200]
            log.warning("agent/code answered with an error (not asked again): %s", message)
            return None
        try:
            return CodeResult.model_validate(raw)
        except ValidationError:
            log.warning("malformed agent/code answer: %.200r", raw)
            raise ToolError("the editor answered agent/code with something unusable") from None

    # --- questions (``ask_user``) ------------------------------------------------------
    def can_ask(self) -> bool:
        return self._link.client_tether.ask

    async def ask_user(self, question: Question) -> str | None:
        """``agent/ask`` (``lsp/ask.py``); cancelling the wait withdraws it."""
        sent = ask_params(question)
        try:
            raw = await self._request(AGENT_ASK_METHOD, sent.to_wire())
        except JsonRpcException as exc:
            message = " ".join(str(exc.message or exc).split())[:200]
            log.warning("agent/ask answered with an error (no answer): %s", message)
            return None
        return asked_answer(raw, question, sent)

    # --- saving ------------------------------------------------------------------------
    async def save_documents(self, paths: Sequence[Path]) -> Sequence[Path]:
        if not self._link.client_tether.save_documents or not paths:
            return ()
        buffers = self._buffers
        uris = [buffers.uri_of(p) for p in paths]
        try:
            raw = await self._request(AGENT_SAVE_DOCUMENTS_METHOD, {"uris": uris})
            saved = SaveDocumentsResult.model_validate(raw, strict=False).saved
        except Exception as exc:  # an error or a malformed answer: nothing known saved
            log.warning("agent/saveDocuments failed: %.200s", str(exc).replace("\n", " "))
            return ()
        done = [p for p, uri in zip(paths, uris, strict=True) if uri in saved]
        for path in done:
            buffers.saved(path)
        return done

    def shows_change_sets(self) -> bool:
        """A change of several files (a rename) is shown whole: by a client that declared
        ``changeSets``, or in the message of a client without ``agent/approve``
        (``lsp/prompt.py``: the diff as text, or opened with ``showDocument``)."""
        declared = self._link.client_tether
        return declared.change_sets or not declared.approvals

    def unsaved_edits(self) -> Sequence[Path]:
        return self._buffers.unsaved_agent_edits()


def _applied(done: Future[Any]) -> tuple[bool, str | None]:
    """(applied, why not) of a finished ``workspace/applyEdit`` request: an error answer
    (Eglot refuses with one) is not applied, with a one-line warning and no traceback."""
    if done.cancelled():
        return False, "the request was cancelled"
    error = done.exception()
    if error is None:
        return applied_answer(done.result())
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    message = " ".join(str(message).split())[:300]  # one line, whatever the editor sent
    code = getattr(error, "code", None)
    log.warning("workspace/applyEdit: the editor answered with error %s: %s", code, message)
    return False, f"the editor answered with an error: {message}"
