"""``tether serve | acp | demo | run | replay | config | sessions | undo | rules``."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__

if TYPE_CHECKING:
    from tether_protocol import TetherSettings

    from .client.terminal_run import TerminalRun
    from .daemon.front import Cold


def build_tools() -> Any:
    """Every tool the server offers."""
    from .tools.diagnostics import Diagnostics
    from .tools.edits import EditFile, WriteFile
    from .tools.files import READ_TOOLS
    from .tools.plan import Plan
    from .tools.shell import Bash
    from .tools.static import StaticToolRegistry

    return StaticToolRegistry([*READ_TOOLS, Diagnostics(), Plan(), EditFile(), WriteFile(), Bash()])


def preload_daemon() -> None:
    """What the daemon loads before it listens, so that every run it forks finds it loaded:
    the terminal client and chat, the server, and the tools with their schemas."""
    from .client import chat, chat_input, rich_render, rules_cli, settings, terminal_run
    from .daemon import command
    from .lsp import handlers, lean, transport
    from .lsp import server as lsp_server

    del chat, chat_input, rich_render, rules_cli, settings, terminal_run, command
    del handlers, lean, transport, lsp_server
    build_tools()  # the tools' schemas, made once here for every fork (tools.base)


def serve(log_level: str = "warning") -> int:
    """Serve one client over stdio until it goes away."""
    # Start-up only allocates what lives as long as the server: cyclic collections during
    # the imports (a thousand lsprotocol classes) find nothing and cost ~10% of them.
    gc.disable()
    # The lean start (``lsp.lean``): ``initialize`` is answered before anything heavy is
    # imported; the rest of the messages wait in the pipe meanwhile.
    from .lsp.lean import start as lean_start

    try:
        handover = lean_start(sys.stdin.buffer, sys.stdout.buffer, os.environ)
    except KeyboardInterrupt:  # stopped before the first message: nothing to clean up
        return 0
    import asyncio
    import logging

    logging.basicConfig(level=log_level.upper(), stream=sys.stderr)
    from .config.layers import ConfigError
    from .lsp.handlers import create_server
    from .lsp.server import ClientErrorFilter, TetherProtocol
    from .lsp.transport import serve as serve_stdio
    from .providers import warm_up_thread

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
    warm_up_thread(server.config.provider)
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
    # Only the wire is imported before the first answer: ``initialize`` is answered while
    # the core loads in a worker thread (``acp/front.py``).
    import asyncio

    from .acp.front import Front

    def core() -> Any:
        from .acp.server import AcpServer

        return AcpServer(build_tools())

    status = 0
    with contextlib.suppress(KeyboardInterrupt):
        status = asyncio.run(Front(core).serve(sys.stdin.buffer, sys.stdout.buffer))
    return status


def demo(keep: str | None, interactive: bool) -> int:
    """Run the bundled demo; exit 0 when the run ends ``done`` with the fix on disk."""
    import anyio

    from .demo import run_demo

    target = Path(keep).resolve() if keep else None
    return anyio.run(run_demo, target, interactive)


RUN_FLAGS = {
    "provider": "provider",
    "model": "model",
    "base_url": "baseUrl",
    "max_steps": "maxSteps",
    "timeout": "timeoutSeconds",
}
"""``tether run`` flags and the ``initializationOptions`` key each one sets."""


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given as flags, as ``initializationOptions`` (they beat the environment)."""
    return {key: getattr(args, flag) for flag, key in RUN_FLAGS.items() if getattr(args, flag)}


def show_config(args: argparse.Namespace) -> int:
    """``tether config``: the effective settings here and where each came from."""
    from .client.settings import describe, terminal_settings
    from .config.layers import ConfigError
    from .sandbox import describe_sandbox

    cwd = Path(args.cwd).resolve()
    try:
        settings = terminal_settings(cwd, run_options(args), os.environ)
        print(describe(settings))
    except ConfigError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    print(describe_sandbox(settings.settings.sandbox or "off"))
    return 0


