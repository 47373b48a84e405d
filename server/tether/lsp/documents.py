"""Open documents kept as lists of lines, so an incremental change costs what it touches.

pygls' ``TextDocument`` rebuilds the whole text for every incremental change (and splits
it again for every position it converts): 27–80 ms per keystroke in a 10 MB buffer. Here
a document is a list of lines, each with its line ending; a change re-splits only the
lines it touches (plus the line before, where a ``\\r`` may meet a ``\\n``), and the whole
text is joined again only when someone reads it, once per version.

Lines and positions are ``textmodel``'s, which defines them as LSP does: lines end at
``\\n``, ``\\r\\n`` or ``\\r``; positions are counted in the negotiated encoding; a
position past the end of its line or of the document means that end.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument, Workspace

from ..host import FileEdit
from ..text import model as textmodel
from ..text.model import column_index, content, derived, encoding_name, line_index
from ..text.span import line_end_after, line_start_before
from .blocks import JoinedBlocks

log = logging.getLogger(__name__)

__all__ = ["LineDocument", "LineWorkspace", "column_index", "encoding_name", "split_lines"]


def split_lines(text: str) -> list[str]:
    """``text`` cut after each LSP line end (``\\n``, ``\\r\\n``, ``\\r``), ends kept."""
    return textmodel.split_lines(text, keepends=True)


_COMPARED_LINES = 4096
_WALKED = 256
"""Lines ``holds_edit`` walks from an edit to where the document may have changed."""


class LineDocument(TextDocument):
    """A pygls ``TextDocument`` whose text is a list of lines, changed in place.

    ``source`` and ``version`` behave as pygls' do (``LspBuffers`` reads them); ``lines``
    returns the lines with their endings, as pygls' does.
    """

    def __init__(
        self,
        uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
        local: bool = True,
        sync_kind: types.TextDocumentSyncKind = types.TextDocumentSyncKind.Incremental,
        position_codec: PositionCodec | None = None,
    ) -> None:
        super().__init__(uri, None, version, language_id, local, sync_kind, position_codec)
        text = source or ""
        self._lines: list[str] = split_lines(text)
        self._text: str | None = text
        self._blocks = JoinedBlocks()
        self._encoding = encoding_name(self.position_codec.encoding)
        self._pending: FileEdit | None = None
        """An applied edit that the lines hold (checked): the text is its text after."""
        self._since: tuple[int | None, int, int, int, int] | None = None
        """(version, id of the text, lines then, head, tail): since that text was read at
        that version only the lines between the first ``head`` and the last ``tail`` may
        have changed."""

    @property
    def source(self) -> str:
        """The whole text (made once per change, then kept: the text after of the edit
        the lines hold, else the lines joined)."""
        if self._text is None:
            pending = self._pending
            if pending is not None and pending.after is not None:
                self._text = pending.after
            else:
                # Joined from the blocks of lines (see ``blocks``), not made from the
                # edit's text before: slicing both ends of that and joining them copies
                # twice into fresh memory.
                self._text = self._blocks.join(self._lines)
                if pending is not None:  # the lines hold it (checked): that is its text
                    pending.made(self._text)
                    derived(pending.base_text, pending.changes, self._text)
            self._pending = None
        since = self._since
        if since is None or since[0] != self.version or since[1] != id(self._text):
            count = len(self._lines)
            self._since = (self.version, id(self._text), count, count, count)
        return self._text

    def holds_edit(self, edit: FileEdit) -> bool | None:
        """Whether the lines are ``edit``'s text after, compared only where they may have
        changed since ``edit.base_text`` was read (at ``edit.version``) and where the edit
        changes it; None when that cannot be told so (read at another version, or far
        from the edit: compare the whole text)."""
        since, changes, base = self._since, edit.changes, edit.base_text
        if since is None or edit.version is None or not changes:
            return None
        version, read, count, head, tail = since
        if version != edit.version or read != id(base):
            return None
        first, last = changes[0], changes[-1]
        first_line = line_index(base, first.start)
        after_lines = count - line_index(base, last.end) if last.end < len(base) else 0
        lines = self._lines
        head, tail = min(head, first_line), min(tail, after_lines)
        if head + tail > len(lines) or first_line - head > _WALKED or after_lines - tail > _WALKED:
            return None
        start = first.start
        for _ in range(first_line - head):
            start = line_start_before(base, start)
        end = last.end
        for _ in range(after_lines - tail):
            end = line_end_after(base, end)
        expected = [base[start : first.start]]
        cursor = first.start
        for change in changes:
            expected += (base[cursor : change.start], change.new_text)
            cursor = change.end
        expected.append(base[cursor:end])
        return "".join(lines[head : len(lines) - tail]) == "".join(expected)

    def keep_edit(self, edit: FileEdit) -> None:
        """The lines hold ``edit``'s text after (the caller checked): that is the text, made
        when first read (or already made), instead of the lines joined."""
        self._text, self._pending = edit.after, edit

    def holds(self, text: str) -> bool:
        """Whether the lines joined are ``text``, compared a few thousand lines at a time:
        no 10 MB join (whose fresh memory alone costs more than comparing)."""
        if self._text is not None:
            return self._text == text
        at = 0
        lines = self._lines
        for first in range(0, len(lines), _COMPARED_LINES):
            piece = "".join(lines[first : first + _COMPARED_LINES])
            if not text.startswith(piece, at):
                return False
            at += len(piece)
        return at == len(text)

    def keep_text(self, text: str) -> None:
        """``text``, equal to the lines joined (the caller compared them), kept as the text
        instead of the joined copy."""
        self._text, self._pending = text, None

    @property
    def lines(self) -> Sequence[str]:
        """The lines, each with its line ending."""
        return tuple(self._lines)

    @property
    def line_count(self) -> int:
        """How many lines hold text (a final line ending opens no further line here)."""
        return len(self._lines)

    def apply_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        """Apply one change from ``didChange``, as pygls does for each sync kind."""
        if isinstance(change, types.TextDocumentContentChangePartial):
            if self._is_sync_kind_incremental:
                self._apply_incremental_change(change)
                return
            log.error("an incremental change arrived for a document not synced incrementally")
        if self._is_sync_kind_none:
            return
        self._set_text(change.text)

    def _set_text(self, text: str) -> None:
        self._lines = split_lines(text)
        self._blocks.reset()
        self._text, self._pending, self._since = text, None, None

    def _locate(self, position: types.Position) -> tuple[int, int]:
        """(line index, code-point column) of a position; line index == number of lines is
        the empty line after a final line ending (or the end of an empty document)."""
        lines = self._lines
        if position.line >= len(lines):
            if not lines or lines[-1][-1] in "\r\n":
                return len(lines), 0
            return len(lines) - 1, len(content(lines[-1]))
        return position.line, column_index(
            content(lines[position.line]), position.character, self._encoding
        )

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        start = self._locate(change.range.start)
        end = self._locate(change.range.end)
        if end < start:  # a reversed range: take it as the same span
            start, end = end, start
        lines = self._lines
        # Re-split from the line before the start: a "\r" ending it may now meet a "\n".
        first = max(min(start[0], len(lines)) - 1, 0)
        last = min(end[0] + 1, len(lines))
        region = lines[first:last]
        head = sum(len(line) for line in region[: start[0] - first]) + start[1]
        tail = sum(len(line) for line in region[: end[0] - first]) + end[1]
        text = "".join(region)
        if self._since is not None:  # lines before ``first`` and after ``last`` stay
            version, read, count, kept_head, kept_tail = self._since
            kept_tail = min(kept_tail, len(lines) - last)
            self._since = (version, read, count, min(kept_head, first), kept_tail)
        changed = split_lines(text[:head] + change.text + text[tail:])
        lines[first:last] = changed
        self._blocks.replaced(first, last, len(changed))
        self._text, self._pending = None, None


class LineWorkspace(Workspace):
    """pygls' workspace, with open documents kept as ``LineDocument``."""

    @classmethod
    def like(cls, workspace: Workspace) -> LineWorkspace:
        """A new, empty workspace with the same root, folders, sync kind and encoding."""
        return cls(
            workspace.root_uri,
            workspace._sync_kind,
            list(workspace.folders.values()),
            workspace.position_encoding,
        )

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return LineDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self.position_codec,
        )
