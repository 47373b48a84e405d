"""The ``tether`` command: ``serve | acp | chat | run | demo | replay | config | sessions |
undo | rewind | rules | daemon``.

Each command's parser and handler live together in a module of this package (``serve.py``:
serve and acp; ``run.py``: run and chat; ``sessions.py``: sessions, undo, rewind and replay;
``config.py``, ``demo.py``, ``daemon.py``; ``rules`` in ``client/rules_cli.py``); this
module builds the command line from them and dispatches. Their top-level imports are the
standard library's alone: a command imports what it needs when it runs, so that ``tether
run`` starts fast and ``tether serve`` answers ``initialize`` before the heavy imports.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import __version__
from . import config, daemon, demo, run, serve, sessions

if TYPE_CHECKING:
    from ..daemon.front import Cold

HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "chat": run.chat,
    "run": run.run,
    "demo": demo.demo,
    "replay": sessions.replay,
    "sessions": sessions.list_sessions,
    "undo": sessions.undo,
    "rewind": sessions.rewind,
    "config": config.show_config,
}
COMMANDS = frozenset({"serve", "acp", "daemon", "rules"})
"""The commands ``main`` or ``command`` runs itself, besides ``HANDLERS``."""
"""The terminal commands' handlers; ``serve`` and ``acp`` are run by ``main`` itself (before
and after logging is set up), ``daemon`` and ``rules`` by ``command``."""


def parser() -> argparse.ArgumentParser:
    """The ``tether`` command line: its own flags, then every command's parser."""
    top = argparse.ArgumentParser(
        prog="tether",
        description="An editor-integrated coding agent. Without a command, a chat: `tether "
        "--provider openai` is `tether chat --provider openai`.",
    )
    top.add_argument("--version", action="version", version=f"tether {__version__}")
    top.add_argument(
        "--log-level", help="log level, to stderr (WARNING; a terminal command's server: ERROR)"
    )
    top.add_argument(
        "--debug", action="store_true", help="show Python tracebacks of unexpected errors"
    )
    commands = top.add_subparsers(dest="command")
    run.add_chat(commands)
    serve.add_serve(commands)
    serve.add_acp(commands)
    demo.add_demo(commands)
    run.add_run(commands)
    daemon.add_daemon(commands)
    sessions.add_replay(commands)
    config.add_config(commands)
    sessions.add_sessions(commands)
    sessions.add_undo(commands)
    sessions.add_rewind(commands)
    from ..client.rules_cli import add_rules_command

    add_rules_command(commands)
    return top


_IN_DAEMON = False
"""True in a daemon's run process: ``tether run`` or the chat runs here, not through a
daemon."""


def daemon_main(argv: list[str]) -> int:
    """A daemon's run process: ``tether`` ``argv``, a ``run`` or a chat."""
    global _IN_DAEMON
    _IN_DAEMON = True
    return main(argv)


TOP_FLAGS = frozenset({"-h", "--help", "--version", "--debug"})
TOP_VALUE_FLAGS = frozenset({"--log-level"})


def chat_by_default(argv: list[str]) -> tuple[list[str], bool]:
    """``argv`` with ``chat`` put after the top-level flags when it names no command
    (``tether --provider openai`` is a chat with that provider); True when it was put."""
    index = 0
    while index < len(argv):
        word = argv[index]
        if word in HANDLERS or word in COMMANDS:
            return argv, False
        name = word.split("=", 1)[0]
        if name in TOP_FLAGS:
            index += 1
        elif name in TOP_VALUE_FLAGS:
            index += 1 if "=" in word else 2
        else:
            break
    if any(word in TOP_FLAGS - {"--debug"} for word in argv[:index]):
        return argv, False  # `tether --help`, `tether --version`: the top level answers
    return [*argv[:index], "chat", *argv[index:]], True


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tether`` command."""
    command_line = parser()
    argv, implicit = chat_by_default(sys.argv[1:] if argv is None else argv)
    args = command_line.parse_args(argv)
    if implicit and not sys.stdin.isatty():
        command_line.print_usage(sys.stderr)
        print(
            "tether: no command: on a terminal `tether` alone opens a chat; "
            "scripts use `tether run PROMPT`",
            file=sys.stderr,
        )
        return 2
    chat_here = args.command == "chat"
    if _IN_DAEMON and args.command != "run" and not chat_here:
        print("tether: the daemon runs only `tether run` and `tether chat`", file=sys.stderr)
        return 2
    cold: Cold | None = None
    if (
        (args.command == "run" or chat_here)
        and not getattr(args, "no_daemon", False)
        and not _IN_DAEMON
    ):
        from ..daemon.wire import wanted

        if wanted(os.environ):
            from ..daemon.front import forward

            handed = forward(argv, os.environ)
            if isinstance(handed, int):
                return handed
            cold = handed  # None: the daemon cannot be used (forward said why)
    if cold is not None and chat_here:
        cold.start()  # while the user types; the chat itself runs here
        cold = None
    if args.command == "serve":  # its logging is set up after the lean start (lsp.lean)
        return serve.serve(args.log_level or "WARNING")
    import logging

    logging.basicConfig(level=(args.log_level or "WARNING").upper(), stream=sys.stderr)
    if args.command == "acp":
        return serve.acp()
    if args.log_level:  # the servers this command starts log at it too
        from ..client.spawn import SERVER_LOG_LEVEL

        SERVER_LOG_LEVEL["level"] = args.log_level
    try:
        status = command(args)
        if cold is not None:  # this run went in-process: the next finds a daemon
            cold.start()
        return status
    except BrokenPipeError:  # `tether replay … | head`: the reader has what it wanted
        from ..client.terminal import silence
        from ..client.terminal_run import EXIT_PIPE_CLOSED

        silence(sys.stdout)
        return EXIT_PIPE_CLOSED
    except Exception as exc:
        if args.debug:
            raise
        print(f"tether: unexpected error: {exc!r} (--debug shows where)", file=sys.stderr)
        return 1


def command(args: argparse.Namespace) -> int:
    """Run a terminal command (everything but ``serve`` and ``acp``)."""
    if args.command == "daemon":
        return daemon.daemon(args, daemon_main)
    if args.command == "rules":
        from ..client.rules_cli import rules_command

        return rules_command(args)
    return HANDLERS[args.command](args)
