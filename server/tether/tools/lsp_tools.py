"""The code tools: ``definition``, ``references``, ``hover``, ``symbols`` and ``rename``,
answered by a language server.

A location is a ``path``, a 1-based ``line`` and the ``symbol`` on it: the tool finds the
column (models count columns badly), and when the name is not on that line the result says
so and lists the names that are. Results are ``path:line:column`` with the line's text,
capped, and name the language server that answered. Who answers is the ``CodeIntel`` seam:
the language servers Tether starts itself (``langserver/``) today.

``rename`` asks the server for its workspace edit and proposes it as one approval: one diff
across every file it touches. An edit that reaches outside the workspace, a sensitive path,
or creates, renames or deletes files is refused before anyone is asked. Once allowed, the
files are checked unchanged (all of them, under their locks) before the first is written,
then each goes through the editor like any edit, logged first, so the run's undo takes the
whole rename back.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import Field

from tether_protocol import DiffPreview

from ..errors import ToolError
from ..host import FileEdit
from ..text import model as textmodel
from ..text.counts import plural
from ..text.edit import minimal_changes, unified_diff
from ..workspace.folders import Workspace, path_from_uri
from ..workspace.sensitive import reason_for_path
from ..writes.locks import path_lock
from .base import Proposal, Tool, ToolArgs, ToolDeps, ToolResult, one_line
from .registry import ToolRegistry
from .static import StaticToolRegistry

MAX_RESULTS = 100
"""Locations or symbols listed; the rest are counted."""
MAX_LINE_CHARS = 200
"""A result's line text, cut beyond this."""
MAX_HOVER_CHARS = 4000
MAX_RENAME_FILES = 200
"""A rename touching more files is refused (the approval would be unreadable)."""

T = TypeVar("T")


# --- the seam ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CodeLocation:
    """A place a server answered with: an LSP position (``character`` in UTF-16 units)."""

    uri: str
    line: int
    """0-based."""
    character: int


@dataclass(frozen=True, slots=True)
class CodeSymbol:
    """A symbol of a file's outline or of a workspace query."""

    name: str
    kind: str
    """``function``, ``class``, … (LSP's ``SymbolKind``, lower-case)."""
    location: CodeLocation
    container: str | None = None
    depth: int = 0
    """Nesting in a file's outline (0: top level)."""


@dataclass(frozen=True, slots=True)
class CodeTextEdit:
    """One replacement of a server's workspace edit, in LSP positions (UTF-16)."""

    start: tuple[int, int]
    end: tuple[int, int]
    new_text: str


@dataclass(frozen=True, slots=True)
class CodeAnswer(Generic[T]):
    """What a language server answered, and its name for the result."""

    server: str
    value: T


class CodeIntel(Protocol):
    """Whoever answers the code tools (the language servers Tether starts). Every method
    raises ``ToolError`` with a reason the model can act on (no server for the language,
    the server crashed, timed out, answered garbage)."""

    async def available(self, workspace: Workspace) -> Mapping[str, str]:
        """The languages some server can answer for here, and that server's name."""
        ...

    async def definition(
        self, workspace: Workspace, path: Path, line: int, character: int
    ) -> CodeAnswer[list[CodeLocation]]: ...

    async def references(
        self, workspace: Workspace, path: Path, line: int, character: int
    ) -> CodeAnswer[list[CodeLocation]]: ...

    async def hover(
        self, workspace: Workspace, path: Path, line: int, character: int
    ) -> CodeAnswer[str]: ...

    async def document_symbols(
        self, workspace: Workspace, path: Path
    ) -> CodeAnswer[list[CodeSymbol]]: ...

    async def workspace_symbols(
        self, workspace: Workspace, query: str
    ) -> Sequence[CodeAnswer[list[CodeSymbol]]]: ...

    async def rename(
        self, workspace: Workspace, path: Path, line: int, character: int, new_name: str
    ) -> CodeAnswer[dict[str, list[CodeTextEdit]]]:
        """The server's workspace edit, by file URI; ``ToolError`` for one that creates,
        renames or deletes files."""
        ...


# --- finding the symbol on its line -----------------------------------------------------------

_NAME = re.compile(r"[^\W\d]\w*")
_WORD = r"[\w$]"


def names_on(line: str) -> list[str]:
    """The identifiers of a line, each once, in order (what the model could have meant)."""
    return list(dict.fromkeys(_NAME.findall(line)))


