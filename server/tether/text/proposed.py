"""The changed window of a proposed file change, as the approval preview carries it.

A client shows ``proposed.base_text`` against ``proposed.text`` (or the file with the window
replaced), hunk by hunk (``proposed.hunks``: the edit's own changes), and may send back its
own text for the window; ``revised_text`` puts that text in place. The window and its hunks
are whole lines (``textspan.changed_span``), so their starts are always at character 0 and
only an end at the end of a file without a final line end depends on the position
encoding: they are counted once, in the negotiated one.
"""

from __future__ import annotations

from collections.abc import Sequence

from tether_protocol import Position, ProposedHunk, ProposedText, Range

from ..host import TextChange
from .model import Encoding, range_at
from .span import changed_span
from .window import local_pair


def proposed_window(
    base: str, new: str, changes: Sequence[TextChange], encoding: Encoding
) -> ProposedText:
    """The lines of ``base`` that change on the way to ``new``: their range, their new text
    and its hunks, ``changes`` (the edit's whole-line ``minimal_changes``, in document order)
    with their ranges counted in ``encoding``."""
    span = changed_span(base, new)
    return ProposedText(
        range=_range(base, span.start, span.old_end, encoding),
        text=new[span.start : span.new_end],
        base_text=base[span.start : span.old_end],
        hunks=[
            ProposedHunk(range=_range(base, c.start, c.end, encoding), text=c.new_text)
            for c in changes
        ],
    )


def proposed_window_of(
    base: str, changes: Sequence[TextChange], encoding: Encoding
) -> ProposedText:
    """``proposed_window(base, apply_changes(base, changes), changes, encoding)``, from the
    lines around ``changes`` (``window.local_pair``), without the whole new text."""
    if not changes:
        return proposed_window(base, base, changes, encoding)
    at, old, new = local_pair(base, changes, 2)
    span = changed_span(old, new, (changes[0].start - at, at + len(old) - changes[-1].end))
    return ProposedText(
        range=_range(base, at + span.start, at + span.old_end, encoding),
        text=new[span.start : span.new_end],
        base_text=old[span.start : span.old_end],
        hunks=[
            ProposedHunk(range=_range(base, c.start, c.end, encoding), text=c.new_text)
            for c in changes
        ],
    )


def _range(text: str, start: int, end: int, encoding: Encoding) -> Range:
    # In document order, each count goes on from the last (text.model remembers it).
    (start_line, start_character), (end_line, end_character) = range_at(text, start, end, encoding)
    return Range(
        start=Position(line=start_line, character=start_character),
        end=Position(line=end_line, character=end_character),
    )


def revised_text(base: str, new: str, edited_window: str) -> str:
    """``base`` with the window that changes on the way to ``new`` replaced by the user's
    ``edited_window`` (the new text of the window as the user left it)."""
    span = changed_span(base, new)
    return base[: span.start] + edited_window + base[span.old_end :]


def window_text(base: str, new: str) -> tuple[str, str]:
    """The window's text in ``base`` and in ``new``."""
    span = changed_span(base, new)
    return base[span.start : span.old_end], new[span.start : span.new_end]
