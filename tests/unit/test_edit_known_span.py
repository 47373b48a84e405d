"""The fast path of ``edit_file``: what the edit already knows about where the texts differ.

``replacement`` tells how much of the text before and after its one replacement is
untouched; ``changed_span``, ``minimal_changes`` and the intent record's ``EditWindow``
start comparing from there. Each is checked against the straightforward computation
(from nothing known) on random texts with 1- to 4-byte characters (UTF-8) and every line
ending mixed, and the remembered hash against hashing anew.
"""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from tether.errors import ToolError
from tether.host import TextChange
from tether.lsp import documents
from tether.session import records
from tether.session.records import EditWindow, text_hash
from tether.text import span as textspan
from tether.text.edit import apply_changes, line_ending, minimal_changes, to_file_endings
from tether.tools.edits import EditFileArgs, replacement

PIECES = st.sampled_from(
    ["a", "b", "é", "€", "🌍", "\n", "\r\n", "\r", " ", "ab\n", "x\r\n", "\f", "\u2028"]
)
TEXT = st.lists(PIECES, max_size=40).map("".join)
NEEDLE = st.lists(PIECES, min_size=1, max_size=6).map("".join)


def _fresh_span(old: str, new: str, known: tuple[int, int] | None = None) -> textspan.Span:
    textspan._last = None  # the memo would answer from the previous call
    return textspan.changed_span(old, new, known)


def _model(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


@settings(max_examples=500)
@given(TEXT, NEEDLE, TEXT, st.data())
def test_one_replacement_matches_str_replace_and_its_known_ends_are_equal(
    text: str, needle: str, new_text: str, data: st.DataObject
) -> None:
    # Put the needle in (at a random place) so that most examples have an occurrence.
    at = data.draw(st.integers(0, len(text)))
    base = text[:at] + needle + text[at:]
    args = EditFileArgs(path="f", old_text=_model(needle), new_text=_model(new_text))
    try:
        change, count = replacement(base, args, "f")
    except ToolError:
        return  # not found, not unique, or nothing to change: refused as before
    assert count == 1 and isinstance(change, TextChange)
    after = apply_changes(base, (change,))
    known = (change.start, len(base) - change.end)
    # What str.replace gives (in the file's line ends), and the ends it reports are
    # untouched in both texts.
    ending = line_ending(base)
    old, new = to_file_endings(args.old_text, ending), to_file_endings(args.new_text, ending)
    assert after == base.replace(old, new, 1)
    prefix, suffix = known
    assert prefix + suffix <= len(base)
    assert base[:prefix] == after[:prefix]
    assert base[len(base) - suffix :] == after[len(after) - suffix :]
    # The span, the changes and the window from what is known equal those from nothing.
    assert _fresh_span(base, after, known) == _fresh_span(base, after)
    textspan._last = None
    fast = minimal_changes(base, after, known)
    textspan._last = None
    assert fast == minimal_changes(base, after)
    assert apply_changes(base, fast) == after
    if fast:
        window_known = (fast[0].start, len(base) - fast[-1].end)
        assert EditWindow.between(base, after, False, window_known) == EditWindow.between(
            base, after
        )


@settings(max_examples=500)
@given(TEXT, TEXT, st.integers(0, 60), st.integers(0, 60))
def test_a_known_prefix_and_suffix_never_change_the_span(
    old: str, new: str, prefix_cut: int, suffix_cut: int
) -> None:
    """Any lengths the texts do share, given as known, give the span found from nothing."""
    full_prefix = textspan.common_prefix(old, new)
    prefix = min(prefix_cut, full_prefix)
    full_suffix = textspan.common_suffix(old, new, min(len(old), len(new)))
    suffix = min(suffix_cut, full_suffix)
    assert _fresh_span(old, new, (prefix, suffix)) == _fresh_span(old, new)
    assert EditWindow.between(old, new, False, (prefix, suffix)) == EditWindow.between(old, new)


def test_the_remembered_hash_is_the_hash_of_the_text() -> None:
    size = records.HASHED_KEPT + 10
    texts = ["é" * size, "🌍" * size, "a\ud800" * size]  # a lone surrogate kept as such
    for text in [*texts, *texts]:  # the second round answers from the memo
        expected = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        assert text_hash(text) == expected
    # An equal text that is another object is hashed again, and hashes the same.
    copy = "".join(["é" * (size - 1), "é"])
    assert copy is not texts[0]
    assert text_hash(copy) == text_hash(texts[0])
    # A different text of the same length never gets a remembered answer.
    other = "e" * size
    assert text_hash(other) != text_hash(texts[0])


def test_a_long_crlf_edit_is_the_same_from_its_known_ends() -> None:
    lines = [f"{i:07d} café 🌍 line\r\n" if i % 3 else f"{i:07d} plain\r\n" for i in range(20_000)]
    before = "".join(lines)
    args = EditFileArgs(path="f", old_text=_model(lines[12_345]), new_text="changed\n")
    replaced, count = replacement(before, args, "f")
    assert isinstance(replaced, TextChange)
    after = apply_changes(before, (replaced,))
    known = (replaced.start, len(before) - replaced.end)
    assert count == 1 and after == before.replace(lines[12_345], "changed\r\n")
    textspan._last = None
    changes = minimal_changes(before, after, known)
    textspan._last = None
    assert changes == minimal_changes(before, after)
    [change] = changes
    assert before[change.start : change.end] == lines[12_345]
    window = EditWindow.between(before, after, False, (change.start, len(before) - change.end))
    assert window == EditWindow.between(before, after)


@settings(max_examples=400)
@given(TEXT, TEXT, st.integers(1, 4), st.data())
def test_a_document_holds_exactly_the_texts_its_lines_join_to(
    source: str, other: str, piece: int, data: st.DataObject
) -> None:
    """``LineDocument.holds`` (a few lines at a time) against joining all its lines."""
    previous = documents._COMPARED_LINES
    documents._COMPARED_LINES = piece  # small pieces: every boundary case
    try:
        document = documents.LineDocument("file:///f.txt", source)
        if data.draw(st.booleans()):  # a change: the lines hold the text, not a joined copy
            end = types.Position(line=data.draw(st.integers(0, 3)), character=1)
            change = types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line=0, character=0), end=end),
                text=data.draw(TEXT),
            )
            document.apply_change(change)
        joined = "".join(document.lines)
        cut = data.draw(st.integers(0, len(joined)))
        for candidate in (joined, other, joined[:cut], joined + other, joined[:cut] + other):
            assert document.holds(candidate) == (candidate == joined)
        assert document.source == joined
    finally:
        documents._COMPARED_LINES = previous


@settings(max_examples=200)
@given(st.lists(st.sampled_from(["a", "é", "€", "🌍", "\ud800", "\udfff", "\n"]), max_size=80))
def test_a_text_hashed_in_pieces_hashes_as_a_whole(pieces: list[str]) -> None:
    text = "".join(pieces)
    previous = records.HASHED_KEPT, records.HASHED_PIECE
    records.HASHED_KEPT, records.HASHED_PIECE = 0, 7  # every text long, pieces of 7
    try:
        expected = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        assert text_hash(text) == expected
    finally:
        records.HASHED_KEPT, records.HASHED_PIECE = previous
