"""Undo of the hunks of a run's edit that the user did not touch since.

An edit record holds the changed window (``old`` became ``new`` at ``start``); newer ones
also the few lines around it in the text the edit left (``lead`` and ``trail``). When the
file changed since, each hunk of the window (a run of changed lines, found by diffing
``lead + old + trail`` with ``lead + new + trail``) is looked for in the current text with
up to ``CONTEXT_LINES`` unchanged lines on each side, as ``patch`` does without fuzz: found
exactly once, the user did not touch it and it is put back; otherwise (the user changed its
lines or the lines around it, or the text is there more than once) it is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

CONTEXT_LINES = 3
"""Unchanged lines on each side of a hunk that must still be there for it to be undone."""
CONTEXT_CHARS = 1024
"""At most this much context is recorded on each side of a window (long lines are cut)."""
HUNK_LIMIT = 64 * 1024
"""Windows whose old and new texts together are longer are undone only as a whole."""


def context_around(after: str, start: int, end: int) -> tuple[str, str]:
    """The text before ``start`` and after ``end`` in ``after``: the rest of their lines
    and ``CONTEXT_LINES`` more on each side, each at most ``CONTEXT_CHARS``."""
    pos = after.rfind("\n", 0, start) + 1
    for _ in range(CONTEXT_LINES):
        if pos == 0:
            break
        pos = after.rfind("\n", 0, pos - 1) + 1
    lead = after[max(pos, start - CONTEXT_CHARS) : start]
    pos = end
    for _ in range(CONTEXT_LINES + 1):
        if pos >= len(after):
            break
        newline = after.find("\n", pos)
        pos = len(after) if newline == -1 else newline + 1
    trail = after[end : min(pos, end + CONTEXT_CHARS)]
    return lead, trail


@dataclass(frozen=True)
class Hunk:
    """``new`` (the run's text) is to become ``old`` again, found with its context."""

    before: str
    old: str
    new: str
    after: str

    @property
    def pattern(self) -> str:
        return self.before + self.new + self.after


def _opcodes(
    lead: str, old: str, new: str, trail: str
) -> tuple[list[str], list[str], list[tuple[str, int, int, int, int]]]:
    """The lines of ``lead + old + trail`` and ``lead + new + trail`` and how they differ:
    only the lines the window is on are diffed (the lines of ``lead`` and ``trail`` around
    them are equal, and a diff of repeated lines must not pair them otherwise)."""
    cut = lead.rfind("\n") + 1
    head, lead_rest = lead[:cut], lead[cut:]
    cut = trail.find("\n") + 1 or len(trail)
    trail_rest, tail = trail[:cut], trail[cut:]
    head_lines = head.splitlines(keepends=True)
    tail_lines = tail.splitlines(keepends=True)
    core_old = (lead_rest + old + trail_rest).splitlines(keepends=True)
    core_new = (lead_rest + new + trail_rest).splitlines(keepends=True)
    matcher = SequenceMatcher(None, core_old, core_new, autojunk=False)
    h = len(head_lines)
    ops = [("equal", 0, h, 0, h)] if h else []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        ops.append((tag, i1 + h, i2 + h, j1 + h, j2 + h))
    t, i, j = len(tail_lines), len(core_old) + h, len(core_new) + h
    if t:
        ops.append(("equal", i, i + t, j, j + t))
    merged: list[tuple[str, int, int, int, int]] = []
    for op in ops:
        if merged and op[0] == "equal" and merged[-1][0] == "equal":
            merged[-1] = ("equal", merged[-1][1], op[2], merged[-1][3], op[4])
        else:
            merged.append(op)
    return head_lines + core_old + tail_lines, head_lines + core_new + tail_lines, merged


def hunks(lead: str, old: str, new: str, trail: str) -> list[Hunk]:
    """The hunks of the window ``old`` → ``new`` with ``lead`` and ``trail`` around it,
    each with the unchanged lines next to it (at most ``CONTEXT_LINES`` a side)."""
    old_lines, new_lines, opcodes = _opcodes(lead, old, new, trail)
    found: list[Hunk] = []
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            continue
        before_lines = 0
        if index > 0:
            _, _, _, e1, e2 = opcodes[index - 1]
            before_lines = min(CONTEXT_LINES, e2 - e1)
        after_lines = 0
        if index + 1 < len(opcodes):
            _, _, _, e1, e2 = opcodes[index + 1]
            after_lines = min(CONTEXT_LINES, e2 - e1)
        found.append(
            Hunk(
                before="".join(new_lines[j1 - before_lines : j1]),
                old="".join(old_lines[i1:i2]),
                new="".join(new_lines[j1:j2]),
                after="".join(new_lines[j2 : j2 + after_lines]),
            )
        )
    return found


def _only_place(text: str, pattern: str) -> int | None:
    """Where ``pattern`` is in ``text`` when it is there exactly once."""
    if not pattern:
        return None
    first = text.find(pattern)
    if first == -1 or text.find(pattern, first + 1) != -1:
        return None
    return first


@dataclass(frozen=True)
class PartialRevert:
    """``text`` with the untouched hunks put back: ``reverted`` of them, ``kept`` left."""

    text: str
    reverted: int
    kept: int


def revert_untouched(current: str, found: list[Hunk]) -> PartialRevert:
    """Put back, in ``current``, each hunk still there as the run left it with its context."""
    places: list[tuple[int, int, str]] = []  # start, end of the run's text; the text before
    kept = 0
    for hunk in found:
        at = _only_place(current, hunk.pattern)
        if at is None:
            kept += 1
            continue
        start = at + len(hunk.before)
        places.append((start, start + len(hunk.new), hunk.old))
    places.sort()
    pieces: list[str] = []
    done = 0
    reverted = 0
    for start, end, old in places:
        if start < done:
            kept += 1  # overlaps a hunk already put back: the text is not as the run left it
            continue
        pieces += [current[done:start], old]
        done = end
        reverted += 1
    pieces.append(current[done:])
    return PartialRevert(text="".join(pieces), reverted=reverted, kept=kept)
