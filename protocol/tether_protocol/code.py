"""Server → client request ``agent/code``: the editor's language servers answering the code
tools (asked by ``server/tether/lsp/code.py``).

A client that declares ``experimental.tether.code`` answers it with its own language
features — VS Code with ``vscode.execute…Provider`` (definition, reference, hover, document
and workspace symbol, rename), Neovim with the clients attached to the buffer (the file
loaded into a hidden buffer when it is not open), Emacs with the Eglot server managing the
file — so the model gets the answers the user gets. A client that does not declare it is
never asked; the server then answers from the language servers it starts itself. The shapes
are LSP's, normalised by the client (a ``LocationLink`` as its target, ``MarkedString``s
joined, ``SymbolInformation`` and ``DocumentSymbol`` as one ``CodeSymbol`` list, a workspace
edit as text edits by URI), positions in the negotiated position encoding.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, model_validator

from .base import Position, Range, WireModel

CodeRequest = Literal[
    "definition", "references", "hover", "documentSymbols", "workspaceSymbols", "rename"
]


class CodeParams(WireModel):
    """Params of ``agent/code``: one request of the code tools."""

    request: CodeRequest
    uri: str | None = None
    """The document; every request but ``workspaceSymbols``."""
    position: Position | None = None
    """Where the name is (the server found its column); ``definition``, ``references``,
    ``hover`` and ``rename``."""
    query: Annotated[str, Field(max_length=200)] | None = None
    """``workspaceSymbols``: the names to match (as LSP's ``workspace/symbol``)."""
    new_name: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    """``rename``: the new name."""

    @model_validator(mode="after")
    def _fits_the_request(self) -> CodeParams:
        needs_position = self.request in ("definition", "references", "hover", "rename")
        if self.request != "workspaceSymbols" and self.uri is None:
            raise ValueError(f"{self.request} needs uri")
        if needs_position and self.position is None:
            raise ValueError(f"{self.request} needs position")
        if self.request == "rename" and self.new_name is None:
            raise ValueError("rename needs newName")
        if self.request == "workspaceSymbols" and self.query is None:
            raise ValueError("workspaceSymbols needs query")
        return self


class CodeLocation(WireModel):
    """A place an answer points to."""

    model_config = ConfigDict(extra="ignore", strict=False)

    uri: str
    range: Range


class CodeSymbol(WireModel):
    """A symbol of a document's outline or of a workspace query."""

    model_config = ConfigDict(extra="ignore", strict=False)

    name: str
    kind: Annotated[int, Field(ge=1, le=26)]
    """LSP's ``SymbolKind``."""
    location: CodeLocation
    """For a ``DocumentSymbol``: its ``selectionRange``."""
    container_name: str | None = None
    depth: Annotated[int, Field(ge=0)] = 0
    """Nesting in a document's outline (0: top level)."""


class CodeTextEdit(WireModel):
    """One replacement of a rename's edit."""

    model_config = ConfigDict(extra="ignore", strict=False)

    range: Range
    new_text: str


class CodeResult(WireModel):
    """The answer to ``agent/code``: the field of the request asked, and who answered; or
    ``unavailable`` (no language feature for that file here: the server answers from its
    own language servers instead)."""

    model_config = ConfigDict(extra="ignore", strict=False)

    server: str | None = None
    """The language server (or extension) that answered, as the tool result names it."""
    locations: list[CodeLocation] | None = None
    """``definition``, ``references``."""
    hover: str | None = None
    """``hover``: the text shown, Markdown or plain."""
    symbols: list[CodeSymbol] | None = None
    """``documentSymbols``, ``workspaceSymbols``."""
    changes: dict[str, list[CodeTextEdit]] | None = None
    """``rename``: the edit, by document URI, never applied by the client (the server
    proposes it as one approval); file operations are not sent."""
    unavailable: str | None = None
    """Why the editor cannot answer for this file (no language server attached)."""
