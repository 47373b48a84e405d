"""The reference point for cold start: a minimal pygls server, started like ``tether serve``.

It answers ``initialize`` with pygls' defaults and one custom request; nothing else.
"""

from __future__ import annotations

from typing import Any

from pygls.lsp.server import LanguageServer

server = LanguageServer("minimal", "0.1")


@server.feature("bench/ping")
def ping(ls: LanguageServer, params: Any) -> dict[str, bool]:
    return {"pong": True}


if __name__ == "__main__":
    server.start_io()