def column_of(line: str, symbol: str) -> int | None:
    """The code-point column of ``symbol`` on ``line``: its first whole-word occurrence
    (for ``a.b`` the start of its last part ``b``); None when it is not there."""
    symbol = symbol.strip()
    if not symbol:
        return None
    pattern = re.compile(rf"(?<!{_WORD}){re.escape(symbol)}(?!{_WORD})")
    found = pattern.search(line)
    start = found.start() if found else line.find(symbol)  # else any occurrence
    if start < 0:
        return None
    last = re.split(r"[.:>]", symbol)[-1]  # a.b, a::b, a->b: the name being asked about
    return start + (symbol.rfind(last) if last else 0)


@dataclass(frozen=True, slots=True)
class Spot:
    """A location the model gave, found: the file, its text, the LSP position."""

    path: Path
    text: str
    line: int
    """0-based."""
    character: int
    """UTF-16 units."""


async def find_spot(ws: Workspace, path: str, line: int, symbol: str) -> Spot:
    """The file, line and column of ``symbol`` on ``line`` of ``path``; ``ToolError`` for a
    path outside the workspace, a line out of range or a symbol not on that line (naming
    what is on it)."""
    resolved = ws.resolve(path)
    shown = ws.display(resolved)
    text = (await ws.read_text(resolved)).text
    lines = textmodel.split_lines(text)
    count = len(lines)
    if line < 1 or line > count:
        raise ToolError(
            f"line {line} is out of range: {shown} has {plural(count, 'line')} (lines count from 1)"
        )
    content = lines[line - 1]
    column = column_of(content, symbol)
    if column is None:
        names = names_on(content)
        listed = ", ".join(names[:30]) if names else "no names"
        raise ToolError(
            f"{symbol!r} is not on line {line} of {shown}; that line reads "
            f"{one_line(content, MAX_LINE_CHARS)!r} and has {listed}. Give the line where "
            "the name appears (read_file or search shows line numbers)."
        )
    return Spot(resolved, text, line - 1, textmodel.units(content[:column], "utf-16"))


# --- showing answers ------------------------------------------------------------------------


