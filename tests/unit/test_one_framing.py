"""LSP framing is written once: no module outside ``tether.framing`` writes or parses a
``Content-Length`` header itself.

A copy of the framing drifts from the hardened reader (a client that parses headers its own
way, a writer with other headers); every writer and reader imports ``tether.framing``
instead. Tests whose subject is malformed framing build broken headers by hand on purpose,
and each is listed here with its reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEARCHED = ("server", "benchmarks", "tests")
FRAMING = "server/tether/framing/"
"""The one implementation (a package: the header codec and the server's hardened reader)."""
# (file, why it spells out Content-Length headers)
ALLOWED: list[tuple[str, str]] = [
    ("tests/unit/test_transport.py", "feeds the reader malformed and oddly cased headers"),
    ("tests/e2e/test_hostile_client.py", "sends the real server malformed headers"),
    ("tests/e2e/test_fuzz.py", "mutates headers to fuzz the real server"),
    ("tests/unit/test_one_framing.py", "this check's own examples"),
]
# An LSP header in a string: bytes naming it, or text with the header's colon (HTTP code
# naming the header without a colon, as a dict key, is not LSP framing).
_HEADER_TEXT = re.compile(r"content-length\s*:", re.IGNORECASE)


def writes_framing(source: str) -> list[int]:
    """The lines of string constants that spell out an LSP ``Content-Length`` header."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant):
            value = node.value
            if (isinstance(value, bytes) and b"content-length" in value.lower()) or (
                isinstance(value, str) and _HEADER_TEXT.search(value)
            ):
                lines.append(node.lineno)
    return sorted(lines)


def framing_outside_its_module() -> dict[str, list[int]]:
    """Every Python file, outside the framing package and the allowed tests, that frames."""
    allowed = {path for path, _ in ALLOWED}
    found = {}
    for top in SEARCHED:
        for path in sorted((ROOT / top).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name.startswith(FRAMING) or name in allowed or "node_modules" in path.parts:
                continue
            lines = writes_framing(path.read_text(encoding="utf-8"))
            if lines:
                found[name] = lines
    return found


def test_the_check_sees_a_header_written_or_parsed_by_hand() -> None:
    assert writes_framing('x = b"Content-Length: %d\\r\\n\\r\\n" % n') == [1]
    assert writes_framing('x = line.lower().startswith(b"content-length")') == [1]
    assert writes_framing('x = "Content-Length: %d" % n') == [1]
    assert writes_framing('headers.get("Content-Length")') == []  # HTTP, not LSP framing


def test_no_module_but_tether_framing_writes_or_parses_frame_headers() -> None:
    assert framing_outside_its_module() == {}, (
        "frame with tether.framing (frame, content_length, FrameDecoder, FrameReader)"
    )


def test_every_allowed_file_still_needs_its_entry() -> None:
    stale = [path for path, _ in ALLOWED if not writes_framing((ROOT / path).read_text("utf-8"))]
    assert stale == []
