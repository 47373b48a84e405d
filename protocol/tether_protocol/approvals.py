"""Server → client requests: ``agent/approve`` and ``agent/saveDocuments``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from .base import WireModel


class DiffPreview(WireModel):
    """A proposed file change, as a unified diff with file headers."""

    kind: Literal["diff"] = "diff"
    uri: str
    diff: str


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


class ApproveResult(WireModel):
    """The user's answer; anything but an explicit allow means deny."""

    # Editors are lenient writers: accept extra fields in answers instead of denying on them.
    model_config = ConfigDict(extra="ignore")

    decision: Literal["allow", "allow-always", "deny"]
    feedback: str | None = None
    arguments: dict[str, Any] | None = None


class SaveDocumentsParams(WireModel):
    """Params of ``agent/saveDocuments``."""

    uris: list[str]


class SaveDocumentsResult(WireModel):
    """The documents the editor saved."""

    model_config = ConfigDict(extra="ignore")

    saved: list[str] = Field(default_factory=list)