class _Lines:
    """The text of the workspace's files a result points into, read once each."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._texts: dict[Path, list[str] | None] = {}

    async def lines(self, path: Path) -> list[str] | None:
        if path not in self._texts:
            try:
                text = (await self.ws.read_text(path)).text
            except ToolError:
                self._texts[path] = None
            else:
                self._texts[path] = textmodel.split_lines(text)
        return self._texts[path]

    async def place(self, location: CodeLocation) -> str:
        """``path:line:column: text`` (1-based, the column in characters); a place outside
        the workspace by its path alone, never read."""
        path = path_from_uri(location.uri)
        if path is None:
            return f"{one_line(location.uri, 300)}:{location.line + 1}"
        inside = self.ws.root_of(path) is not None and _confined(self.ws, path)
        if not inside:
            return f"{path}:{location.line + 1} (outside the workspace)"
        lines = await self.lines(path)
        shown = self.ws.display(path)
        if lines is None or location.line >= len(lines):
            return f"{shown}:{location.line + 1}"
        content = lines[location.line]
        column = textmodel.column_index(content, location.character, "utf-16") + 1
        return f"{shown}:{location.line + 1}:{column}: {one_line(content.strip(), MAX_LINE_CHARS)}"


def _confined(ws: Workspace, path: Path) -> bool:
    try:
        return ws.resolve(str(path)) == path.resolve()
    except (ToolError, OSError):
        return False


async def _listed(ws: Workspace, locations: Sequence[CodeLocation]) -> list[str]:
    reader = _Lines(ws)
    shown = [await reader.place(loc) for loc in list(dict.fromkeys(locations))[:MAX_RESULTS]]
    if len(locations) > MAX_RESULTS:
        shown.append(f"… and {len(locations) - MAX_RESULTS} more")
    return shown


def _by(server: str) -> str:
    return f"(answered by {server})"


# --- the tools ------------------------------------------------------------------------------


class LocationArgs(ToolArgs):
    """A name in a file: where the model saw it."""

    path: str = Field(description="The file, relative to the workspace root.")
    line: int = Field(ge=1, description="The line the name is on, counted from 1.")
    symbol: str = Field(
        min_length=1,
        max_length=200,
        description="The name as written on that line (e.g. greet, or obj.method); the "
        "column is found for you.",
    )


class RenameArgs(LocationArgs):
    """Arguments of ``rename``."""

    new_name: str = Field(min_length=1, max_length=200, description="The new name.")


class SymbolsArgs(ToolArgs):
    """Arguments of ``symbols``."""

    path: str | None = Field(
        default=None, description="A file: its outline (every symbol it defines)."
    )
    query: str | None = Field(
        default=None,
        max_length=200,
        description="Without path: the workspace's symbols whose name matches this; with "
        "path: only the file's symbols containing it.",
    )


class _CodeTool(Tool[Any]):
    kind: ClassVar[str] = "search"

    def __init__(self, code: CodeIntel, languages: Mapping[str, str]) -> None:
        self.code = code
        self.languages = languages

    def title(self, arguments: dict[str, Any]) -> str:
        where = arguments.get("path") or ""
        line = arguments.get("line")
        symbol = arguments.get("symbol") or arguments.get("query") or ""
        at = f"{where}:{line}" if where and line else where
        return f"{self.name} {symbol} {at}".strip()


_LANGS = "Answered by the language server of the file's language"


class Definition(_CodeTool):
    name: ClassVar[str] = "definition"
    description: ClassVar[str] = (
        "Where a name is defined, as the language server sees it (imports, overloads, "
        f"shadowing resolved). {_LANGS}. Give the file, the line and the name on it."
    )
    args_model: ClassVar[type[ToolArgs]] = LocationArgs

    async def run(self, args: LocationArgs, deps: ToolDeps) -> ToolResult:
        ws = deps.workspace
        spot = await find_spot(ws, args.path, args.line, args.symbol)
        answer = await self.code.definition(ws, spot.path, spot.line, spot.character)
        if not answer.value:
            return ToolResult(
                ok=True, output=f"No definition of {args.symbol} found {_by(answer.server)}."
            )
        listed = "\n".join(await _listed(ws, answer.value))
        return ToolResult(
            ok=True, output=f"Definition of {args.symbol} {_by(answer.server)}:\n{listed}"
        )


class References(_CodeTool):
    name: ClassVar[str] = "references"
    description: ClassVar[str] = (
        "Every use of a name across the workspace, its definition included, as the language "
        f"server resolves it (not text matches). {_LANGS}. Give the file, line and name."
    )
    args_model: ClassVar[type[ToolArgs]] = LocationArgs

    async def run(self, args: LocationArgs, deps: ToolDeps) -> ToolResult:
        ws = deps.workspace
        spot = await find_spot(ws, args.path, args.line, args.symbol)
        answer = await self.code.references(ws, spot.path, spot.line, spot.character)
        if not answer.value:
            return ToolResult(
                ok=True, output=f"No references to {args.symbol} found {_by(answer.server)}."
            )
        listed = await _listed(ws, answer.value)
        count = plural(len(answer.value), "reference")
        return ToolResult(
            ok=True,
            output=f"{count} to {args.symbol} {_by(answer.server)}:\n" + "\n".join(listed),
        )


class Hover(_CodeTool):
    name: ClassVar[str] = "hover"
    description: ClassVar[str] = (
        "A name's type and documentation, as the language server shows them on hover. "
        f"{_LANGS}. Give the file, line and name."
    )
    args_model: ClassVar[type[ToolArgs]] = LocationArgs

    async def run(self, args: LocationArgs, deps: ToolDeps) -> ToolResult:
        ws = deps.workspace
        spot = await find_spot(ws, args.path, args.line, args.symbol)
        answer = await self.code.hover(ws, spot.path, spot.line, spot.character)
        text = answer.value.strip()
        if not text:
            return ToolResult(
                ok=True, output=f"Nothing to show for {args.symbol} {_by(answer.server)}."
            )
        if len(text) > MAX_HOVER_CHARS:
            text = text[:MAX_HOVER_CHARS] + f"\n… ({len(text) - MAX_HOVER_CHARS} characters cut)"
        return ToolResult(ok=True, output=f"{args.symbol} {_by(answer.server)}:\n{text}")


class Symbols(_CodeTool):
    name: ClassVar[str] = "symbols"
    description: ClassVar[str] = (
        "Symbols from the language server: a file's outline (path), or the workspace's "
        "symbols whose name matches a query (query alone). Faster and more exact than "
        "search for finding where a class or function is defined."
    )
    args_model: ClassVar[type[ToolArgs]] = SymbolsArgs

    async def run(self, args: SymbolsArgs, deps: ToolDeps) -> ToolResult:
        ws = deps.workspace
        query = (args.query or "").strip()
        if args.path:
            path = ws.resolve(args.path)
            answer = await self.code.document_symbols(ws, path)
            found = [s for s in answer.value if query.lower() in s.name.lower()]
            what = f"Symbols of {ws.display(path)}" + (f" matching {query!r}" if query else "")
            return ToolResult(ok=True, output=await _symbols(ws, what, answer.server, found))
        if not query:
            raise ToolError("give a path (a file's outline) or a query (the workspace's symbols)")
        parts = []
        for answer in await self.code.workspace_symbols(ws, query):
            parts.append(
                await _symbols(
                    ws, f"Workspace symbols matching {query!r}", answer.server, answer.value
                )
            )
        return ToolResult(ok=True, output="\n\n".join(parts))


async def _symbols(ws: Workspace, what: str, server: str, found: Sequence[CodeSymbol]) -> str:
    if not found:
        return f"{what}: none {_by(server)}."
    reader = _Lines(ws)
    out = [f"{what} {_by(server)}:"]
    for symbol in found[:MAX_RESULTS]:
        place = await reader.place(symbol.location)
        where, _, text = place.partition(": ")
        container = f" in {symbol.container}" if symbol.container else ""
        indent = "  " * min(symbol.depth, 8)
        out.append(f"{indent}{symbol.kind} {one_line(symbol.name, 100)}{container} — {where}")
    if len(found) > MAX_RESULTS:
        out.append(f"… and {len(found) - MAX_RESULTS} more")
    return "\n".join(out)


@dataclass(frozen=True, slots=True)
class RenamePlan:
    """A rename as proposed: every file's edit, in the order shown."""

    edits: tuple[FileEdit, ...]
    server: str
    occurrences: int


