"""Approvals for clients without Tether's ``agent/approve``: ``window/showMessageRequest``.

Such prompts are one message in a minibuffer (Emacs + Eglot), a message area (Vim +
vim-lsp, which returns only the first action, or coc.nvim) or a toast. Nobody may allow
what they were not shown, so ``Allow`` is offered only when the whole diff or command is
shown: in the message when it fits, else in a document the editor opened first with
``window/showDocument``. When neither is possible the prompt shows the head, says the rest
cannot be shown, and offers ``Deny`` alone (the first action, so vim-lsp stays safe); the
model is told to make the change in smaller pieces.

A ``null`` answer is the user's deny: they closed the prompt, or chose ``Deny`` in a client
that returns only the first action (vim-lsp). Only a malformed answer, an error or no answer
at all deny by default ("no one allowed it").
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from lsprotocol import types
from pygls.capabilities import get_capability

from tether_protocol import ApproveParams, ApproveResult, CommandPreview, Preview

from ..writes.disk import Changed, Refused, own_folder, replace_confined

log = logging.getLogger(__name__)

ACTIONS = {"Allow": "allow", "Allow always": "allow-always", "Deny": "deny"}
COMMAND_ACTIONS = {
    "Allow": "allow",
    "Allow always (this exact command)": "allow-always",
    "Deny": "deny",
}
"""For a command "allow always" covers that exact command only, and the button says so."""
CALL_ACTIONS = {
    "Allow": "allow",
    "Allow always (this exact call)": "allow-always",
    "Deny": "deny",
}
"""An MCP server's tool is previewed as a command but is a call: "this exact call"."""


def actions_for(request: ApproveParams) -> dict[str, str]:
    """The buttons of ``request``'s question, by what "allow always" would cover."""
    if not isinstance(request.preview, CommandPreview):
        return ACTIONS
    return CALL_ACTIONS if request.tool.startswith("mcp__") else COMMAND_ACTIONS


MESSAGE_PREVIEW_CHARS = 2000
"""The longest preview shown in the message itself."""
MESSAGE_PREVIEW_LINES = 40
"""The most lines such a preview may have."""

Send = Callable[[str, Any], Awaitable[Any]]
"""Sends a request to the client and returns its raw answer (raises on an error answer)."""


def message_detail(preview: Preview, tool: str = "bash") -> str:
    """What a message prompt shows of a preview (an MCP call's has no shell prompt)."""
    if isinstance(preview, CommandPreview):
        prompt = "" if tool.startswith("mcp__") else "$ "
        return f"{prompt}{preview.command}\n(in {preview.cwd})"
    return preview.diff


TITLE_CHARS = 160
"""The longest title in a prompt's first and last line (a long command is cut there)."""


def change_summary(preview: Preview) -> str:
    """A few words on the size of a change: ``+3 −1 lines``; ``""`` for a command."""
    if isinstance(preview, CommandPreview):
        return ""
    lines = preview.diff.splitlines()
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    return f"+{added} −{removed} lines"


def prompt_message(title: str, preview: Preview, shown: str, whole: bool) -> str:
    """The prompt's text: a short summary first and the title again last, so that UIs
    that show one line (or the last one: a message area, a minibuffer) still say what is
    asked, whichever end they keep."""
    short = title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"
    summary = change_summary(preview)
    first = f"Tether wants to: {short}" + (f" ({summary})" if summary else "")
    last = f"Allow? {short}" if whole else f"Cannot be allowed here: {short}"
    return f"{first}\n\n{shown}\n\n{last}"


def fits_in_message(detail: str) -> bool:
    """A preview short enough to be shown whole in a message prompt."""
    return len(detail) <= MESSAGE_PREVIEW_CHARS and detail.count("\n") < MESSAGE_PREVIEW_LINES