def add_setting_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that override the configuration."""
    parser.add_argument("--cwd", default=".", help="the workspace folder (default: here)")
    parser.add_argument("--provider", help="the model provider (TETHER_PROVIDER)")
    parser.add_argument("--model", help="the model (TETHER_MODEL)")
    parser.add_argument("--base-url", help="the provider's endpoint (TETHER_BASE_URL)")
    parser.add_argument("--max-steps", type=positive_int, help="most model calls in the run")
    parser.add_argument("--timeout", type=positive_float, help="seconds before the run stops")


def check_settings(settings: TetherSettings) -> str | None:
    """What is wrong with the settings before a server is started (None: nothing)."""
    from .providers import AVAILABLE_PROVIDERS

    provider = settings.provider
    if provider is None:
        return (
            "no model provider is configured: pass --provider or set TETHER_PROVIDER "
            f"(one of: {', '.join(AVAILABLE_PROVIDERS)})"
        )
    if provider not in AVAILABLE_PROVIDERS:
        return f"unknown provider {provider!r}; known: {', '.join(AVAILABLE_PROVIDERS)}"
    tools = list(build_tools().names)
    unknown = [t for t in settings.auto_approve or [] if t not in tools]
    if unknown:
        return f"autoApprove: no tool named {', '.join(unknown)}; the tools: {', '.join(tools)}"
    return None


def read_prompt(prompt: str) -> str:
    """The prompt; ``-`` reads it from standard input."""
    return sys.stdin.read() if prompt == "-" else prompt


def run(args: argparse.Namespace) -> int:
    """``tether run``: one prompt in a folder, shown in the terminal."""
    import anyio

    from .client.exits import EXIT_USAGE

    cwd = Path(args.cwd).resolve()
    if not cwd.is_dir():
        print(f"tether: --cwd {args.cwd}: not a folder", file=sys.stderr)
        return EXIT_USAGE
    prompt = read_prompt(args.prompt).strip()
    if not prompt:
        print("tether: the prompt is empty", file=sys.stderr)
        return EXIT_USAGE
    from .client.spawn import prefork

    prefork(cwd)  # in a daemon's run process: the server is a fork (``daemon.forked``)
    return anyio.run(run_started, args, cwd, prompt)


async def run_started(args: argparse.Namespace, cwd: Path, prompt: str) -> int:
    """Start the server first, then import the client and check the settings meanwhile:
    the two interpreters start up side by side (first-answer latency, issue 16)."""
    from .client.spawn import discard, spawn_server

    server = await spawn_server(cwd, hold_stderr=True)
    try:  # quick and before anything else runs on this loop: no need for a worker thread
        job = prepared_run(args, cwd, prompt)
    except BaseException:
        await discard(server)
        raise
    if isinstance(job, int):
        await discard(server)
        return job
    from .client.terminal_run import run_in_terminal

    return await run_in_terminal(job, server)


def prepared_run(args: argparse.Namespace, cwd: Path, prompt: str) -> TerminalRun | int:
    """The ``TerminalRun`` for ``args``, or the exit status of a usage error (said on stderr)."""
    from .client.settings import terminal_settings
    from .client.terminal_run import EXIT_USAGE, TerminalRun
    from .config.layers import ConfigError

    flags = run_options(args)
    try:
        settings = terminal_settings(cwd, flags, os.environ)
    except ConfigError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if (problem := check_settings(settings.settings)) is not None:
        for warning in settings.warnings():  # the server, not started, would say them
            print(f"tether: warning: {warning}", file=sys.stderr)
        print(f"tether: {problem}", file=sys.stderr)
        return EXIT_USAGE
    state_dir = settings.config.state_dir
    params: dict[str, Any] = {}
    if args.session:
        params["sessionId"] = args.session
    elif args.continue_:
        latest = latest_session(cwd, state_dir)
        if latest is None:
            print(f"tether: no earlier session in {cwd} to continue", file=sys.stderr)
            return EXIT_USAGE
        params["sessionId"] = latest.session_id
    return TerminalRun(
        root=cwd,
        prompt=prompt,
        options=flags,  # the server assembles the files and the environment under them
        state_dir=state_dir,
        yes=args.yes,
        as_json=args.json,
        run_params=params,
    )


def chat(args: argparse.Namespace) -> int:
    """``tether chat`` (``tether`` alone on a terminal): a conversation in the folder."""
    import anyio

    from .client.exits import EXIT_USAGE

    if not sys.stdin.isatty() or not sys.stdout.isatty():
        print("tether: the chat needs a terminal; scripts use `tether run`", file=sys.stderr)
        return EXIT_USAGE
    cwd = Path(args.cwd).resolve()
    if not cwd.is_dir():
        print(f"tether: --cwd {args.cwd}: not a folder", file=sys.stderr)
        return EXIT_USAGE
    args.json = False
    job = prepared_run(args, cwd, "")
    if isinstance(job, int):
        return job
    from .client.chat import chat_in_terminal

    return anyio.run(chat_in_terminal, job)


def latest_session(cwd: Path, state_dir: Path) -> Any:
    """The most recently updated session that ran in ``cwd`` (None: none known)."""
    from .client.history import sessions

    found = sessions(state_dir, cwd, limit=1)
    return found[0] if found else None


def state_dir_of(cwd: Path, flags: dict[str, Any]) -> Path | int:
    """Where a server started in ``cwd`` with ``flags`` keeps its sessions, or exit status 2
    after saying why the settings cannot be used."""
    from .client.settings import terminal_settings
    from .config.layers import ConfigError

    try:
        return terminal_settings(cwd, flags, os.environ).config.state_dir
    except ConfigError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2


def list_sessions(args: argparse.Namespace) -> int:
    """``tether sessions``: the stored sessions, newest first."""
    from .client.history import sessions, table

    cwd = Path(args.cwd).resolve()
    state_dir = state_dir_of(cwd, {"stateDir": args.state_dir} if args.state_dir else {})
    if isinstance(state_dir, int):
        return state_dir
    folder = cwd if args.here else None
    rows = sessions(state_dir, folder, limit=args.limit)
    if not rows:
        print("no sessions yet" + (f" in {folder}" if folder else ""), file=sys.stderr)
        return 0
    print(table(rows))
    return 0


def undo(args: argparse.Namespace) -> int:
    """``tether undo [RUN]``: revert a run's edits (by default the last run in this folder)."""
    import anyio

    from .client.history import folders, last_edit_run
    from .client.undo import undo_in_terminal
    from .session.store import find_run

    cwd = Path(args.cwd).resolve()
    options = {"stateDir": args.state_dir} if args.state_dir else {}
    state_dir = state_dir_of(cwd, options)
    if isinstance(state_dir, int):
        return state_dir
    run_id = args.run
    if run_id is None:
        latest = latest_session(cwd, state_dir)
        run_id = last_edit_run(state_dir, latest.session_id) if latest else None
        if run_id is None:
            print(f"tether: no run with edits to undo in {cwd}", file=sys.stderr)
            return 2
    session_id = find_run(state_dir, run_id)
    # The run's own folder, so its files are inside the server's workspace.
    root = Path(folders(state_dir).get(session_id or "", str(cwd)))
    print(f"undoing run {run_id} in {root}")
    return anyio.run(undo_in_terminal, root, run_id, options)


