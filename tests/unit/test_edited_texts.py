"""An edited file's text as a checkpoint keeps it (``session/edited_texts.py``): named by
the sha256 of the bytes a file holds and sized by them, whatever the characters, BOM or
not; stored under the cap (again when the store lost it), only named past it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hashed import every_text_hashed_in_pieces
from tether.session.blobs import BlobStore
from tether.session.edited_texts import text_bytes, text_state

# ASCII, Latin-1, the BMP, beyond it (four UTF-8 bytes), and lone surrogates (which
# ``surrogatepass`` writes as three bytes each); line ends of every kind.
CHARACTERS = st.sampled_from(
    ["a", "z", " ", "\n", "\r", "é", "ÿ", "中", "€", "🌍", "\ud83d", "\udc00"]
)
TEXTS = st.lists(CHARACTERS, max_size=60).map("".join)


@pytest.fixture(autouse=True)
def long_texts() -> Iterator[None]:
    """Every text counts as long (hashed by pieces, remembered): the path a 10 MB one takes."""
    with every_text_hashed_in_pieces():
        yield


@settings(max_examples=300, deadline=None)
@given(text=TEXTS, bom=st.booleans(), cap=st.integers(0, 200))
def test_a_text_is_named_and_sized_by_the_bytes_a_file_holds(
    tmp_path_factory: pytest.TempPathFactory, text: str, bom: bool, cap: int
) -> None:
    folder = tmp_path_factory.mktemp("state")
    store = BlobStore(folder)
    data = text_bytes(text, bom)
    for _ in range(2):  # the second time remembered
        seen = text_state(folder / "f.txt", text, bom, store, cap)
        assert (seen.digest, seen.size) == (hashlib.sha256(data).hexdigest(), len(data))
        if len(data) > cap:
            assert seen.why is not None
            assert not store.has(seen.digest or "")
        else:
            assert seen.why is None
            assert store.get(seen.digest or "") == data


def test_a_text_seen_again_is_stored_again_once_the_store_lost_it(tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    path.write_text("x = 1\n")
    path.chmod(0o755)
    store = BlobStore(tmp_path / "state")
    text = "é = 1\n" * 50
    first = text_state(path, text, False, store, 1 << 20)
    assert first.mode == 0o755
    store.path(first.digest or "").unlink()  # pruned
    again = text_state(path, text, False, store, 1 << 20)
    assert again == first
    assert store.get(again.digest or "") == text.encode()
