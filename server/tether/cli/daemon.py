"""``tether daemon start | status | stop | serve``: the command line hands the daemon
(``tether.daemon``, which never imports the command line) what it runs and loads — a
run's ``tether`` in-process, ``tether serve`` in-process, and ``preload``."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .flags import Commands


def add_daemon(commands: Commands) -> None:
    from ..daemon.command import add_daemon_command

    add_daemon_command(commands)


def daemon(args: argparse.Namespace, run_main: Callable[[list[str]], int]) -> int:
    """``tether daemon ACTION``; ``run_main`` is ``tether`` in a daemon's run process."""
    from ..daemon.command import daemon_command
    from .serve import serve

    return daemon_command(args, run_main, serve, preload)


def preload() -> None:
    """What the daemon loads before it listens, so that every run it forks finds it loaded:
    the terminal client and chat, the server, and the tools with their schemas."""
    from ..client import chat, chat_input, rich_render, rules_cli, settings, terminal_run
    from ..daemon import command
    from ..lsp import handlers, lean, transport
    from ..lsp import server as lsp_server
    from ..tools import build_tools

    del chat, chat_input, rich_render, rules_cli, settings, terminal_run, command
    del handlers, lean, transport, lsp_server
    build_tools()  # the tools' schemas, made once here for every fork (tools.base)