def _apply_text_edits(text: str, edits: Sequence[CodeTextEdit], shown: str) -> str:
    """``text`` with a server's edits applied (LSP positions, UTF-16); ``ToolError`` for
    overlapping ones."""
    spans = sorted(
        (
            textmodel.offset_at(text, e.start[0], e.start[1], "utf-16"),
            textmodel.offset_at(text, e.end[0], e.end[1], "utf-16"),
            e.new_text,
        )
        for e in edits
    )
    out: list[str] = []
    last = 0
    for start, end, new in spans:
        if start < last or end < start:
            raise ToolError(f"the language server's edit of {shown} overlaps itself; not used")
        out += [text[last:start], new]
        last = end
    out.append(text[last:])
    return "".join(out)


class Rename(_CodeTool):
    name: ClassVar[str] = "rename"
    kind: ClassVar[str] = "edit"
    description: ClassVar[str] = (
        "Rename a name everywhere it is used, as the language server resolves it: one "
        "change across every file, shown to the user as one approval. Prefer it to editing "
        "file after file. Give the file, line and name, and the new name."
    )
    args_model: ClassVar[type[ToolArgs]] = RenameArgs
    needs_approval: ClassVar[bool] = True
    takes_changed_arguments: ClassVar[bool] = True

    def title(self, arguments: dict[str, Any]) -> str:
        return f"Rename {arguments.get('symbol', '')} → {arguments.get('new_name', '')}"

    async def _plan(self, args: RenameArgs, ws: Workspace) -> RenamePlan:
        spot = await find_spot(ws, args.path, args.line, args.symbol)
        answer = await self.code.rename(ws, spot.path, spot.line, spot.character, args.new_name)
        if not answer.value:
            raise ToolError(
                f"{answer.server} proposes no change for renaming {args.symbol} (is it a name "
                "it can rename?); nothing was changed"
            )
        if len(answer.value) > MAX_RENAME_FILES:
            raise ToolError(
                f"the rename would change {len(answer.value)} files (more than "
                f"{MAX_RENAME_FILES}); nothing was changed"
            )
        edits: list[FileEdit] = []
        occurrences = 0
        for uri, changes in answer.value.items():
            path = _rename_target(ws, uri)
            shown = ws.display(path)
            snapshot = await ws.read_text(path)
            after = _apply_text_edits(snapshot.text, changes, shown)
            if after == snapshot.text:
                continue
            occurrences += len(changes)
            edits.append(
                FileEdit(
                    path=path,
                    root=ws.root_of(path) or ws.root,
                    uri=ws.uri_for(path),
                    base_text=snapshot.text,
                    version=snapshot.version if snapshot.from_buffer else None,
                    create=False,
                    changes=minimal_changes(snapshot.text, after),
                    after=after,
                )
            )
        if not edits:
            raise ToolError(f"renaming {args.symbol} changes nothing; nothing was changed")
        first = next((e for e in edits if e.path == spot.path), edits[0])
        ordered = (first, *sorted((e for e in edits if e is not first), key=lambda e: e.path))
        return RenamePlan(ordered, answer.server, occurrences)

    async def propose(self, args: RenameArgs, deps: ToolDeps) -> Proposal:
        ws = deps.workspace
        plan = await self._plan(args, ws)
        diff = "".join(
            unified_diff(e.base_text, e.new_text, ws.display(e.path)) for e in plan.edits
        )
        files = plural(len(plan.edits), "file")
        title = f"Rename {args.symbol} → {args.new_name} in {files} {_by(plan.server)}"
        preview = DiffPreview(uri=plan.edits[0].uri, diff=diff)
        return Proposal(title, preview, plan)

    async def perform(self, args: RenameArgs, proposal: Proposal, deps: ToolDeps) -> ToolResult:
        plan: RenamePlan = proposal.payload
        ws = deps.workspace
        if deps.editor is None:
            raise ToolError("no editor to apply the change through")
        async with contextlib.AsyncExitStack() as locks:
            for path in sorted(e.path for e in plan.edits):  # one order: no deadlock
                await locks.enter_async_context(path_lock(path))
            for edit in plan.edits:
                now = await ws.read_text(edit.path)
                if now.text != edit.base_text:
                    return ToolResult.failure(
                        f"The rename was not applied: {ws.display(edit.path)} changed since it "
                        "was proposed. Nothing was changed; try the rename again."
                    )
            done: list[FileEdit] = []
            for edit in plan.edits:
                edit = replace(edit, run_id=deps.run_id)
                entry = None if deps.journal is None else await deps.journal.intended(edit)
                shown = ws.display(edit.path)
                outcome = await deps.editor.apply_edit(edit, f"Tether: rename in {shown}")
                if deps.journal is not None and entry is not None:
                    deps.journal.outcome(entry, outcome.applied)
                if not outcome.applied:
                    reason = outcome.failure or "the editor did not apply it"
                    changed = ", ".join(ws.display(e.path) for e in done) or "nothing"
                    return ToolResult(
                        ok=False,
                        output=f"The rename stopped at {shown}: {reason}. Already changed: "
                        f"{changed} (undo the run to take it back).",
                        error=reason,
                        edits=tuple(done),
                    )
                done.append(edit)
        files = ", ".join(ws.display(e.path) for e in done)
        return ToolResult(
            ok=True,
            output=f"Renamed {args.symbol} to {args.new_name}: "
            f"{plural(plan.occurrences, 'occurrence')} in {plural(len(done), 'file')} "
            f"({files}) {_by(plan.server)}.",
            edits=tuple(done),
        )


