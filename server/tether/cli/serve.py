"""``tether serve`` (an editor over stdio, JSON-RPC with LSP framing) and ``tether acp`` (an
Agent Client Protocol client over stdio)."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .flags import Commands


def add_serve(commands: Commands) -> None:
    commands.add_parser("serve", help="serve an editor over stdio (JSON-RPC with LSP framing)")


def add_acp(commands: Commands) -> None:
    commands.add_parser(
        "acp", help="serve an ACP client over stdio (Agent Client Protocol v1: Zed, JetBrains, …)"
    )


def _import_server() -> None:
    """Import what ``serve`` uses after the lean start; a failure is left to ``serve``'s
    own import, which raises it where it is reported."""
    with contextlib.suppress(Exception):
        from ..config import layers  # noqa: F401
        from ..lsp import handlers, server, transport  # noqa: F401
        from ..providers import primed_name  # noqa: F401
        from ..tools import build_tools  # noqa: F401


def serve(log_level: str = "warning") -> int:
    """Serve one client over stdio until it goes away."""
    # Start-up only allocates what lives as long as the server: cyclic collections during
    # the imports (a thousand lsprotocol classes) find nothing and cost ~10% of them.
    gc.disable()
    # The lean start (``lsp.lean``): ``initialize`` is answered without the heavy imports;
    # the rest of the messages wait in the pipe meanwhile. The imports begin at once on a
    # thread of their own, not after that answer: ``tether run`` starts its server before
    # its own imports, so its ``initialize`` comes ~0.2 s after the spawn, time the server
    # used to spend waiting (the lean read blocks without holding the interpreter).
    from ..lsp.lean import start as lean_start

    imports = threading.Thread(target=_import_server, name="tether-imports", daemon=True)
    imports.start()
    try:
        handover = lean_start(sys.stdin.buffer, sys.stdout.buffer, os.environ)
    except KeyboardInterrupt:  # stopped before the first message: nothing to clean up
        return 0
    imports.join()  # the imports below then find every module done (none imported twice)
    import asyncio
    import logging

    logging.basicConfig(level=log_level.upper(), stream=sys.stderr)
    from ..config.layers import ConfigError
    from ..lsp.handlers import create_server
    from ..lsp.server import ClientErrorFilter, TetherProtocol
    from ..lsp.transport import serve as serve_stdio
    from ..providers import primed_name, warm_up_thread
    from ..tools import build_tools

    try:
        server = create_server(build_tools())
    except ConfigError as exc:  # a TETHER_* variable that cannot be used: say which, once
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    logging.getLogger("pygls.protocol.json_rpc").addFilter(ClientErrorFilter())
    if isinstance(server.protocol, TetherProtocol):
        server.protocol.lean_answered = handover.answered_id
    handover.limit = lambda: server.config.max_message_bytes
    # Everything imported so far lives as long as the server: keep it out of the cyclic
    # collector's way, whose full passes over it stalled a streamed reply for ~30 ms.
    gc.freeze()
    # The configured provider's SDK primed (one canned request) on a thread of its own while
    # the first messages are handled (it turns the collector back on when it is done): an
    # editor's first prompt, seconds later, finds it done. A provider the editor's settings
    # name is primed at ``initialized``.
    warm_up_thread(primed_name(server.config))
    status = 0
    with contextlib.suppress(KeyboardInterrupt):
        status = asyncio.run(
            serve_stdio(
                server.protocol,
                sys.stdin.buffer,
                sys.stdout.buffer,
                server.close,
                handover.limit,
                handover.reader,
                handover.first,
            )
        )
    return status


def acp() -> int:
    """Serve one ACP client (Zed, JetBrains, codecompanion, avante, …) over stdio until
    its input ends; stdout carries the protocol only, logs go to stderr."""
    import asyncio

    gc.disable()  # what is imported lives as long as the server (see ``serve``)
    from ..acp.server import AcpServer
    from ..providers import warm_up_thread
    from ..tools import build_tools

    server = AcpServer(build_tools())
    gc.freeze()
    warm_up_thread(server.provider)  # the SDK primed while the client opens a session
    status = 0
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.serve(sys.stdin.buffer, sys.stdout.buffer))
    return status
