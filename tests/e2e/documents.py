"""The document notifications an editor sends a language server: a buffer opened, changed
as a whole, or changed in one range (typing)."""

from __future__ import annotations

from lsprotocol import types
from pytest_lsp import LanguageClient


def send_did_open(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    """``textDocument/didOpen`` of a Python buffer holding ``text``."""
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=version, text=text
            )
        )
    )


def send_did_change(client: LanguageClient, uri: str, text: str, version: int) -> None:
    """``textDocument/didChange`` with the whole new text, as most editors send it."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def send_did_change_range(
    client: LanguageClient,
    uri: str,
    version: int,
    start: tuple[int, int],
    end: tuple[int, int],
    text: str,
) -> None:
    """``textDocument/didChange`` replacing the range from ``start`` to ``end`` (line,
    character, in the negotiated position encoding) with ``text``, as typing is sent."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=start[0], character=start[1]),
                        end=types.Position(line=end[0], character=end[1]),
                    ),
                    text=text,
                )
            ],
        )
    )
