"""Server → client requests: ``agent/approve`` and ``agent/saveDocuments``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from .base import Range, WireModel
from .rules import ProposedRule


class ProposedHunk(WireModel):
    """One run of changed lines of a proposed file change, as a whole-line text edit.

    ``range`` covers whole lines of the file as the server read it, in LSP positions counted
    in the negotiated position encoding (empty for lines inserted before its start line),
    and ``text`` is what the call puts there, in the file's line ends: the edit the server
    applies, piece by piece.
    """

    range: Range
    text: str


class ProposedText(WireModel):
    """The changed window of a proposed file change: what to show and what the user may edit.

    ``range`` covers whole lines of the file as the server read it (the open buffer, else the
    disk), in LSP positions counted in the negotiated position encoding; it is empty at
    (0, 0) for a new or empty file. ``base_text`` is the text in that range now and ``text``
    what the call puts there. The window spans every change of the call, from the first
    changed line to the last, so a one-line change in a 10 MB file sends a few lines.
    """

    range: Range
    text: str
    base_text: str
    hunks: list[ProposedHunk] | None = None
    """The window's changes, in document order, each inside ``range`` and at least one
    unchanged line apart: applied to the file they give the window's ``text``. Sent by the
    server since hunks were added to protocol 2; a client shows (and lets the user accept or
    reject) these instead of diffing ``base_text`` against ``text`` itself."""


class DiffPreview(WireModel):
    """A proposed file change: a unified diff with file headers and the changed window."""

    kind: Literal["diff"] = "diff"
    uri: str
    diff: str
    proposed: ProposedText | None = None
    """Since protocol 2; always sent by a protocol-2 server."""


class CommandPreview(WireModel):
    """A proposed shell command and the folder it runs in."""

    kind: Literal["command"] = "command"
    command: str
    cwd: str


Preview = Annotated[DiffPreview | CommandPreview, Field(discriminator="kind")]


class ApproveParams(WireModel):
    """Params of ``agent/approve``: sent before every call that needs the user's allow."""

    run_id: str
    call_id: str
    tool: str
    title: str
    arguments: dict[str, Any]
    preview: Preview
    suggested_patterns: list[str] | None = None
    """Rules the user may pick for "allow always", narrowest first, each one the server
    would store for this call (it allows exactly what is shown or more): for ``bash`` the
    exact command and e.g. ``pytest *``; for an edit the file and e.g. ``src/*.py``. A
    client sends the picked one as ``rule.pattern`` with ``allow-always``. Absent when
    "allow always" is not remembered (a sensitive path)."""


class ApproveResult(WireModel):
    """The user's answer; anything but an explicit allow means deny."""

    # Editors are lenient writers: accept extra fields in answers instead of denying on them.
    model_config = ConfigDict(extra="ignore")

    decision: Literal["allow", "allow-always", "deny"]
    feedback: str | None = None
    arguments: dict[str, Any] | None = None
    """Changed call arguments (any tool); not together with ``edited_text``."""
    edited_text: str | None = None
    """Since protocol 2, for a diff preview: the user's new text of the ``proposed`` window,
    replacing the call's change; not together with ``arguments``."""
    rule: ProposedRule | None = None
    """With ``allow-always``: the rule the user picked; stored only if it covers this call.
    Without it, ``allow-always`` covers this exact command (or the tool) for the session."""


class SaveDocumentsParams(WireModel):
    """Params of ``agent/saveDocuments``."""

    uris: list[str]


class SaveDocumentsResult(WireModel):
    """The documents the editor saved."""

    model_config = ConfigDict(extra="ignore")

    saved: list[str] = Field(default_factory=list)
