"""``tether run`` (one prompt in a folder, shown in the terminal) and ``tether chat``
(``tether`` alone on a terminal: a conversation in the folder)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .flags import add_setting_flags, run_options
from .sessions import latest_session

if TYPE_CHECKING:
    from tether_protocol import TetherSettings

    from ..client.terminal_run import TerminalRun
    from .flags import Commands

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


def add_chat(commands: Commands) -> None:
    parser = commands.add_parser(
        "chat", help="a conversation in this folder (also `tether` alone, on a terminal)"
    )
    parser.add_argument(
        "--continue", dest="continue_", action="store_true", help="continue the latest session"
    )
    parser.add_argument("--session", metavar="ID", help="continue session ID")
    parser.add_argument("--yes", action="store_true", help="approve every edit and command")
    parser.add_argument(
        "--no-daemon",
        action="store_true",
        help="chat in this process, not through the shared warm server (tether daemon --help)",
    )
    add_setting_flags(parser)


def add_run(commands: Commands) -> None:
    parser = commands.add_parser(
        "run",
        help="run one prompt in a folder, in the terminal",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=RUN_EPILOG,
    )
    parser.add_argument("prompt", help="what to do; - reads it from standard input")
    parser.add_argument("--yes", action="store_true", help="approve every edit and command")
    parser.add_argument(
        "--json", action="store_true", help="events and the result as JSON lines (for scripts)"
    )
    parser.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the latest session in this folder",
    )
    parser.add_argument("--session", metavar="ID", help="continue session ID")
    parser.add_argument(
        "--no-daemon",
        action="store_true",
        help="run in this process, not through the shared warm server (see tether daemon --help)",
    )
    add_setting_flags(parser)


def run(args: argparse.Namespace) -> int:
    """``tether run``: one prompt in a folder, shown in the terminal."""
    import anyio

    from ..client.exits import EXIT_USAGE

    cwd = Path(args.cwd).resolve()
    if not cwd.is_dir():
        print(f"tether: --cwd {args.cwd}: not a folder", file=sys.stderr)
        return EXIT_USAGE
    prompt = read_prompt(args.prompt).strip()
    if not prompt:
        print("tether: the prompt is empty", file=sys.stderr)
        return EXIT_USAGE
    from ..client.spawn import prefork

    prefork(cwd)  # in a daemon's run process: the server is a fork (``daemon.forked``)
    return anyio.run(run_started, args, cwd, prompt)


def read_prompt(prompt: str) -> str:
    """The prompt; ``-`` reads it from standard input."""
    return sys.stdin.read() if prompt == "-" else prompt


async def run_started(args: argparse.Namespace, cwd: Path, prompt: str) -> int:
    """Start the server first, then import the client and check the settings meanwhile:
    the two interpreters start up side by side (first-answer latency, issue 16)."""
    from ..client.spawn import discard, spawn_server

    server = await spawn_server(cwd, hold_stderr=True)
    try:  # quick and before anything else runs on this loop: no need for a worker thread
        job = prepared_run(args, cwd, prompt)
    except BaseException:
        await discard(server)
        raise
    if isinstance(job, int):
        await discard(server)
        return job
    from ..client.terminal_run import run_in_terminal

    return await run_in_terminal(job, server)


def chat(args: argparse.Namespace) -> int:
    """``tether chat`` (``tether`` alone on a terminal): a conversation in the folder."""
    import anyio

    from ..client.exits import EXIT_USAGE

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
    from ..client.chat import chat_in_terminal

    return anyio.run(chat_in_terminal, job)


def prepared_run(args: argparse.Namespace, cwd: Path, prompt: str) -> TerminalRun | int:
    """The ``TerminalRun`` for ``args``, or the exit status of a usage error (said on stderr)."""
    from ..client.settings import refused_workspace, terminal_settings
    from ..client.terminal_run import EXIT_USAGE, TerminalRun
    from ..config.layers import ConfigError

    flags = run_options(args)
    try:
        settings = terminal_settings(cwd, flags, os.environ)
    except ConfigError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if (refused := refused_workspace(cwd, settings, os.environ)) is not None:
        print(f"tether: {refused}", file=sys.stderr)
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


def check_settings(settings: TetherSettings) -> str | None:
    """What is wrong with the settings before a server is started (None: nothing)."""
    from ..providers import AVAILABLE_PROVIDERS
    from ..tools import build_tools

    provider = settings.provider
    if provider is None:
        return (
            "no model provider is configured: pass --provider or set TETHER_PROVIDER "
            f"(one of: {', '.join(AVAILABLE_PROVIDERS)})"
        )
    if provider not in AVAILABLE_PROVIDERS:
        return f"unknown provider {provider!r}; known: {', '.join(AVAILABLE_PROVIDERS)}"
    from ..tools.lsp_tools import CODE_TOOL_NAMES  # offered where a language server answers

    tools = [*build_tools().names, *CODE_TOOL_NAMES]
    unknown = [t for t in settings.auto_approve or [] if t not in tools]
    if unknown:
        return f"autoApprove: no tool named {', '.join(unknown)}; the tools: {', '.join(tools)}"
    return None
