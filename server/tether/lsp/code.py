"""The code tools answered by the editor's own language servers (``agent/code``), so that an
editor session does not start a second language server next to the editor's.

A client that declared ``experimental.tether.code`` is asked first, in the negotiated position
encoding; its answer is converted to the seam's UTF-16 positions against the text the tools
read. When it answers ``unavailable`` (no language server of its own for that file), or
answered ``agent/code`` with an error once (never asked again), the language servers Tether
starts itself answer instead. A client that does not answer within
``languageServerTimeoutSeconds``, or answers something malformed, is a tool error: Tether does
not start a server of its own behind a slow editor's back.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from tether_protocol.base import Position
from tether_protocol.code import CodeLocation as WireLocation
from tether_protocol.code import CodeParams, CodeRequest, CodeResult
from tether_protocol.code import CodeSymbol as WireSymbol

from ..langserver.catalog import LANGUAGE_OF_SUFFIX
from ..langserver.pool import LanguageServerPool
from ..text import model as textmodel
from ..text.display import shown
from ..tools.base import ToolError, one_line
from ..tools.lsp_tools import CodeAnswer, CodeLocation, CodeSymbol, CodeTextEdit
from ..workspace.folders import Workspace, path_from_uri
from .editor import LspEditor

log = logging.getLogger(__name__)
T = TypeVar("T")

EDITOR = "the editor's language server"
"""Who answered, when the client does not name it."""

_KINDS = (
    "file",
    "module",
    "namespace",
    "package",
    "class",
    "method",
    "property",
    "field",
    "constructor",
    "enum",
    "interface",
    "function",
    "variable",
    "constant",
    "string",
    "number",
    "boolean",
    "array",
    "object",
    "key",
    "null",
    "enummember",
    "struct",
    "event",
    "operator",
    "typeparameter",
)
"""LSP's ``SymbolKind`` 1…26, lower-case (as the seam names them)."""


def _confined(ws: Workspace, path: Path) -> bool:
    """``path`` is the workspace file it names, not a link out of it."""
    try:
        return ws.resolve(str(path)) == path.resolve()
    except (ToolError, OSError):
        return False


