"""Asking the editor for problems around an edit: before it is sent, and after, until the
answer settles — bounded, so a slow or silent editor never holds a run.

Language servers publish after a debounce (and again as they finish checking), so the
problems right after an edit may still be the old ones: the editor is asked every
``poll`` seconds until its answer has not changed for ``settle_ms``, at most
``max_wait_ms``. An editor that cannot answer is not waited for at all; one whose request
outlives the cap has it withdrawn (``$/cancelRequest``) and is not asked again in the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import anyio

from ..host import ReportsDiagnostics
from ..workspace.folders import Workspace, path_from_uri
from .report import Problem, compare, describe_delta, problems_in

MIN_POLL_SECONDS = 0.1
"""The shortest time between two questions: a settle of 300 ms costs about four."""

Unanswered = Literal["unsupported", "timeout"]


@dataclass(slots=True)
class ProblemWatcher:
    """A run's access to the editor's problems, with the settings that bound its waits."""

    reporter: ReportsDiagnostics
    workspace: Workspace
    settle_ms: int = 300
    max_wait_ms: int = 3000
    silent: bool = False
    """A request outlived its cap in this run: edits stop asking (the tool still may)."""

    @property
    def after_edits(self) -> bool:
        """Whether edits check the problems at all (``diagnosticsSettleMs: 0`` turns it off)."""
        return self.settle_ms > 0 and self.max_wait_ms > 0 and not self.silent

    async def ask(
        self, uris: Sequence[str] | None, wait_seconds: float
    ) -> list[Problem] | Unanswered:
        """The problems of ``uris`` (None: all the editor has) inside the workspace, or why
        there are none: the editor cannot answer, or it did not within ``wait_seconds``."""
        with anyio.move_on_after(wait_seconds):
            items = await self.reporter.diagnostics(None if uris is None else list(uris))
            if items is None:
                return "unsupported"
            return await problems_in(items, self.workspace)
        self.silent = True
        return "timeout"

    async def settled(self, uris: Sequence[str]) -> list[Problem] | None:
        """The problems once unchanged for ``settle_ms`` (or the last answer at the cap);
        None when the editor gave no answer at all."""
        settle = self.settle_ms / 1000
        poll = max(MIN_POLL_SECONDS, settle / 3)
        latest: list[Problem] | None = None
        seen: object = None
        since = 0.0
        with anyio.move_on_after(self.max_wait_ms / 1000):
            while True:
                await anyio.sleep(poll)
                items = await self.reporter.diagnostics(list(uris))
                if items is None:
                    return latest
                problems = await problems_in(items, self.workspace)
                now = anyio.current_time()
                fingerprint = sorted((p.key, p.line) for p in problems)
                if fingerprint != seen:
                    seen, since, latest = fingerprint, now, problems
                elif now - since >= settle:
                    return problems
        if latest is None:
            self.silent = True  # not one answer in the whole wait: stop asking this run
        return latest


@dataclass(slots=True)
class EditProblems:
    """One edit call's problems: asked before its edit is sent, then after it applied."""

    watcher: ProblemWatcher | None
    before: dict[str, list[Problem]] = field(default_factory=dict)
    gave_up: bool = False

    async def take_before(self, uri: str) -> None:
        """The problems of ``uri`` before the edit (asked once per call, bounded)."""
        watcher = self.watcher
        if watcher is None or self.gave_up or uri in self.before or not watcher.after_edits:
            return
        answer = await watcher.ask([uri], watcher.max_wait_ms / 1000)
        if isinstance(answer, list):
            self.before[uri] = answer
        else:
            self.gave_up = True

    async def note(self) -> str:
        """What the edit added and fixed, once the editor's answer settled; "" when the
        editor cannot tell."""
        watcher = self.watcher
        if watcher is None or self.gave_up or not self.before or not watcher.after_edits:
            return ""
        after = await watcher.settled(list(self.before))
        if after is None:
            return ""
        before = [p for problems in self.before.values() for p in problems]
        ws = watcher.workspace
        files = [_shown(ws, uri) for uri in self.before]
        return describe_delta(compare(before, after), ws.display, files)


def _shown(workspace: Workspace, uri: str) -> str:
    path = path_from_uri(uri)
    return uri if path is None else workspace.display(path)
