"""An edit seen through a window of whole lines: the text around its changes, not the file.

An edit of one line of a 10 MB buffer knows where it changes the text (``TextChange``s,
in document order). Its minimal changes, its diff and its preview depend only on the
lines around those changes, so they are computed on ``base[at:end]`` and the same lines
after the edit (``local_pair``) instead of on two whole 10 MB texts: nothing builds the
whole new text, nothing compares it with the old one.

The window is wide enough that the answers are the ones the whole texts give (offsets and
line numbers moved by where it starts): it reaches ``lines`` whole lines beyond the
changes on each side, and it grows while the texts' common prefix runs to its end (an
inserted line equal to the ones after it: the whole texts may stay equal further on).
Before the changes both texts are equal by construction, and a common suffix cut by the
window's end is the one the whole texts have, cut by the same amount.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..host import TextChange
from .model import line_end_at, line_start_at
from .span import common_prefix, line_end_after, line_start_before

_GROWTHS = 4
"""Times the window's end is pushed further before it is taken to the end of the text."""


def local_pair(base: str, changes: Sequence[TextChange], lines: int) -> tuple[int, str, str]:
    """``(at, old, new)``: ``old`` is ``base[at:at + len(old)]``, ``new`` the same part
    after ``changes`` (not empty, in order, not overlapping); both start ``lines`` whole
    lines (at least 1) before the first change's line and end ``lines`` whole lines after
    the last change's line, or further (see the module)."""
    first, last = changes[0].start, changes[-1].end
    lines = max(lines, 1)
    at = line_start_at(base, first)
    for _ in range(lines):
        if at == 0:
            break
        at = line_start_before(base, at)
    end = line_end_at(base, last) if last < len(base) else len(base)
    more = lines
    for growth in range(_GROWTHS + 1):
        for _ in range(more):
            if end >= len(base):
                break
            end = line_end_after(base, end)
        if growth == _GROWTHS:
            end = len(base)
        old = base[at:end]
        new = _applied(base, changes, at, end)
        if end >= len(base):
            return at, old, new
        prefix = common_prefix(old, new, first - at)
        if prefix < min(len(old), len(new)):
            return at, old, new
        more *= 4  # the texts are equal to the window's end: they may be further on
    raise AssertionError("unreachable")  # pragma: no cover


def _applied(base: str, changes: Sequence[TextChange], at: int, end: int) -> str:
    """``base[at:end]`` with ``changes`` (all inside it) applied."""
    out: list[str] = []
    cursor = at
    for change in changes:
        out.append(base[cursor : change.start])
        out.append(change.new_text)
        cursor = change.end
    out.append(base[cursor:end])
    return "".join(out)


def shifted(changes: Sequence[TextChange], by: int) -> tuple[TextChange, ...]:
    """``changes`` with their offsets moved by ``by``."""
    return tuple(TextChange(c.start + by, c.end + by, c.new_text) for c in changes)
