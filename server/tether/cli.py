"""``tether serve | demo | run``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from . import __version__


def build_tools() -> Any:
    """Every tool the server offers."""
    from .tools.edits import EditFile, WriteFile
    from .tools.files import READ_TOOLS
    from .tools.shell import Bash
    from .tools.static import StaticToolRegistry

    return StaticToolRegistry([*READ_TOOLS, EditFile(), WriteFile(), Bash()])


def serve() -> int:
    """Serve one client over stdio until it goes away."""
    from .config import ConfigError
    from .lsp.handlers import create_server
    from .lsp.server import ClientErrorFilter
    from .lsp.transport import serve as serve_stdio

    try:
        server = create_server(build_tools())
    except ConfigError as exc:  # a TETHER_* variable that cannot be used: say which, once
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    logging.getLogger("pygls.protocol.json_rpc").addFilter(ClientErrorFilter())
    # Everything imported so far lives as long as the server: keep it out of the cyclic
    # collector's way, whose full passes over it stalled a streamed reply for ~30 ms.
    gc.freeze()
    status = 0
    with contextlib.suppress(KeyboardInterrupt):
        status = asyncio.run(
            serve_stdio(
                server.protocol,
                sys.stdin.buffer,
                sys.stdout.buffer,
                server.close,
                lambda: server.config.max_message_bytes,
            )
        )
    return status


def demo(keep: str | None, interactive: bool) -> int:
    """Run the bundled demo; exit 0 when the run ends ``done``."""
    import anyio

    from .client.render import TerminalRenderer
    from .demo import run_demo

    target = Path(keep).resolve() if keep else None
    result = anyio.run(run_demo, TerminalRenderer(), target, interactive)
    return 0 if result["outcome"] == "done" else 1


async def run_prompt(prompt: str, cwd: Path, yes: bool, as_json: bool) -> dict[str, Any]:
    """One prompt through a fresh server, with the configured provider."""
    from .client.approver import TerminalApprover
    from .client.render import TerminalRenderer
    from .client.session import connect

    if as_json:
        out = sys.stdout
        approver = TerminalApprover(yes=yes, out=sys.stderr)
        async with connect(cwd, {}, approver=approver) as client:
            client.on_event = lambda e: print(e.model_dump_json(by_alias=True), file=out)
            result = await client.run(prompt)
        print(json.dumps({"result": result}), file=out)
        return result
    renderer = TerminalRenderer()
    approver = TerminalApprover(yes=yes, out=renderer.out, color=renderer.color)
    async with connect(cwd, {}, approver=approver) as client:
        client.on_event = renderer
        result = await client.run(prompt)
    renderer.summary(result)
    return result


def replay(session: str, state_dir: str | None, rerun_in: str | None, yes: bool) -> int:
    """Show a stored session, or re-run it and report differences (exit 1 if any)."""
    import anyio

    from .client.render import TerminalRenderer
    from .config import default_state_dir
    from .replay import rerun, show
    from .session.index import session_log_path
    from .session.records import read_session

    path = Path(session)
    if not path.is_file():
        base = Path(state_dir or os.environ.get("TETHER_STATE_DIR") or default_state_dir())
        path = session_log_path(base, session)
    if not path.is_file():
        print(f"tether: no session log {path}", file=sys.stderr)
        return 2
    data = read_session(path, path.stem)
    renderer = TerminalRenderer()
    if rerun_in is None:
        show(data, renderer)
        return 0
    found = anyio.run(rerun, data, Path(rerun_in).resolve(), yes, renderer)
    print(f"{found} difference(s)" if found else "no differences")
    return 1 if found else 0


def _server_error(exc: BaseException) -> Any:
    """The server's error answer inside ``exc`` (possibly a task group's exception group)."""
    from .client import ServerError

    if isinstance(exc, ServerError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _server_error(inner)) is not None:
                return found
    return None


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
    demo_parser.add_argument(
        "--interactive", action="store_true", help="decide each edit and command yourself"
    )
    run_parser = commands.add_parser("run", help="run one prompt in a folder, in the terminal")
    run_parser.add_argument("prompt")
    run_parser.add_argument("--cwd", default=".", help="the workspace folder (default: here)")
    run_parser.add_argument("--yes", action="store_true", help="approve every edit and command")
    run_parser.add_argument(
        "--json", action="store_true", help="events and the result as JSON lines (for scripts)"
    )
    replay_parser = commands.add_parser(
        "replay", help="show a stored session, or re-run it through the current harness"
    )
    replay_parser.add_argument("session", help="a session id, or the path of a session log")
    replay_parser.add_argument("--state-dir", help="where session logs are kept")
    replay_parser.add_argument(
        "--rerun", metavar="DIR", help="play the model's logged replies again on folder DIR"
    )
    replay_parser.add_argument("--yes", action="store_true", help="approve every edit and command")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    if args.command == "serve":
        return serve()
    if args.command == "demo":
        return demo(args.keep, args.interactive)
    if args.command == "replay":
        return replay(args.session, args.state_dir, args.rerun, args.yes)
    if args.command == "run":
        import anyio

        cwd = Path(args.cwd).resolve()
        if not cwd.is_dir():
            parser.error(f"--cwd {args.cwd}: not a folder")
        from .client import ServerError

        try:
            result = anyio.run(run_prompt, args.prompt, cwd, args.yes, args.json)
        except (ServerError, BaseExceptionGroup) as exc:
            refused = _server_error(exc)
            if refused is None:
                raise
            print(f"tether: {refused.message}", file=sys.stderr)
            return 2
        return 0 if result["outcome"] == "done" else 1
    parser.error(f"unknown command {args.command}")
    return 2
