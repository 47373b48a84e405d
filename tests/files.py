"""Files a test lays out in a project folder, byte for byte as given."""

from __future__ import annotations

from pathlib import Path


def write(root: Path, rel: str, content: str | bytes = "x\n") -> Path:
    """Write ``content`` to ``root / rel`` (folders made as needed): text as UTF-8 with its
    line ends kept as they are (no newline translation), bytes unchanged. The path."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")
    return path
