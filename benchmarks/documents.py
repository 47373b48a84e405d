"""The client's copy of an open document: LSP positions (UTF-16) and incremental changes."""

from __future__ import annotations

from typing import Any


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def index_of_utf16(line: str, character: int) -> int:
    """The code-point index of a UTF-16 column in ``line``."""
    units = 0
    for index, char in enumerate(line):
        if units >= character:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


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
        head = first[: index_of_utf16(first, start["character"])]
        tail = last[index_of_utf16(last, end["character"]) :]
        new = change.get("newText", change.get("text", ""))
        self.lines[start["line"] : end["line"] + 1] = (head + new + tail).split("\n")

    def insert(self, line: int, column: int, text: str) -> dict[str, Any]:
        """Insert ``text`` at a code-point column; the incremental change that says so."""
        character = utf16_len(self.lines[line][:column])
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