def _rename_target(ws: Workspace, uri: str) -> Path:
    """The file a rename edit changes; ``ToolError`` when it is not a workspace file Tether
    may change unasked-about (outside the workspace, through a link out, a sensitive path)."""
    path = path_from_uri(uri)
    if path is None:
        raise ToolError(
            f"the rename would change {one_line(uri, 200)!r}, which is not a local file; "
            "nothing was changed"
        )
    try:
        resolved = ws.resolve(str(path))
    except ToolError:
        raise ToolError(
            f"the rename would change {path}, outside the workspace; nothing was changed"
        ) from None
    reason = reason_for_path(resolved, ws.roots)
    if reason is not None:
        raise ToolError(
            f"the rename would change {ws.display(resolved)} ({reason}); a rename may not "
            "touch it, nothing was changed"
        )
    return resolved


CODE_TOOLS = (Definition, References, Hover, Symbols, Rename)
CODE_TOOL_NAMES = tuple(cls.name for cls in CODE_TOOLS)
"""The code tools' names: offered where a language server answers, named in settings
(``autoApprove``) wherever."""


@runtime_checkable
class ShowsChangeSets(Protocol):
    """An editor whose approvals can show a change of several files (a rename's)."""

    def shows_change_sets(self) -> bool:
        """Whether an approval's diff of several files, without a window to edit, is shown
        whole to the user."""
        ...


async def with_code_tools(
    tools: ToolRegistry, code: CodeIntel | None, ws: Workspace, editor: object = None
) -> ToolRegistry:
    """``tools`` plus the code tools when some language server can answer here (their
    descriptions name the languages); ``tools`` as they are otherwise. ``rename`` only for
    an ``editor`` that shows a change of several files (``ShowsChangeSets``)."""
    if code is None:
        return tools
    languages = await code.available(ws)
    if not languages:
        return tools
    listed = ", ".join(f"{lang} ({server})" for lang, server in sorted(languages.items()))
    renames = isinstance(editor, ShowsChangeSets) and editor.shows_change_sets()
    made: list[Tool[Any]] = []
    for cls in CODE_TOOLS:
        if cls is Rename and not renames:
            continue
        tool = cls(code, languages)
        tool.description = f"{cls.description} Languages: {listed}."  # type: ignore[misc]
        made.append(tool)
    base = [t for name in tools.names if (t := tools.get(name)) is not None]
    return StaticToolRegistry([*base, *made])
