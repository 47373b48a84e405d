"""The changed window of a proposed file change, as the approval preview carries it.

A client shows ``proposed.base_text`` against ``proposed.text`` (or the file with the window
replaced) and may send back its own text for the window; ``revised_text`` puts that text in
place. The window is whole lines (``textspan.changed_span``), so its start is always at
character 0 and only its end — when it stops at the end of a file without a final line
end — depends on the position encoding: it is counted once, in the negotiated one.
"""

from __future__ import annotations

from tether_protocol import Position, ProposedText, Range

from .model import Encoding, position_at
from .span import changed_span


def proposed_window(base: str, new: str, encoding: Encoding) -> ProposedText:
    """The lines of ``base`` that change on the way to ``new``, their range and new text."""
    span = changed_span(base, new)
    start = position_at(base, span.start, encoding)
    end = position_at(base, span.old_end, encoding)
    return ProposedText(
        range=Range(
            start=Position(line=start[0], character=start[1]),
            end=Position(line=end[0], character=end[1]),
        ),
        text=new[span.start : span.new_end],
        base_text=base[span.start : span.old_end],
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
