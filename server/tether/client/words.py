"""The server's words said at a terminal (a module of its own: ``tether rules`` answers
in-process and imports none of the rest of the client)."""

from __future__ import annotations

WIRE_WORDS = (
    ("initializationOptions.", ""),
    ("set initializationOptions.provider (or TETHER_PROVIDER)", "pass --provider"),
    ("agent/run: ", ""),
    ("runId: ", ""),
    ("sessionId: ", "--session: "),
    (" in the environment of `tether serve`", ""),
    ("set baseUrl (TETHER_BASE_URL)", "pass --base-url (or set TETHER_BASE_URL)"),
)
"""The protocol's words in an error message, and a terminal user's."""


def terminal_words(message: str) -> str:
    """An error message of the server in the words of someone at a terminal."""
    for wire, plain in WIRE_WORDS:
        message = message.replace(wire, plain)
    return message
