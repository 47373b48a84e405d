"""The client's copy of an open document: LSP positions (UTF-16) and incremental changes.

Columns are converted by the server's text model (``tether.text.model``); the benchmark's
texts end their lines with ``\\n`` only, so a list of ``\\n``-cut lines is LSP's lines.
"""

from __future__ import annotations

from typing import Any

from tether.text.model import column_index, units


class ClientDocument:
    """An open document as the editor holds it: lines without their ``\\n``."""

    def __init__(self, uri: str, text: str, version: int = 1) -> None:
        self.uri = uri
        self.lines = text.split("\n")
        self.version = version

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def apply(self, change: dict[str, Any]) -> None:
        """Apply one LSP ``TextEdit`` / content change (UTF-16 positions)."""
        start, end = change["range"]["start"], change["range"]["end"]
        first, last = self.lines[start["line"]], self.lines[end["line"]]
        head = first[: column_index(first, start["character"], "utf-16")]
        tail = last[column_index(last, end["character"], "utf-16") :]
        new = change.get("newText", change.get("text", ""))
        self.lines[start["line"] : end["line"] + 1] = (head + new + tail).split("\n")

    def insert(self, line: int, column: int, text: str) -> dict[str, Any]:
        """Insert ``text`` at a code-point column; the incremental change that says so."""
        character = units(self.lines[line][:column], "utf-16")
        position = {"line": line, "character": character}
        change = {"range": {"start": position, "end": position}, "text": text}
        self.apply(change)
        return change

    def did_open(self) -> dict[str, Any]:
        """``textDocument/didOpen`` params."""
        return {
            "textDocument": {
                "uri": self.uri,
                "languageId": "plaintext",
                "version": self.version,
                "text": self.text,
            }
        }

    def did_change(self, changes: list[dict[str, Any]]) -> dict[str, Any]:
        """``textDocument/didChange`` params for changes already applied here."""
        self.version += 1
        return {
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": changes,
        }
