"""A language server behind the test editor: it answers ``agent/diagnostics`` the way VS Code
(``languages.getDiagnostics``) and Neovim (``vim.diagnostic.get``) do — from the problems
last *published*, which change only ``delay`` seconds after an edit was applied (a real
server checks after a debounce), not from the text as it is now.

Its checker is simple and deterministic: each line holding ``nme`` has the error
``"nme" is not defined`` and each holding ``TODO`` a warning. It records every request, and
can answer slowly, never, or with an error.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

from .conftest import Editor

Answer = Literal["published", "never", "late", "error", "method-not-found", "malformed"]
LATE_SECONDS = 100
"""When a ``late`` answer comes: a run that waited for it would outlast any test's bound."""


def check(text: str) -> list[dict[str, Any]]:
    """The problems of a text, as LSP diagnostics."""
    found = []
    for number, line in enumerate(text.splitlines()):
        span = {"start": {"line": number, "character": 0}, "end": {"line": number, "character": 1}}
        if "nme" in line:
            found.append(
                {
                    "range": span,
                    "severity": 1,
                    "source": "fakels",
                    "code": "reportUndefinedVariable",
                    "message": '"nme" is not defined',
                }
            )
        if "TODO" in line:
            found.append({"range": span, "severity": 2, "source": "fakels", "message": "TODO left"})
    return found


class LanguageServer:
    """The problems an editor shows, published ``delay`` seconds after each applied edit."""

    def __init__(self, editor: Editor, files: list[Path], delay: float = 0.3) -> None:
        self.editor = editor
        self.files = files
        """The documents it checks (open buffers or files on disk)."""
        self.delay = delay
        self.published: dict[str, list[dict[str, Any]]] = {}
        self.requests: list[dict[str, Any]] = []
        self.withdrawn = 0
        """Requests the server withdrew (``$/cancelRequest``) before they were answered."""
        self.answer: Answer = "published"
        self.extra: dict[str, list[dict[str, Any]]] = {}
        """Problems of other documents (e.g. outside the workspace), always published."""
        self.publications = 0
        self._late: list[asyncio.TimerHandle] = []
        apply = editor._apply

        def apply_then_check(edit: types.WorkspaceEdit) -> None:
            apply(edit)  # the editor applies it; its language server publishes later
            self._late.append(asyncio.get_running_loop().call_later(self.delay, self.publish))

        editor._apply = apply_then_check  # type: ignore[method-assign]

        async def on_diagnostics(params: Any) -> Any:
            return await self._answer(params)

        editor.client.feature("agent/diagnostics")(on_diagnostics)

    def text(self, path: Path) -> str:
        """What the editor holds for ``path``: its buffer, else the disk."""
        uri = path.as_uri()
        if uri in self.editor.docs:
            return self.editor.docs[uri][0]
        return path.read_text() if path.exists() else ""

    def publish(self) -> None:
        """Check every file now (what a language server does once its debounce fires)."""
        self.published = {p.as_uri(): check(self.text(p)) for p in self.files}
        self.published.update(self.extra)
        self.publications += 1

    def publish_after_disk_change(self, path: Path) -> None:
        """Publish ``delay`` seconds after ``path`` appears on disk (a file watcher)."""
        loop = asyncio.get_running_loop()

        def look() -> None:
            if path.exists():
                self._late.append(loop.call_later(self.delay, self.publish))
            else:
                self._late.append(loop.call_later(0.02, look))

        look()

    def close(self) -> None:
        """Cancel the publications still pending (the test is over)."""
        for handle in self._late:
            handle.cancel()

    async def _answer(self, params: Any) -> Any:
        self.requests.append(params)
        try:
            if self.answer == "never":
                await asyncio.get_running_loop().create_future()
            if self.answer == "late":  # far past any cap, and past RUN_WITHIN of the tests
                await asyncio.wait_for(asyncio.get_running_loop().create_future(), LATE_SECONDS)
        except asyncio.CancelledError:
            self.withdrawn += 1
            raise
        except TimeoutError:
            pass
        if self.answer == "method-not-found":
            raise JsonRpcMethodNotFound("agent/diagnostics")
        if self.answer == "error":
            raise JsonRpcException("the language server crashed", code=-32603)
        if self.answer == "malformed":
            return {"items": "nothing"}
        uris = params.get("uris") if isinstance(params, dict) else getattr(params, "uris", None)
        items = [
            {"uri": uri, "diagnostics": found}
            for uri, found in self.published.items()
            if found and (uris is None or uri in uris)
        ]
        return {"items": items}
