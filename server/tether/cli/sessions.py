"""The stored sessions: ``tether sessions`` (list them), ``tether undo`` (a run's edits put
back), ``tether rewind`` (a session's checkpoints, or back to before one), ``tether replay``
(one shown again, or re-run)."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .flags import positive_int

if TYPE_CHECKING:
    from .flags import Commands


def add_replay(commands: Commands) -> None:
    parser = commands.add_parser(
        "replay", help="show a stored session, or re-run it through the current harness"
    )
    parser.add_argument("session", help="a session id, or the path of a session log")
    parser.add_argument("--state-dir", help="where session logs are kept")
    parser.add_argument(
        "--rerun", metavar="DIR", help="play the model's logged replies again on folder DIR"
    )
    parser.add_argument("--yes", action="store_true", help="approve every edit and command")


def add_sessions(commands: Commands) -> None:
    parser = commands.add_parser("sessions", help="list the stored sessions")
    parser.add_argument("--here", action="store_true", help="only this folder's")
    parser.add_argument("--cwd", default=".", help="the folder --here means")
    parser.add_argument("--limit", type=positive_int, default=20)
    parser.add_argument("--state-dir", help="where session logs are kept")


def add_undo(commands: Commands) -> None:
    parser = commands.add_parser(
        "undo", help="put back the files a run edited (default: the last run in this folder)"
    )
    parser.add_argument("run", nargs="?", help="the run id (shown by tether run --json)")
    parser.add_argument("--cwd", default=".", help="the workspace folder (default: here)")
    parser.add_argument("--state-dir", help="where session logs are kept")


def add_rewind(commands: Commands) -> None:
    parser = commands.add_parser(
        "rewind",
        help="list a session's checkpoints, or put its files and conversation back to "
        "before one (default: the last session in this folder)",
    )
    parser.add_argument("checkpoint", nargs="?", help="the checkpoint id (see --list)")
    parser.add_argument("--list", action="store_true", help="list the checkpoints")
    parser.add_argument("--session", help="the session id (default: the last one here)")
    parser.add_argument(
        "--restore",
        choices=("files", "conversation", "both"),
        default="both",
        help="what goes back (default: both)",
    )
    parser.add_argument(
        "--force", action="store_true", help="put back files changed since too (theirs lost)"
    )
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    parser.add_argument("--cwd", default=".", help="the workspace folder (default: here)")
    parser.add_argument("--state-dir", help="where session logs are kept")


def latest_session(cwd: Path, state_dir: Path) -> Any:
    """The most recently updated session that ran in ``cwd`` (None: none known)."""
    from ..client.history import sessions

    found = sessions(state_dir, cwd, limit=1)
    return found[0] if found else None


def state_dir_of(cwd: Path, flags: dict[str, Any]) -> Path | int:
    """Where a server started in ``cwd`` with ``flags`` keeps its sessions, or exit status 2
    after saying why the settings cannot be used."""
    from ..client.settings import terminal_settings
    from ..config.layers import ConfigError

    try:
        return terminal_settings(cwd, flags, os.environ).config.state_dir
    except ConfigError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2


def list_sessions(args: argparse.Namespace) -> int:
    """``tether sessions``: the stored sessions, newest first."""
    from ..client.history import sessions, table

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

    from ..client.history import folders, last_edit_run
    from ..client.undo import undo_in_terminal
    from ..session.store import find_run

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


def rewind(args: argparse.Namespace) -> int:
    """``tether rewind [CHECKPOINT] [--list]``: a session's checkpoints, or a rewind."""
    import anyio

    from ..client.history import folders
    from ..client.rewind import rewind_in_terminal
    from ..session.store import load

    if args.list and args.checkpoint:
        print("tether: give a checkpoint or --list, not both", file=sys.stderr)
        return 2
    cwd = Path(args.cwd).resolve()
    options = {"stateDir": args.state_dir} if args.state_dir else {}
    state_dir = state_dir_of(cwd, options)
    if isinstance(state_dir, int):
        return state_dir
    session_id = args.session
    if session_id is None:
        latest = latest_session(cwd, state_dir)
        if latest is None:
            print(f"tether: no session to rewind in {cwd}", file=sys.stderr)
            return 2
        session_id = latest.session_id
    # The session's own folder, so its files are inside the server's workspace: the one
    # its log names, else the one the terminal remembers, else this one.
    data = load(state_dir, session_id)
    logged = data.roots[0] if data is not None and data.roots else None
    root = Path(logged or folders(state_dir).get(session_id, str(cwd)))
    return anyio.run(
        functools.partial(
            rewind_in_terminal,
            root,
            session_id,
            args.checkpoint,
            options,
            restore=args.restore,
            force=args.force,
            as_json=args.json,
        )
    )


def replay(args: argparse.Namespace) -> int:
    """``tether replay SESSION [--rerun DIR]``: show a stored session, or re-run it and
    report differences (exit 1 if any)."""
    import anyio

    from ..client.replay import rerun, show, uses_absolute_paths
    from ..client.terminal_run import make_renderer
    from ..session.index import session_log_path
    from ..session.records import read_session

    path = Path(args.session)
    if not path.is_file():
        base = state_dir_of(Path.cwd(), {"stateDir": args.state_dir} if args.state_dir else {})
        if isinstance(base, int):
            return base
        path = session_log_path(base, args.session)
    if not path.is_file():
        print(f"tether: no session log {path}", file=sys.stderr)
        return 2
    data = read_session(path, path.stem)
    renderer = make_renderer(sys.stdout)  # Rich on a colour terminal, as a run
    if args.rerun is None:
        show(data, renderer)
        return 0
    from ..client.history import folders

    origin = folders(path.parent.parent).get(data.session_id)  # <state>/sessions/<id>.jsonl
    if origin is None and uses_absolute_paths(data):
        print(
            "tether: the folder this session ran in is not known, so absolute paths in the "
            "model's calls are replayed unchanged (they point at the original folder)",
            file=sys.stderr,
        )
    target = Path(args.rerun).resolve()
    found = anyio.run(rerun, data, target, args.yes, renderer, Path(origin) if origin else None)
    print(f"{found} difference(s)" if found else "no differences")
    return 1 if found else 0
