"""What a buffer must hold after an edit the editor said it applied, until it reports it.

LSP editors answer ``workspace/applyEdit`` first and send the buffer's ``didChange`` when
they get to it: at once (VS Code, Helix), 150 ms later (Neovim), on a 0.5 s idle timer or
only after a synchronous command ends (Emacs + Eglot), or seconds later (vim-lsp). An
``ApprovedText`` is the server's record of such an edit: reads see its text until the
editor's own report arrives, and that report is then compared with it (``drift``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..host import BufferDrift, FileEdit
from ..text.model import split_lines
from ..text.span import changed_span, lines_before, widen

MAX_DRIFT_LINES = 40
"""Lines of the buffer shown to the model when it differs from an approved edit."""
MAX_DRIFT_CHARS = 4000
"""Characters of those lines shown at most."""


@dataclass(slots=True)
class ApprovedText:
    """An approved edit sent to the editor: what the buffer holds once it is applied."""

    path: Path
    uri: str
    edit: FileEdit
    """The approved edit; its text after is what the document holds once it is applied."""
    run_id: str | None
    open: bool
    """The document is open in the editor (its ``didChange`` will report the edit)."""
    previous: ApprovedText | None = None
    """The record this one replaced (restored when this edit is not applied)."""
    answered: bool = False
    """The editor answered ``applied: true``; reads see ``text`` from then on."""

    @classmethod
    def of(cls, edit: FileEdit, open: bool, previous: ApprovedText | None) -> ApprovedText:
        """The record for ``edit`` as it is sent."""
        return cls(edit.path, edit.uri, edit, edit.run_id, open, previous)

    @property
    def text(self) -> str:
        """The approved new text of the whole document (made when first asked: when the
        editor's report matches the edit's lines, nobody asks)."""
        return self.edit.new_text


def drift(path: Path, approved: str, current: str) -> BufferDrift:
    """The region of ``current`` that differs from ``approved``, as the model is shown it."""
    span = changed_span(approved, current)
    if span.new_end <= span.start:  # lines were removed: show the line around the gap
        span = widen(approved, span, len(current), 1)
    region = split_lines(current[span.start : span.new_end])
    shown: list[str] = []
    size = 0
    for line in region[:MAX_DRIFT_LINES]:
        size += len(line) + 1
        if size > MAX_DRIFT_CHARS and shown:
            break
        shown.append(line if len(line) <= MAX_DRIFT_CHARS else line[:MAX_DRIFT_CHARS] + "…")
    first = lines_before(current, span.start) + 1
    return BufferDrift(path, first, tuple(shown), len(region) - len(shown))