def head_of(detail: str) -> str:
    """The start of a preview too long to show, marked as cut."""
    lines = detail[:MESSAGE_PREVIEW_CHARS].split("\n")[: MESSAGE_PREVIEW_LINES // 2]
    left = detail.count("\n") + 1 - len(lines)
    return "\n".join(lines) + f"\n… ({left} more lines not shown)"


def too_long_feedback(detail: str) -> str:
    """What the model is told when a preview could not be shown (so could not be allowed)."""
    return (
        "(from Tether, not the user) this editor shows approvals as a short message and "
        f"cannot show the whole change ({len(detail)} characters, "
        f"{detail.count(chr(10)) + 1} lines; the limit is {MESSAGE_PREVIEW_CHARS} "
        f"characters and {MESSAGE_PREVIEW_LINES} lines). Make it as several smaller changes."
    )


class MessagePrompt:
    """Asks with ``window/showMessageRequest``, never offering Allow for unseen text."""

    def __init__(self, send: Send, capabilities: types.ClientCapabilities, previews: Path) -> None:
        self._send = send
        self._can_show_documents = bool(
            get_capability(capabilities, "window.show_document.support", False)
        )
        self._previews = previews

    async def ask(self, request: ApproveParams) -> ApproveResult | None:
        """The user's answer (``null``: their deny); None (deny by default) for an answer
        that is none of the actions offered."""
        detail = message_detail(request.preview, request.tool)
        shown_in: Path | None = None
        if fits_in_message(detail):
            shown = detail
        else:
            shown_in = await self._show_document(request.preview, detail)
            shown = (
                f"The whole change ({detail.count(chr(10)) + 1} lines) is open in the editor "
                f"as {shown_in.name}."
                if shown_in is not None
                else f"{head_of(detail)}\n\nThis change is too long to show here, so it "
                "cannot be allowed here."
            )
        whole = shown_in is not None or fits_in_message(detail)
        actions = actions_for(request)
        titles = list(actions) if whole else ["Deny"]
        message = prompt_message(request.title, request.preview, shown, whole)
        try:
            raw = await self._send(
                types.WINDOW_SHOW_MESSAGE_REQUEST,
                types.ShowMessageRequestParams(
                    type=types.MessageType.Warning,
                    message=message,
                    actions=[types.MessageActionItem(title=t) for t in titles],
                ),
            )
        finally:
            if shown_in is not None:  # also when the run was cancelled meanwhile
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(lambda: shown_in.unlink(missing_ok=True))
        title = raw.get("title") if isinstance(raw, dict) else None
        if raw is not None and not isinstance(title, str):
            log.warning("malformed window/showMessageRequest answer (denied): %.200r", raw)
        if not whole:
            return ApproveResult(decision="deny", feedback=too_long_feedback(detail))
        if raw is None:
            # The user closed the prompt or picked an action their client cannot return
            # (vim-lsp returns only the first): their refusal, not the absence of an answer.
            return ApproveResult(decision="deny")
        decision = actions.get(title) if isinstance(title, str) and title in titles else None
        return None if decision is None else ApproveResult(decision=decision)  # type: ignore[arg-type]

    async def _show_document(self, preview: Preview, detail: str) -> Path | None:
        """Write the whole preview to a file and have the editor open it; the file when
        the editor says it is shown."""
        if not self._can_show_documents:
            return None
        suffix = ".txt" if isinstance(preview, CommandPreview) else ".diff"
        path = self._previews / f"tether-approval-{uuid.uuid4().hex[:12]}{suffix}"
        try:
            await anyio.to_thread.run_sync(_write, path, detail)
        except OSError as exc:
            log.warning("cannot write an approval preview to %s: %s", path, exc)
            return None
        try:
            raw = await self._send(
                types.WINDOW_SHOW_DOCUMENT,
                types.ShowDocumentParams(uri=path.as_uri(), take_focus=True),
            )
        except Exception as exc:  # an error answer: not shown
            log.warning("window/showDocument failed: %.200s", str(exc).replace("\n", " "))
            raw = None
        if isinstance(raw, dict) and raw.get("success") is True:
            return path
        await anyio.to_thread.run_sync(lambda: path.unlink(missing_ok=True))
        return None


def _write(path: Path, text: str) -> None:
    """A new preview file in the state folder's ``previews`` (the confined writer's)."""
    folder = own_folder(path.parent)
    try:
        replace_confined(folder, folder / path.name, text.encode("utf-8"), None, private=True)
    except (Refused, Changed) as exc:
        raise OSError(str(exc)) from exc
