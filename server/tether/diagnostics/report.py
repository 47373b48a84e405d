"""The editor's problems (LSP diagnostics) as the model reads them: what an edit added or
fixed, and a listing for the ``diagnostics`` tool.

Problems are compared without their ranges: an edit shifts the lines below it, so the same
error one line further down is not new. What counts is how many times each (severity,
source, code, message) occurs in a file before and after; information and hints are left
out (language servers report many, and they seldom need the model's attention).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio.to_thread

from tether_protocol import FileDiagnostics

from ..workspace.folders import Workspace, path_from_uri

SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}
SERIOUS = frozenset({1, 2})
"""Errors and warnings: the only problems told after an edit."""
MAX_NEW_LISTED = 20
"""New problems listed after an edit; the rest are counted."""
MAX_FIXED_LISTED = 5
"""Fixed problems listed after an edit; the rest are counted."""
MAX_MESSAGE_CHARS = 200
"""A problem's message is cut to this many characters (some quote whole types)."""

Key = tuple[Path, int, str | None, str | None, str]


@dataclass(frozen=True, slots=True)
class Problem:
    """One diagnostic of one file, as the model is told it."""

    path: Path
    line: int
    """1-based, where the problem starts."""
    severity: int
    """1 error, 2 warning, 3 information, 4 hint (a missing severity reads as an error)."""
    source: str | None
    code: str | None
    message: str

    @property
    def key(self) -> Key:
        """What stays the same when an edit moves the problem to another line."""
        return (self.path, self.severity, self.source, self.code, self.message)

    def label(self) -> str:
        """``error [pyright] message``: the problem without its place."""
        source = f" [{self.source}]" if self.source else ""
        return f"{SEVERITY.get(self.severity, 'error')}{source} {one_line(self.message)}"

    def describe(self, shown: str) -> str:
        """``path:line: severity [source] message``."""
        return f"{shown}:{self.line}: {self.label()}"


def one_line(message: str) -> str:
    """A message on one line, cut to ``MAX_MESSAGE_CHARS``."""
    text = " ".join(message.split())
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 1] + "…"


@dataclass(frozen=True, slots=True)
class ProblemDelta:
    """What an edit changed in its files' errors and warnings."""

    new: tuple[Problem, ...] = ()
    fixed: tuple[Problem, ...] = ()


def _resolved(paths: Sequence[Path]) -> list[Path]:
    # Editors name files as opened, maybe through a symlink; the workspace's roots are real.
    out = []
    for path in paths:
        try:
            out.append(path.resolve())
        except (OSError, RuntimeError):
            out.append(Path(os.path.normpath(path)))
    return out


async def problems_in(items: Sequence[FileDiagnostics], workspace: Workspace) -> list[Problem]:
    """The problems of the documents inside the workspace (others are left out), in the
    editor's order."""
    located = [(path_from_uri(item.uri), item) for item in items]
    kept = [(path, item) for path, item in located if path is not None]
    paths = await anyio.to_thread.run_sync(_resolved, [path for path, _ in kept])
    problems: list[Problem] = []
    for path, (_, item) in zip(paths, kept, strict=True):
        if workspace.root_of(path) is None:
            continue
        for diagnostic in item.diagnostics:
            code = diagnostic.code
            problems.append(
                Problem(
                    path=path,
                    line=diagnostic.range.start.line + 1,
                    severity=diagnostic.severity or 1,
                    source=diagnostic.source or None,
                    code=None if code is None else str(code),
                    message=diagnostic.message,
                )
            )
    return problems


def _unmatched(problems: Sequence[Problem], others: Sequence[Problem]) -> tuple[Problem, ...]:
    """The problems of ``problems`` left once each of ``others`` took away one equal to it."""
    left = Counter(p.key for p in others)
    out = []
    for problem in problems:
        if left[problem.key] > 0:
            left[problem.key] -= 1
        else:
            out.append(problem)
    return tuple(out)


def compare(before: Sequence[Problem], after: Sequence[Problem]) -> ProblemDelta:
    """The errors and warnings ``after`` has more of than ``before`` (new) and fewer
    (fixed), counted per (file, severity, source, code, message)."""
    serious_before = [p for p in before if p.severity in SERIOUS]
    serious_after = [p for p in after if p.severity in SERIOUS]
    return ProblemDelta(
        new=_unmatched(serious_after, serious_before),
        fixed=_unmatched(serious_before, serious_after),
    )


def describe_delta(delta: ProblemDelta, shown: Callable[[Path], str], files: Sequence[str]) -> str:
    """What the model reads after an edit: the new problems, one a line (capped), and a
    short list of the fixed ones; a line saying none are new when none are."""
    if not delta.new and not delta.fixed:
        return f"The editor reports no new errors or warnings in {', '.join(files)}."
    parts: list[str] = []
    if delta.new:
        parts.append(f"The editor reports {len(delta.new)} new problem(s) after this edit:")
        parts.extend(p.describe(shown(p.path)) for p in delta.new[:MAX_NEW_LISTED])
        if len(delta.new) > MAX_NEW_LISTED:
            parts.append(f"… and {len(delta.new) - MAX_NEW_LISTED} more")
    else:
        parts.append("The editor reports no new errors or warnings.")
    if delta.fixed:
        listed = "; ".join(f"{shown(p.path)}: {p.label()}" for p in delta.fixed[:MAX_FIXED_LISTED])
        more = len(delta.fixed) - MAX_FIXED_LISTED
        extra = f"; and {more} more" if more > 0 else ""
        parts.append(f"Fixed by this edit ({len(delta.fixed)}): {listed}{extra}")
    return "\n".join(parts)


@dataclass(slots=True)
class Listing:
    """The problems the ``diagnostics`` tool shows, most severe first, capped."""

    lines: list[str] = field(default_factory=list)
    more: int = 0
    files: int = 0


def listing(problems: Sequence[Problem], shown: Callable[[Path], str], limit: int) -> Listing:
    """Errors first, then warnings, information and hints, each by file and line."""
    ordered = sorted(problems, key=lambda p: (p.severity, shown(p.path), p.line, p.message))
    return Listing(
        lines=[p.describe(shown(p.path)) for p in ordered[:limit]],
        more=max(0, len(ordered) - limit),
        files=len({p.path for p in problems}),
    )
