"""``tether daemon start | status | stop | serve``."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from . import wire
from .wire import DaemonError

HELP = """\
The shared warm server of `tether run` and `tether chat` (on by default): they hand their
prompt, folder, environment and terminal to a per-user daemon that has the server and the
provider's SDK already imported (and used once). Each run or chat gets a
process of its own forked from the daemon, with its own folder, environment, settings and
approvals: nothing crosses between them. The daemon itself starts in / with only your HOME,
locale, temporary and XDG folders (never the folder or the other variables of the run that
started it), and imports nothing from a folder or PYTHONPATH. Ctrl-C and window-size
changes at your terminal are passed on. `--no-daemon` runs in-process.

When none runs, `tether run` runs in-process (as fast as without the daemon: a daemon
starting would make it wait for every import) and leaves one starting as it ends; a chat
does the same, starting the daemon as it opens. A run that finds one starting waits for it.

  start    start this installation's daemon and wait until it listens
  status   whether it runs (or is starting), its pid, socket, runs in flight and served
  stop     stop accepting; it exits once its runs in flight end
  serve    be the daemon, in the foreground (what `start` runs)

the socket: $XDG_RUNTIME_DIR/tether/d-<fingerprint>.sock, else
  ~/.local/state/tether/daemon/ (or $XDG_STATE_HOME/tether/daemon/), a folder of mode 0700
  owned by you (another owner or looser permissions: refused); the daemon serves only your
  uid (SO_PEERCRED) and never listens on TCP. The fingerprint is the version, the Python
  interpreter and the installed files: after an upgrade a new daemon starts on a new socket
  and the old one exits once its runs end.
turning it off (yours only: a repository's .tether/config.toml or .mcp.json cannot):
  TETHER_DAEMON=0               in your environment (1: on, whatever the file says)
  daemon = false                in your ~/.config/tether/config.toml ($XDG_CONFIG_HOME)
  tether run --no-daemon        this run only (tether chat --no-daemon: this chat)
  TETHER_DAEMON_IDLE_SECONDS    an idle daemon exits after this long (default 600)
"""


def add_daemon_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "daemon",
        help="the shared warm server of tether run and chat (on; TETHER_DAEMON=0 turns it off)",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=["start", "status", "stop", "serve"])
    parser.add_argument("--socket", help=argparse.SUPPRESS)  # serve: where (from start)
    parser.add_argument("--preload", default="", help=argparse.SUPPRESS)  # serve: an SDK
    # serve: the start lock a front handed over, held until the daemon listens (front.spawn)
    parser.add_argument("--lock-fd", type=int, help=argparse.SUPPRESS)


def daemon_command(
    args: argparse.Namespace,
    run_main: object,
    serve_main: object,
    preload: Callable[[], None],
) -> int:
    """Run ``tether daemon ACTION``; ``preload`` loads what a run needs (``serve``)."""
    from typing import cast

    from .front import control, open_daemon, starting

    environ = os.environ
    try:
        if args.action == "serve":
            from .server import serve_daemon

            if args.socket:
                path = Path(args.socket)
            else:
                path = wire.socket_path(wire.socket_dir(environ), wire.fingerprint())
            return serve_daemon(
                path,
                {**environ, "TETHER_PROVIDER": args.preload or environ.get("TETHER_PROVIDER", "")},
                cast("Callable[[list[str]], int]", run_main),
                cast("Callable[[str], int]", serve_main),
                preload,
                args.lock_fd,
            )
        if args.action == "start":
            sock = open_daemon(environ)
            assert sock is not None
            sock.close()
            found = control("status", environ)
            print(f"tether daemon: running, pid {found and found.get('pid')}")
            return 0
        found = control(args.action, environ)
    except (DaemonError, OSError) as exc:
        print(f"tether: daemon: {exc}", file=sys.stderr)
        return 1
    if found is None:
        if args.action == "status" and starting(wire.socket_dir(environ)):
            print("tether daemon: starting (it listens once its imports are done)")
            return 0
        print("tether daemon: not running")
        return 1 if args.action == "status" else 0
    if "error" in found:
        print(f"tether: daemon: {found['error']}", file=sys.stderr)
        return 1
    if args.action == "stop":
        print(f"tether daemon: stopping ({found.get('runs', 0)} run(s) in flight finish first)")
        return 0
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(found.get("since", 0))))
    print(
        f"tether daemon: running, pid {found.get('pid')}, since {since}, "
        f"{found.get('runs', 0)} run(s) in flight, {found.get('served', 0)} served, "
        f"idle exit after {found.get('idleSeconds')} s\n  socket {found.get('socket')}"
    )
    return 0
