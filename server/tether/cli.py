"""``tether serve | demo | run``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from pathlib import Path

from . import __version__


def serve() -> int:
    """Serve one client over stdio until it goes away."""
    from .lsp.handlers import create_server
    from .lsp.transport import serve as serve_stdio
    from .tools.files import READ_TOOLS
    from .tools.registry import ToolRegistry

    server = create_server(ToolRegistry(READ_TOOLS))
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_stdio(server.protocol, sys.stdin.buffer, sys.stdout.buffer, server.close))
    return 0


def demo(keep: str | None) -> int:
    """Run the bundled demo; exit 0 when the run ends ``done``."""
    import anyio

    from .client.render import TerminalRenderer
    from .demo import run_demo

    result = anyio.run(run_demo, TerminalRenderer(), Path(keep).resolve() if keep else None)
    return 0 if result["outcome"] == "done" else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tether`` command."""
    parser = argparse.ArgumentParser(
        prog="tether", description="An editor-integrated coding agent."
    )
    parser.add_argument("--version", action="version", version=f"tether {__version__}")
    parser.add_argument("--log-level", default="WARNING", help="server log level (to stderr)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="serve an editor over stdio (JSON-RPC with LSP framing)")
    demo_parser = commands.add_parser(
        "demo", help="a scripted run on a bundled sample project (offline, no key)"
    )
    demo_parser.add_argument(
        "--keep", metavar="DIR", help="copy the sample project here and keep it"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    if args.command == "serve":
        return serve()
    if args.command == "demo":
        return demo(args.keep)
    parser.error(f"unknown command {args.command}")
    return 2