def replay(session: str, state_dir: str | None, rerun_in: str | None, yes: bool) -> int:
    """Show a stored session, or re-run it and report differences (exit 1 if any)."""
    import anyio

    from .client.replay import rerun, show, uses_absolute_paths
    from .client.terminal_run import make_renderer
    from .session.index import session_log_path
    from .session.records import read_session

    path = Path(session)
    if not path.is_file():
        base = state_dir_of(Path.cwd(), {"stateDir": state_dir} if state_dir else {})
        if isinstance(base, int):
            return base
        path = session_log_path(base, session)
    if not path.is_file():
        print(f"tether: no session log {path}", file=sys.stderr)
        return 2
    data = read_session(path, path.stem)
    renderer = make_renderer(sys.stdout)  # Rich on a colour terminal, as a run
    if rerun_in is None:
        show(data, renderer)
        return 0
    from .client.history import folders

    origin = folders(path.parent.parent).get(data.session_id)  # <state>/sessions/<id>.jsonl
    if origin is None and uses_absolute_paths(data):
        print(
            "tether: the folder this session ran in is not known, so absolute paths in the "
            "model's calls are replayed unchanged (they point at the original folder)",
            file=sys.stderr,
        )
    target = Path(rerun_in).resolve()
    found = anyio.run(rerun, data, target, yes, renderer, Path(origin) if origin else None)
    print(f"{found} difference(s)" if found else "no differences")
    return 1 if found else 0


