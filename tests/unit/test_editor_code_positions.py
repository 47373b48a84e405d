"""Positions of ``agent/code`` converted between the editor's encoding and the code tools'
UTF-16 against the file's text, for any line (astral characters, combining marks, …) and
every encoding a client negotiates."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.host import NoBuffers
from tether.lsp.code import _Texts
from tether.text import model as textmodel
from tether.workspace.folders import Workspace
from tether_protocol.base import Position

LINES = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=0, max_size=40
)
ENCODINGS = st.sampled_from(["utf-8", "utf-16", "utf-32"])


@settings(max_examples=150, deadline=None)
@given(line=LINES, data=st.data(), encoding=ENCODINGS)
def test_a_column_converts_both_ways(line: str, data: st.DataObject, encoding: str) -> None:
    column = data.draw(st.integers(min_value=0, max_value=len(line)))
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "f.py").write_text(f"first\n{line}\nlast\n", encoding="utf-8")
        ws = Workspace([root], NoBuffers(), encoding)  # type: ignore[arg-type]
        uri = ws.uri_for(root / "f.py")
        texts = _Texts(ws)
        utf16 = textmodel.units(line[:column], "utf-16")
        theirs = textmodel.units(line[:column], encoding)

        async def both() -> tuple[Position, tuple[int, int]]:
            sent = await texts.client(uri, 1, utf16)
            back = await texts.utf16(uri, Position(line=1, character=theirs))
            return sent, back

        sent, back = anyio.run(both)
    assert sent == Position(line=1, character=theirs)
    assert back == (1, utf16)
