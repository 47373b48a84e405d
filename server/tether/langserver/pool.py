"""A front's language servers: one per language per workspace, started on the first call that
needs it, stopped with the front (``close``); the ``CodeIntel`` the code tools ask.

Before each request the server is told the text of the file asked about and of the editor's
open buffers of that language, as the user sees them (unsaved edits included), so that its
answer's positions are in the text the tools read. A server that failed (crashed, hung,
answered garbage) is stopped and replaced by a new one on the next call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from ..errors import ToolError
from ..tools.lsp_tools import CodeAnswer, CodeLocation, CodeSymbol, CodeTextEdit
from ..workspace.folders import Workspace
from .catalog import ServerCommand, commands, language_id, language_of, untrusted_defaults

if TYPE_CHECKING:
    from .client import LanguageServerProcess

DEFAULT_TIMEOUT_SECONDS = 30.0
"""How long a request may take (``languageServerTimeoutSeconds``)."""

Key = tuple[str, tuple[Path, ...]]


@dataclass(frozen=True, slots=True)
class PoolSettings:
    """What the settings say of a workspace's language servers."""

    configured: Mapping[str, tuple[str, ...]]
    """``languageServers``."""
    trusted: bool
    """The project is trusted: defaults that run its code may start."""
    timeout: float
    """``languageServerTimeoutSeconds``."""