RUN_EPILOG = """\
settings (flags > environment > .tether/config.toml > ~/.config/tether/config.toml, a
project's file bound by trustedProjects; `tether config` shows the result and where each
value came from):
  TETHER_PROVIDER        openai, anthropic or scripted        (--provider)
  TETHER_MODEL           the model name                       (--model)
  TETHER_BASE_URL        an OpenAI/Anthropic-compatible URL   (--base-url)
  OPENAI_API_KEY, ANTHROPIC_API_KEY   the provider's key (none needed with --base-url)
  TETHER_SCRIPT          the scripted provider's script (a path or inline JSON)
  TETHER_STATE_DIR       where session logs go (default ~/.local/state/tether)

exit status: 0 done, 1 another outcome, 2 a usage or settings error,
  130 cancelled with Ctrl-C, 141 the output was closed (e.g. | head)
"""


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {text}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number above 0."""
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {text}")
    return value


_IN_DAEMON = False
"""True in a daemon's run process: ``tether run`` or the chat runs here, not through a
daemon."""


def daemon_main(argv: list[str]) -> int:
    """A daemon's run process: ``tether`` ``argv``, a ``run`` or a chat."""
    global _IN_DAEMON
    _IN_DAEMON = True
    return main(argv)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tether`` command."""
    parser = argparse.ArgumentParser(
        prog="tether", description="An editor-integrated coding agent."
    )
    parser.add_argument("--version", action="version", version=f"tether {__version__}")
    parser.add_argument(
        "--log-level", help="log level, to stderr (WARNING; a terminal command's server: ERROR)"
    )
    parser.add_argument(
        "--continue",
        dest="chat_continue",
        action="store_true",
        help="chat: continue the latest session in this folder",
    )
    parser.add_argument("--session", dest="chat_session", metavar="ID", help="chat: session ID")
    commands = parser.add_subparsers(dest="command")
    chat_parser = commands.add_parser(
        "chat", help="a conversation in this folder (also `tether` alone, on a terminal)"
    )
    chat_parser.add_argument(
        "--continue", dest="continue_", action="store_true", help="continue the latest session"
    )
    chat_parser.add_argument("--session", metavar="ID", help="continue session ID")
    chat_parser.add_argument("--yes", action="store_true", help="approve every edit and command")
    chat_parser.add_argument(
        "--no-daemon",
        action="store_true",
        help="chat in this process, not through the shared warm server (tether daemon --help)",
    )
    add_setting_flags(chat_parser)
    commands.add_parser("serve", help="serve an editor over stdio (JSON-RPC with LSP framing)")
    commands.add_parser(
        "acp", help="serve an ACP client over stdio (Agent Client Protocol v1: Zed, JetBrains, …)"
    )
    demo_parser = commands.add_parser(
        "demo", help="a scripted run on a bundled sample project (offline, no key)"
    )
    demo_parser.add_argument(
        "--keep", metavar="DIR", help="copy the sample project here and keep it"
    )
    demo_parser.add_argument(
        "--interactive", action="store_true", help="decide each edit and command yourself"
    )
    run_parser = commands.add_parser(
        "run",
        help="run one prompt in a folder, in the terminal",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=RUN_EPILOG,
    )
    run_parser.add_argument("prompt", help="what to do; - reads it from standard input")
    run_parser.add_argument("--yes", action="store_true", help="approve every edit and command")
    run_parser.add_argument(
        "--json", action="store_true", help="events and the result as JSON lines (for scripts)"
    )
    run_parser.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the latest session in this folder",
    )
    run_parser.add_argument("--session", metavar="ID", help="continue session ID")
    run_parser.add_argument(
        "--no-daemon",
        action="store_true",
        help="run in this process, not through the shared warm server (see tether daemon --help)",
    )
    add_setting_flags(run_parser)
    from .daemon.command import add_daemon_command

    add_daemon_command(commands)
    replay_parser = commands.add_parser(
        "replay", help="show a stored session, or re-run it through the current harness"
    )
    replay_parser.add_argument("session", help="a session id, or the path of a session log")
    replay_parser.add_argument("--state-dir", help="where session logs are kept")
    replay_parser.add_argument(
        "--rerun", metavar="DIR", help="play the model's logged replies again on folder DIR"
    )
    replay_parser.add_argument("--yes", action="store_true", help="approve every edit and command")
    parser.add_argument(
        "--debug", action="store_true", help="show Python tracebacks of unexpected errors"
    )
    config_parser = commands.add_parser(
        "config", help="show the effective settings and where each one comes from"
    )
    add_setting_flags(config_parser)
    sessions_parser = commands.add_parser("sessions", help="list the stored sessions")
    sessions_parser.add_argument("--here", action="store_true", help="only this folder's")
    sessions_parser.add_argument("--cwd", default=".", help="the folder --here means")
    sessions_parser.add_argument("--limit", type=positive_int, default=20)
    sessions_parser.add_argument("--state-dir", help="where session logs are kept")
    undo_parser = commands.add_parser(
        "undo", help="put back the files a run edited (default: the last run in this folder)"
    )
    undo_parser.add_argument("run", nargs="?", help="the run id (shown by tether run --json)")
    undo_parser.add_argument("--cwd", default=".", help="the workspace folder (default: here)")
    undo_parser.add_argument("--state-dir", help="where session logs are kept")
    from .client.rules_cli import add_rules_command

    add_rules_command(commands)
    args = parser.parse_args(argv)
    # A chat is `chat`, or `tether` alone on a terminal (its own check follows below).
    chat_here = args.command == "chat" or (args.command is None and sys.stdin.isatty())
    if _IN_DAEMON and args.command != "run" and not chat_here:
        print("tether: the daemon runs only `tether run` and `tether chat`", file=sys.stderr)
        return 2
    cold: Cold | None = None
    if (
        (args.command == "run" or chat_here)
        and not getattr(args, "no_daemon", False)
        and not _IN_DAEMON
    ):
        from .daemon.wire import wanted

        if wanted(os.environ):
            from .daemon.front import forward

            handed = forward(sys.argv[1:] if argv is None else argv, os.environ)
            if isinstance(handed, int):
                return handed
            cold = handed  # None: the daemon cannot be used (forward said why)
    if cold is not None and chat_here:
        cold.start()  # while the user types; the chat itself runs here
        cold = None
    if args.command == "serve":  # its logging is set up after the lean start (lsp.lean)
        return serve(args.log_level or "WARNING")
    import logging

    logging.basicConfig(level=(args.log_level or "WARNING").upper(), stream=sys.stderr)
    if args.command == "acp":
        return acp()
    if args.log_level:  # the servers this command starts log at it too
        from .client.spawn import SERVER_LOG_LEVEL

        SERVER_LOG_LEVEL["level"] = args.log_level
    if args.command is None:  # `tether` alone: a chat on a terminal, else usage
        if not sys.stdin.isatty():
            parser.print_usage(sys.stderr)
            print(
                "tether: no command: on a terminal `tether` alone opens a chat; "
                "scripts use `tether run PROMPT`",
                file=sys.stderr,
            )
            return 2
        args = parser.parse_args([*(argv if argv is not None else sys.argv[1:]), "chat"])
        args.continue_ = args.continue_ or args.chat_continue
        args.session = args.session or args.chat_session
    try:
        status = command(args)
        if cold is not None:  # this run went in-process: the next finds a daemon
            cold.start()
        return status
    except BrokenPipeError:  # `tether replay … | head`: the reader has what it wanted
        from .client.terminal import silence
        from .client.terminal_run import EXIT_PIPE_CLOSED

        silence(sys.stdout)
        return EXIT_PIPE_CLOSED
    except Exception as exc:
        if args.debug:
            raise
        print(f"tether: unexpected error: {exc!r} (--debug shows where)", file=sys.stderr)
        return 1


def command(args: argparse.Namespace) -> int:
    """Run a terminal command (everything but ``serve``)."""
    if args.command == "demo":
        return demo(args.keep, args.interactive)
    if args.command == "replay":
        return replay(args.session, args.state_dir, args.rerun, args.yes)
    if args.command == "run":
        return run(args)
    if args.command == "chat":
        return chat(args)
    if args.command == "config":
        return show_config(args)
    if args.command == "sessions":
        return list_sessions(args)
    if args.command == "undo":
        return undo(args)
    if args.command == "daemon":
        from .daemon.command import daemon_command

        return daemon_command(args, daemon_main, serve, preload_daemon)
    if args.command == "rules":
        from .client.rules_cli import rules_command

        return rules_command(args)
    raise AssertionError(f"unknown command {args.command}")
