"""The line-list document store: incremental changes in every position encoding."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec, Workspace

from tether.lsp.documents import (
    LineDocument,
    LineWorkspace,
    column_index,
    encoding_name,
    split_lines,
)
from tether.lsp.host import LspBuffers

ENCODINGS = ("utf-8", "utf-16", "utf-32")
PIECES = ["a", "bc", "é", "🌍", "中", "\n", "\r\n", "\r", "\f", "\u2028", " ", ""]


def units(char: str, encoding: str) -> int:
    """How many code units ``char`` takes in ``encoding``."""
    if encoding == "utf-8":
        return len(char.encode("utf-8"))
    if encoding == "utf-16":
        return 2 if ord(char) > 0xFFFF else 1
    return 1


def reference_lines(text: str) -> list[str]:
    """LSP lines, cut by hand: after "\\n", "\\r\\n" and a lone "\\r"."""
    lines, current, i = [], "", 0
    while i < len(text):
        current += text[i]
        if text[i] == "\n" or (text[i] == "\r" and text[i + 1 : i + 2] != "\n"):
            lines.append(current)
            current = ""
        i += 1
    if current:
        lines.append(current)
    return lines


def reference_offset(text: str, line: int, character: int, encoding: str) -> int:
    """The naive reading of an LSP position: walk the text character by character."""
    lines = reference_lines(text)
    if line >= len(lines):  # past the last line: the end of the document
        return len(text)
    start = sum(len(x) for x in lines[:line])
    content = lines[line]
    for ending in ("\r\n", "\n", "\r"):
        if content.endswith(ending):
            content = content[: -len(ending)]
            break
    counted = 0
    for index, char in enumerate(content):
        if counted >= character:
            return start + index
        counted += units(char, encoding)
    return start + len(content)


def change(sl: int, sc: int, el: int, ec: int, text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec)
        ),
        text=text,
    )


def document(text: str, encoding: str = "utf-16") -> LineDocument:
    return LineDocument("file:///t.txt", text, 1, position_codec=PositionCodec(encoding))


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, int, int, str]]]:
    text = "".join(draw(st.lists(st.sampled_from(PIECES), max_size=20)))
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        position = st.tuples(st.integers(0, 8), st.integers(0, 10))
        (sl, sc), (el, ec) = sorted([draw(position), draw(position)])
        steps.append((sl, sc, el, ec, "".join(draw(st.lists(st.sampled_from(PIECES), max_size=4)))))
    return text, steps


@settings(max_examples=300, deadline=None)
@given(edits(), st.sampled_from(ENCODINGS))
def test_incremental_changes_match_a_naive_reference(
    case: tuple[str, list[tuple[int, int, int, int, str]]], encoding: str
) -> None:
    text, steps = case
    doc = document(text, encoding)
    expected = text
    for sl, sc, el, ec, new in steps:
        start = reference_offset(expected, sl, sc, encoding)
        end = reference_offset(expected, el, ec, encoding)
        start, end = min(start, end), max(start, end)
        expected = expected[:start] + new + expected[end:]
        doc.apply_change(change(sl, sc, el, ec, new))
        assert doc.source == expected
        assert list(doc.lines) == reference_lines(expected)


def test_multibyte_columns_in_each_encoding() -> None:
    line = "a🌍é中b"
    # after the globe: 5 bytes in UTF-8, 3 units in UTF-16, 2 code points in UTF-32
    assert column_index(line, 5, "utf-8") == 2
    assert column_index(line, 3, "utf-16") == 2
    assert column_index(line, 2, "utf-32") == 2
    assert column_index(line, 2, "utf-16") == 2  # inside the globe: rounded up past it
    assert column_index(line, 99, "utf-16") == len(line)


def test_the_unsaved_buffer_edit_from_the_e2e_test() -> None:
    # Neovim's profile negotiates UTF-8: character 21 falls inside the globe's four bytes
    # (19-22) and is read as the end of it, as pygls reads it.
    doc = document("def greet(name):\n    return name\n", "utf-8")
    doc.apply_change(change(1, 11, 1, 15, "'héllo 🌍 ' + name  # unsaved"))
    doc.apply_change(change(1, 21, 1, 21, "!"))
    assert doc.source == "def greet(name):\n    return 'héllo 🌍! ' + name  # unsaved\n"
    utf16 = document("    return 'héllo 🌍 '\n")
    utf16.apply_change(change(0, 20, 0, 20, "!"))  # after the globe's two UTF-16 units
    assert utf16.source == "    return 'héllo 🌍! '\n"


def test_line_endings_meeting_across_a_change_make_one_line() -> None:
    doc = document("a\rX\nb")
    doc.apply_change(change(1, 0, 1, 1, ""))  # "a\r" + "\n" is now one "\r\n"
    assert doc.source == "a\r\nb" and list(doc.lines) == ["a\r\n", "b"]
    doc.apply_change(change(1, 1, 1, 1, "\n"))  # past the end of the last line
    assert doc.source == "a\r\nb\n"
    doc.apply_change(change(2, 0, 2, 0, "tail"))  # the empty line after the final newline
    assert doc.source == "a\r\nb\ntail"


def test_whole_document_changes_and_unusual_breaks() -> None:
    doc = document("x\f\u2028y")
    assert list(doc.lines) == ["x\f\u2028y"]  # not line breaks for LSP
    doc.apply_change(types.TextDocumentContentChangeWholeDocument(text="new\ntext"))
    assert doc.source == "new\ntext" and doc.line_count == 2
    assert split_lines("a\r\nb\rc\n") == ["a\r\n", "b\r", "c\n"]


def test_a_workspace_like_pygls_keeps_documents_as_line_lists() -> None:
    plain = Workspace("file:///root", position_encoding=types.PositionEncodingKind.Utf8)
    workspace = LineWorkspace.like(plain)
    assert encoding_name(workspace.position_encoding) == "utf-8"
    item = types.TextDocumentItem(
        uri="file:///root/a%20b.py", language_id="py", version=1, text="é\n"
    )
    workspace.put_text_document(item)
    workspace.update_text_document(
        types.VersionedTextDocumentIdentifier(uri=item.uri, version=2), change(0, 2, 0, 2, "!")
    )
    doc = workspace.text_documents["file:///root/a b.py"]
    assert isinstance(doc, LineDocument) and doc.source == "é!\n" and doc.version == 2


def test_encoding_names() -> None:
    assert encoding_name(types.PositionEncodingKind.Utf32) == "utf-32"
    assert encoding_name("utf-8") == "utf-8"
    assert encoding_name(None) == "utf-16"


def test_buffers_find_documents_whose_uri_is_percent_encoded(tmp_path: Path) -> None:
    workspace = LineWorkspace(tmp_path.as_uri())
    path = (tmp_path / "my file é.py").resolve()
    uri = path.as_uri()  # file:///…/my%20file%20%C3%A9.py, as VS Code sends it
    workspace.put_text_document(
        types.TextDocumentItem(uri=uri, language_id="py", version=3, text="unsaved\n")
    )
    buffers = LspBuffers(SimpleNamespace(workspace=workspace))  # type: ignore[arg-type]
    buffers.opened(uri)
    buffer = buffers.get(path)
    assert buffer is not None and buffer.text == "unsaved\n" and buffer.version == 3