class LanguageServerPool:
    """The language servers of a front: ``tether serve``'s workspace, or each folder of
    ``tether acp``'s sessions (each with its own settings)."""

    def __init__(
        self,
        environ: Mapping[str, str],
        configured: Mapping[str, Sequence[str]] | None = None,
        *,
        trusted: bool = False,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self.environ = dict(environ)
        self._default = PoolSettings({}, trusted, timeout)
        self._settings: dict[tuple[Path, ...], PoolSettings] = {}
        self._found: dict[tuple[Path, ...], dict[str, ServerCommand]] = {}
        self._servers: dict[Key, LanguageServerProcess] = {}
        self._locks: dict[Key, anyio.Lock] = {}
        self._closed = False
        self.configure(configured or {}, trusted=trusted, timeout=timeout)

    def configure(
        self,
        configured: Mapping[str, Sequence[str]],
        *,
        trusted: bool,
        timeout: float,
        roots: tuple[Path, ...] | None = None,
    ) -> None:
        """New settings, for the workspace of ``roots`` (None: every workspace without its
        own): the commands are looked for again on the next call; a running server whose
        command changed is replaced then."""
        settings = PoolSettings(
            {lang: tuple(argv) for lang, argv in configured.items()}, trusted, timeout
        )
        if roots is None:
            self._default = settings
            self._found.clear()
        else:
            self._settings[roots] = settings
            self._found.pop(roots, None)

    def settings(self, ws: Workspace) -> PoolSettings:
        """The settings of ``ws``'s language servers."""
        return self._settings.get(ws.roots, self._default)

    async def _commands(self, ws: Workspace) -> dict[str, ServerCommand]:
        found = self._found.get(ws.roots)
        if found is None:
            settings = self.settings(ws)
            found = await anyio.to_thread.run_sync(
                lambda: commands(
                    settings.configured, self.environ, ws.root, trusted=settings.trusted
                )
            )
            self._found[ws.roots] = found
        return found

    async def available(self, workspace: Workspace) -> Mapping[str, str]:
        return {lang: cmd.name for lang, cmd in (await self._commands(workspace)).items()}

    async def _language(self, ws: Workspace, path: Path) -> tuple[str, ServerCommand]:
        language = language_of(path)
        found = await self._commands(ws)
        command = None if language is None else found.get(language)
        if language is None or command is None:
            shown = ws.display(path)
            if language is None:
                what = f"{shown}: no language server here knows files like it"
            elif language in self.settings(ws).configured:
                what = f"{shown}: the {language} language server is turned off (languageServers)"
            elif not self.settings(ws).trusted and untrusted_defaults(language):
                programs = ", ".join(untrusted_defaults(language))
                what = (
                    f"{shown}: {programs} runs the project's own code, so it is started only "
                    f"in a project you trust (or name it in languageServers.{language} in your "
                    "own settings)"
                )
            else:
                what = (
                    f"{shown}: no {language} language server was found on PATH (set "
                    f"languageServers.{language})"
                )
            languages = ", ".join(sorted(found)) or "none"
            raise ToolError(f"{what}; languages with a server: {languages}. Use search instead.")
        return language, command

    async def _server(
        self, ws: Workspace, language: str, command: ServerCommand
    ) -> LanguageServerProcess:
        if self._closed:
            raise ToolError("the language servers are stopped (the session is ending)")
        key: Key = (language, ws.roots)
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            server = self._servers.get(key)
            if server is not None and (server.failure is not None or server.command != command):
                self._servers.pop(key, None)
                await server.close()
                server = None
            if server is None:
                from .client import LanguageServerProcess  # pygls only once a server starts

                timeout = self.settings(ws).timeout
                server = LanguageServerProcess(command, ws.roots, self.environ, timeout)
                self._servers[key] = server
                try:
                    await server.start()
                except BaseException:
                    self._servers.pop(key, None)
                    with anyio.CancelScope(shield=True):
                        await server.close()
                    raise
            server.timeout = self.settings(ws).timeout
            return server

    async def _ready(self, ws: Workspace, path: Path) -> LanguageServerProcess:
        """The server of ``path``'s language, told the current text of ``path`` and of the
        open buffers in that language."""
        language, command = await self._language(ws, path)
        server = await self._server(ws, language, command)
        await self._sync(ws, server, language, path)
        return server

    async def _sync(
        self, ws: Workspace, server: LanguageServerProcess, language: str, path: Path | None
    ) -> None:
        paths = [b.path for b in ws.buffers.all() if language_of(b.path) == language]
        if path is not None:
            paths.append(path)
        for each in dict.fromkeys(paths):
            if ws.root_of(each) is None:
                continue
            try:
                text = (await ws.read_text(each)).text
            except ToolError:
                if each == path:
                    raise
                continue
            server.sync(ws.uri_for(each), language_id(each), text)

    async def _position(
        self, ws: Workspace, path: Path, line: int, character: int, method: str, extra: Any = None
    ) -> tuple[LanguageServerProcess, Any]:
        from lsprotocol import types

        server = await self._ready(ws, path)
        where = types.TextDocumentIdentifier(uri=ws.uri_for(path))
        at = types.Position(line=line, character=character)
        params: Any
        if method == types.TEXT_DOCUMENT_REFERENCES:
            params = types.ReferenceParams(
                context=types.ReferenceContext(include_declaration=True),
                text_document=where,
                position=at,
            )
        elif method == types.TEXT_DOCUMENT_RENAME:
            params = types.RenameParams(text_document=where, position=at, new_name=extra)
        elif method == types.TEXT_DOCUMENT_HOVER:
            params = types.HoverParams(text_document=where, position=at)
        else:
            params = types.DefinitionParams(text_document=where, position=at)
        return server, await server.request(method, params)

    async def definition(
        self, workspace: Workspace, path: Path, line: int, character: int
    ) -> CodeAnswer[list[CodeLocation]]:
        server, result = await self._position(
            workspace, path, line, character, "textDocument/definition"
        )
        return CodeAnswer(server.name, _garbage_checked(server.name, _locations, result))

    async def references(
        self, workspace: Workspace, path: Path, line: int, character: int
    ) -> CodeAnswer[list[CodeLocation]]:
        server, result = await self._position(
            workspace, path, line, character, "textDocument/references"
        )
        return CodeAnswer(server.name, _garbage_checked(server.name, _locations, result))

    async def hover(
        self, workspace: Workspace, path: Path, line: int, character: int
    ) -> CodeAnswer[str]:
        server, result = await self._position(
            workspace, path, line, character, "textDocument/hover"
        )
        return CodeAnswer(server.name, _garbage_checked(server.name, _hover_text, result))

    async def document_symbols(
        self, workspace: Workspace, path: Path
    ) -> CodeAnswer[list[CodeSymbol]]:
        from lsprotocol import types

        server = await self._ready(workspace, path)
        uri = workspace.uri_for(path)
        result = await server.request(
            types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri)),
        )
        return CodeAnswer(
            server.name, _garbage_checked(server.name, lambda r: _outline(r, uri), result)
        )

    async def workspace_symbols(
        self, workspace: Workspace, query: str
    ) -> Sequence[CodeAnswer[list[CodeSymbol]]]:
        from lsprotocol import types

        found = await self._commands(workspace)
        running = [
            lang
            for (lang, roots), s in self._servers.items()
            if roots == workspace.roots and s.failure is None
        ]
        answers = []
        for language in running or sorted(found):
            if language not in found:
                continue
            server = await self._server(workspace, language, found[language])
            await self._sync(workspace, server, language, None)
            result = await server.request(
                types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query=query)
            )
            symbols = _garbage_checked(server.name, _flat_symbols, result)
            answers.append(CodeAnswer(server.name, symbols))
        if not answers:
            raise ToolError("no language server can answer here; use search instead")
        return answers

    async def rename(
        self, workspace: Workspace, path: Path, line: int, character: int, new_name: str
    ) -> CodeAnswer[dict[str, list[CodeTextEdit]]]:
        # Asked first where the name is defined: (based)pyright answers a rename with an
        # empty edit until it has analysed the file, and this request waits for that.
        await self._position(workspace, path, line, character, "textDocument/definition")
        server, result = await self._position(
            workspace, path, line, character, "textDocument/rename", new_name
        )
        return CodeAnswer(server.name, _garbage_checked(server.name, _workspace_edit, result))

    async def close(self) -> None:
        """Stop every server (each ends everything it started), side by side."""
        self._closed = True
        servers = list(self._servers.values())
        self._servers.clear()
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as group:
                for server in servers:
                    group.start_soon(server.close)

    def pids(self) -> list[int]:
        """The running servers' processes (for tests and diagnostics)."""
        return [s.pid for s in self._servers.values() if s.pid is not None]