class _Texts:
    """The lines of the workspace files an answer points into, read once each: positions
    are converted between the client's encoding and UTF-16 against them."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._lines: dict[Path, list[str] | None] = {}

    async def line(self, uri: str, line: int) -> str | None:
        path = path_from_uri(uri)
        if path is None or self.ws.root_of(path) is None or not _confined(self.ws, path):
            return None  # outside the workspace (or a link out of it): never read
        if path not in self._lines:
            try:
                text = (await self.ws.read_text(path)).text
            except ToolError:
                self._lines[path] = None
            else:
                self._lines[path] = textmodel.split_lines(text)
        lines = self._lines[path]
        return lines[line] if lines is not None and 0 <= line < len(lines) else None

    async def utf16(self, uri: str, position: Position) -> tuple[int, int]:
        """``position`` (the client's encoding) as UTF-16 units."""
        encoding = self.ws.position_encoding
        content = await self.line(uri, position.line)
        if content is None or encoding == "utf-16":
            return position.line, position.character
        index = textmodel.column_index(content, position.character, encoding)
        return position.line, textmodel.units(content[:index], "utf-16")

    async def client(self, uri: str, line: int, character: int) -> Position:
        """A UTF-16 position in the client's encoding."""
        encoding = self.ws.position_encoding
        content = await self.line(uri, line)
        if content is None or encoding == "utf-16":
            return Position(line=line, character=character)
        index = textmodel.column_index(content, character, "utf-16")
        return Position(line=line, character=textmodel.units(content[:index], encoding))

    async def location(self, wire: WireLocation) -> CodeLocation:
        line, character = await self.utf16(wire.uri, wire.range.start)
        return CodeLocation(wire.uri, line, character)

    async def symbols(self, found: Sequence[WireSymbol]) -> list[CodeSymbol]:
        return [
            CodeSymbol(
                s.name,
                _KINDS[s.kind - 1],
                await self.location(s.location),
                s.container_name,
                s.depth,
            )
            for s in found
        ]


@dataclass(frozen=True, slots=True)
class _Unavailable:
    """The editor's reason for not answering (it has no language server for the file)."""

    reason: str


async def _own(editor: _Unavailable | None, answer: Awaitable[T]) -> T:
    """What Tether's own language servers answer; when they cannot either, the error says
    why the editor could not."""
    try:
        return await answer
    except ToolError as exc:
        if editor is None:
            raise
        raise ToolError(f"the editor cannot answer ({editor.reason}); {exc}") from None


class EditorCode:
    """``CodeIntel`` of ``tether serve``: the editor's language servers through
    ``agent/code`` where the client answers it, Tether's own (``own``) otherwise."""

    def __init__(self, editor: LspEditor, own: LanguageServerPool) -> None:
        self.editor = editor
        self.own = own

    async def available(self, workspace: Workspace) -> Mapping[str, str]:
        own = await self.own.available(workspace)
        if not self.editor.answers_code():
            return own
        return {
            language: "the editor's" + (f", else {own[language]}" if language in own else "")
            for language in sorted({*LANGUAGE_OF_SUFFIX.values(), *own})
        }

    async def _ask(
        self,
        ws: Workspace,
        texts: _Texts,
        request: CodeRequest,
        path: Path | None = None,
        at: tuple[int, int] | None = None,
        *,
        query: str | None = None,
        new_name: str | None = None,
    ) -> tuple[str, CodeResult] | _Unavailable | None:
        """The editor's answer and its name; otherwise the own servers answer instead:
        ``_Unavailable`` (the editor's reason) or None (it is not asked)."""
        if not self.editor.answers_code():
            return None
        uri = None if path is None else ws.uri_for(path)
        position = None
        if uri is not None and at is not None:
            position = await texts.client(uri, *at)
        params = CodeParams(
            request=request, uri=uri, position=position, query=query, new_name=new_name
        )
        result = await self.editor.code(params, self.own.settings(ws).timeout)
        if result is None:
            return None
        if result.unavailable is not None:
            reason = shown(one_line(result.unavailable, 200))
            log.info(
                "the editor cannot answer %s (%s): Tether's own servers answer", request, reason
            )
            return _Unavailable(reason)
        return shown(one_line(result.server or EDITOR, 80)), result

    async def definition(
        self, workspace: Workspace, path: Path, line: int, character: int
    ) -> CodeAnswer[list[CodeLocation]]:
        texts = _Texts(workspace)
        asked = await self._ask(workspace, texts, "definition", path, (line, character))
        if not isinstance(asked, tuple):
            return await _own(asked, self.own.definition(workspace, path, line, character))
        server, result = asked
        return CodeAnswer(server, [await texts.location(x) for x in result.locations or ()])

    async def references(
        self, workspace: Workspace, path: Path, line: int, character: int
    ) -> CodeAnswer[list[CodeLocation]]:
        texts = _Texts(workspace)
        asked = await self._ask(workspace, texts, "references", path, (line, character))
        if not isinstance(asked, tuple):
            return await _own(asked, self.own.references(workspace, path, line, character))
        server, result = asked
        return CodeAnswer(server, [await texts.location(x) for x in result.locations or ()])

    async def hover(
        self, workspace: Workspace, path: Path, line: int, character: int
    ) -> CodeAnswer[str]:
        texts = _Texts(workspace)
        asked = await self._ask(workspace, texts, "hover", path, (line, character))
        if not isinstance(asked, tuple):
            return await _own(asked, self.own.hover(workspace, path, line, character))
        server, result = asked
        return CodeAnswer(server, result.hover or "")

    async def document_symbols(
        self, workspace: Workspace, path: Path
    ) -> CodeAnswer[list[CodeSymbol]]:
        texts = _Texts(workspace)
        asked = await self._ask(workspace, texts, "documentSymbols", path)
        if not isinstance(asked, tuple):
            return await _own(asked, self.own.document_symbols(workspace, path))
        server, result = asked
        return CodeAnswer(server, await texts.symbols(result.symbols or ()))

    async def workspace_symbols(
        self, workspace: Workspace, query: str
    ) -> Sequence[CodeAnswer[list[CodeSymbol]]]:
        texts = _Texts(workspace)
        asked = await self._ask(workspace, texts, "workspaceSymbols", query=query)
        if not isinstance(asked, tuple):
            return await _own(asked, self.own.workspace_symbols(workspace, query))
        server, result = asked
        return [CodeAnswer(server, await texts.symbols(result.symbols or ()))]

    async def rename(
        self, workspace: Workspace, path: Path, line: int, character: int, new_name: str
    ) -> CodeAnswer[dict[str, list[CodeTextEdit]]]:
        texts = _Texts(workspace)
        asked = await self._ask(
            workspace, texts, "rename", path, (line, character), new_name=new_name
        )
        if not isinstance(asked, tuple):
            return await _own(asked, self.own.rename(workspace, path, line, character, new_name))
        server, result = asked
        changes: dict[str, list[CodeTextEdit]] = {}
        for uri, edits in (result.changes or {}).items():
            for edit in edits:
                start = await texts.utf16(uri, edit.range.start)
                end = await texts.utf16(uri, edit.range.end)
                changes.setdefault(uri, []).append(CodeTextEdit(start, end, edit.new_text))
        return CodeAnswer(server, changes)
