"""Apply a ``workspace/applyEdit`` to files on disk (the headless client has no buffers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..text.model import offset_at
from ..workspace.folders import path_from_uri
from ..writes.disk import BOM, write_text_atomic


class EditRefused(Exception):
    """An edit the headless client cannot apply; its message is the failure reason."""


def offset_of(text: str, line: int, character: int, encoding: str = "utf-16") -> int:
    """The code-point offset of an LSP position (``textmodel.offset_at``: LSP's lines)."""
    return offset_at(text, line, character, encoding)


def apply_text_edits(text: str, edits: list[dict[str, Any]], encoding: str = "utf-16") -> str:
    """``text`` with LSP ``TextEdit``s applied (ranges refer to the original text)."""
    spans = []
    for edit in edits:
        start, end = edit["range"]["start"], edit["range"]["end"]
        spans.append(
            (
                offset_at(text, start["line"], start["character"], encoding),
                offset_at(text, end["line"], end["character"], encoding),
                edit["newText"],
            )
        )
    for start, end, new in sorted(spans, key=lambda s: s[0], reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _path(uri: str) -> Path:
    path = path_from_uri(uri)
    if path is None:
        raise EditRefused(f"not a file URI: {uri}")
    return path


def apply_workspace_edit(edit: dict[str, Any]) -> list[Path]:
    """Apply ``documentChanges`` (or ``changes``) to disk; the files written."""
    written: list[Path] = []
    changes = edit.get("documentChanges")
    if changes is None:
        changes = [
            {"textDocument": {"uri": uri, "version": None}, "edits": edits}
            for uri, edits in (edit.get("changes") or {}).items()
        ]
    for change in changes:
        kind = change.get("kind")
        if kind == "create":
            path = _path(change["uri"])
            options = change.get("options") or {}
            if path.exists() and not options.get("overwrite"):
                if options.get("ignoreIfExists"):
                    continue
                raise EditRefused(f"{path.name} already exists")
            write_text_atomic(path, "")
            written.append(path)
        elif kind is not None:
            raise EditRefused(f"the headless client does not {kind} files")
        else:
            path = _path(change["textDocument"]["uri"])
            data = path.read_bytes() if path.exists() else b""
            bom = data.startswith(BOM)
            text = data.decode("utf-8-sig")
            write_text_atomic(path, apply_text_edits(text, change["edits"]), bom)
            written.append(path)
    return written
