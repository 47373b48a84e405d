"""Server → client request ``agent/diagnostics``: the problems the editor knows of.

A client that declares ``experimental.tether.diagnostics`` answers it from its language
servers (VS Code: ``vscode.languages.getDiagnostics``; Neovim: ``vim.diagnostic.get``). The
server asks before and after an applied edit to tell the model which problems the edit added
or removed, and for the read-only ``diagnostics`` tool. A client that does not declare the
capability is never asked.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from .base import Range, WireModel


class DiagnosticsParams(WireModel):
    """Params of ``agent/diagnostics``."""

    uris: list[str] | None = None
    """The documents asked about; absent: every document the editor has problems for."""


class Diagnostic(WireModel):
    """One problem, as LSP's ``Diagnostic`` (fields Tether does not use are ignored)."""

    # Editors copy their language servers' objects: accept what LSP allows and more.
    model_config = ConfigDict(extra="ignore", strict=False)

    range: Range
    severity: Annotated[int, Field(ge=1, le=4)] | None = None
    """1 error, 2 warning, 3 information, 4 hint (LSP ``DiagnosticSeverity``)."""
    code: int | str | None = None
    source: str | None = None
    message: str


class FileDiagnostics(WireModel):
    """The problems of one document."""

    model_config = ConfigDict(extra="ignore", strict=False)

    uri: str
    diagnostics: list[Diagnostic] = Field(default_factory=list)


class DiagnosticsResult(WireModel):
    """The answer to ``agent/diagnostics``: one item per document with problems."""

    model_config = ConfigDict(extra="ignore", strict=False)

    items: list[FileDiagnostics] = Field(default_factory=list)