# --- lsprotocol answers to the seam's values -------------------------------------------------


def _garbage_checked(server: str, convert: Any, result: Any) -> Any:
    try:
        return convert(result)
    except (AttributeError, TypeError, ValueError, KeyError) as exc:
        raise ToolError(
            f"the language server {server} answered something unusable ({type(exc).__name__})"
        ) from None


def _location(uri: str, position: Any) -> CodeLocation:
    return CodeLocation(str(uri), int(position.line), int(position.character))


def _locations(result: Any) -> list[CodeLocation]:
    from lsprotocol import types

    if result is None:
        return []
    items = result if isinstance(result, (list, tuple)) else [result]
    out = []
    for item in items:
        if isinstance(item, types.LocationLink):
            out.append(_location(item.target_uri, item.target_selection_range.start))
        elif isinstance(item, types.Location):
            out.append(_location(item.uri, item.range.start))
        else:
            raise TypeError(type(item).__name__)
    return out


def _hover_text(result: Any) -> str:
    from lsprotocol import types

    if result is None:
        return ""
    contents = result.contents
    parts = contents if isinstance(contents, (list, tuple)) else [contents]
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, (types.MarkupContent, types.MarkedStringWithLanguage)):
            texts.append(part.value)
        else:
            raise TypeError(type(part).__name__)
    return "\n\n".join(texts)


_KINDS: dict[int, str] = {}


def _kind(kind: Any) -> str:
    from lsprotocol import types

    if not _KINDS:
        _KINDS.update({k.value: k.name.lower() for k in types.SymbolKind})
    return _KINDS.get(int(kind), "symbol")


def _outline(result: Any, uri: str) -> list[CodeSymbol]:
    from lsprotocol import types

    out: list[CodeSymbol] = []

    def walk(symbol: Any, depth: int, container: str | None) -> None:
        if isinstance(symbol, types.DocumentSymbol):
            start = symbol.selection_range.start
            out.append(
                CodeSymbol(symbol.name, _kind(symbol.kind), _location(uri, start), container, depth)
            )
            for child in symbol.children or ():
                walk(child, depth + 1, symbol.name)
        elif isinstance(symbol, types.SymbolInformation):
            loc = _location(symbol.location.uri, symbol.location.range.start)
            out.append(CodeSymbol(symbol.name, _kind(symbol.kind), loc, symbol.container_name))
        else:
            raise TypeError(type(symbol).__name__)

    for item in result or ():
        walk(item, 0, None)
    return out


def _flat_symbols(result: Any) -> list[CodeSymbol]:
    from lsprotocol import types

    out = []
    for item in result or ():
        location = item.location
        if isinstance(location, types.Location):
            loc = _location(location.uri, location.range.start)
        else:  # a WorkspaceSymbol with only a URI
            loc = CodeLocation(str(location.uri), 0, 0)
        out.append(CodeSymbol(item.name, _kind(item.kind), loc, item.container_name))
    return out


def _workspace_edit(result: Any) -> dict[str, list[CodeTextEdit]]:
    from lsprotocol import types

    if result is None:
        return {}
    edits: dict[str, list[CodeTextEdit]] = {}

    def add(uri: str, items: Any) -> None:
        for edit in items:
            if not isinstance(edit, types.TextEdit):  # AnnotatedTextEdit is one; snippets not
                raise TypeError(type(edit).__name__)
            r = edit.range
            edits.setdefault(str(uri), []).append(
                CodeTextEdit(
                    (r.start.line, r.start.character), (r.end.line, r.end.character), edit.new_text
                )
            )

    for change in result.document_changes or ():
        if isinstance(change, types.TextDocumentEdit):
            add(change.text_document.uri, change.edits)
        else:
            kind = getattr(change, "kind", type(change).__name__)
            raise ToolError(
                f"the rename would also {kind} a file, which Tether does not apply; nothing was "
                "changed"
            )
    if not result.document_changes:
        for uri, items in (result.changes or {}).items():
            add(uri, items)
    return edits
