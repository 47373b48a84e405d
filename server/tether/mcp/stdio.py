"""An MCP server over stdio: its process, its messages, its end.

The SDK's ``stdio_client`` inherits the SDK's idea of a safe environment, reads lines of
any length and reports a malformed line to the session as a value; Tether needs its own:
the server gets the command runner's allow-listed environment (``sandbox/walls.py``) plus
what its configuration sets, runs in its own process group (``start_new_session``), and
is cut off — ended, its pending calls failed with the reason — when it sends a message
longer than ``MAX_MESSAGE_BYTES`` or one that is not JSON-RPC. It starts in a neutral
folder (``neutral_folder``: its ``cwd``, else the home folder, never the workspace) with a
``PATH`` that points nowhere in the workspace, so nothing there steers its launcher. It
starts through the command runner's trampoline (``sandbox/trampoline.py``, no walls): a
child subreaper that Tether's death stops, and that ends every descendant of the server —
those that left its group too. Its standard error is read and only the last
``STDERR_TAIL`` bytes kept, for the error that names a crash. On close (``_stop``) each
hammer waits for the smaller one: stdin closed, then SIGTERM through the trampoline and its
grace, then SIGKILL for whatever is left of the tree, whatever the server does with its
stdin or signals.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from anyio.abc import Process

from ..sandbox.runner import KILL_GRACE_SECONDS, kill_tree, unsandboxed
from ..sandbox.walls import passed

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""The longest message a server may send (a line); longer, it is cut off."""
STDERR_TAIL = 4096
GRACE_SECONDS = 0.5
"""How long a server may take to exit after its stdin closes."""
TREE_SECONDS = KILL_GRACE_SECONDS + 1.0
"""How long it may take after SIGTERM: the trampoline's grace for every descendant (between
its SIGTERM and its SIGKILL), and a margin for it to reap them and exit."""


def server_environment(
    environ: Mapping[str, str], configured: Mapping[str, str] | None, workspace: Path | None
) -> dict[str, str]:
    """The allow-listed part of ``environ`` (as a command gets it) plus the configured
    variables, ``${NAME}`` in their values replaced by ``environ``'s; ``PATH`` without its
    relative entries and those inside ``workspace`` (``outside_path``)."""
    env = {k: v for k, v in environ.items() if passed(k) and not v.startswith("()")}
    for name, value in (configured or {}).items():
        env[name] = expand(value, environ)
    if "PATH" in env:
        env["PATH"] = outside_path(env["PATH"], workspace)
    return env


def outside_path(path: str, workspace: Path | None) -> str:
    """``path`` (a ``PATH``) without the entries a workspace can fill: a relative one
    (``node_modules/.bin``, ``.``, an empty one: found from whatever folder a lookup starts
    in) and one inside ``workspace`` (its ``.venv/bin``, put there by a shell hook)."""
    inside = workspace.resolve() if workspace is not None else None
    kept = []
    for entry in path.split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        if inside is not None and _within(Path(entry), inside):
            continue
        kept.append(entry)
    return os.pathsep.join(dict.fromkeys(kept))


def _within(path: Path, folder: Path) -> bool:
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return True  # cannot tell: not used
    return resolved == folder or folder in resolved.parents


def neutral_folder(cwd: str | None, environ: Mapping[str, str], workspace: Path | None) -> Path:
    """The folder a server runs in: its configured ``cwd`` (``~`` expanded; relative: to the
    home folder), else the home folder — never the workspace unless configured so, so that
    nothing of the workspace (``node_modules``, a module for ``python -m``, ``.npmrc``,
    ``uv.toml``, ``.python-version``) steers its launcher. A home folder inside the workspace
    (a workspace of ``/`` or of the home folder itself) gives ``/`` instead."""
    home = Path(environ.get("HOME") or Path.home())
    if cwd:
        folder = Path(_expand_home(cwd, home))
        return folder if folder.is_absolute() else home / folder
    if workspace is not None and _within(home, workspace.resolve()):
        return Path("/")
    return home


def _expand_home(cwd: str, home: Path) -> str:
    """``~`` and ``~/…`` as the server's home folder; ``~user`` as the system says."""
    if cwd == "~" or cwd.startswith("~/"):
        return str(home) + cwd[1:]
    return os.path.expanduser(cwd)


def expand(value: str, environ: Mapping[str, str]) -> str:
    """``value`` with each ``${NAME}`` replaced by ``environ[NAME]`` (empty when unset)."""
    out: list[str] = []
    rest = value
    while (start := rest.find("${")) >= 0:
        end = rest.find("}", start)
        if end < 0:
            break
        out.append(rest[:start])
        out.append(environ.get(rest[start + 2 : end], ""))
        rest = rest[end + 1 :]
    out.append(rest)
    return "".join(out)


def program_path(command: str, env: Mapping[str, str], cwd: Path) -> str:
    """``command`` as a path: looked up on the server's ``PATH`` when it is a bare name,
    else taken relative to its folder (never Tether's own); ``FileNotFoundError`` when
    there is none."""
    if "/" in command:
        path = Path(command).expanduser()
        if not path.is_absolute():
            path = cwd / path
        if not os.access(path, os.X_OK) or path.is_dir():
            raise FileNotFoundError(2, "No such program", str(path))
        return str(path)
    found = shutil.which(command, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(2, "No such program on PATH", command)
    return found


@dataclass(slots=True)
class Ending:
    """Why a server's connection ended, once known."""

    reason: str | None = None
    """Tether cut it off (a flood, a malformed message), or it could not start."""
    returncode: int | None = None
    stderr: bytearray = field(default_factory=bytearray)
    exited: anyio.Event = field(default_factory=anyio.Event)
    """Set once the process has exited (its code in ``returncode``)."""

    def last_line(self) -> str:
        text = self.stderr.decode("utf-8", "replace").strip()
        return text.splitlines()[-1][:300] if text else ""


@contextlib.asynccontextmanager
async def stdio_transport(
    command: str,
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    ending: Ending,
) -> AsyncIterator[tuple[Any, Any]]:
    """The server's message streams (as ``ClientSession`` takes them), the process ended
    with its group on exit; ``ending`` tells why it stopped."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    # Through the command runner's trampoline (a child subreaper with the server's death
    # signal): every process the server starts ends with it, even if Tether is killed.
    program = await anyio.to_thread.run_sync(program_path, command, env, cwd)
    prepared = unsandboxed([program, *args], env)
    process = await anyio.open_process(
        prepared.argv,
        env=prepared.env,
        cwd=cwd,
        start_new_session=True,
    )
    incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    outgoing, outgoing_receive = anyio.create_memory_object_stream[SessionMessage](16)

    def cut_off(reason: str) -> None:
        if ending.reason is None:
            ending.reason = reason
        _end(process, prepared.reaped)

    async def read_stdout() -> None:
        assert process.stdout is not None
        buffer = bytearray()
        async with incoming_send:
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, OSError):
                while True:
                    chunk = await process.stdout.receive()
                    buffer += chunk
                    while (end := buffer.find(b"\n")) >= 0:
                        line = bytes(buffer[:end])
                        del buffer[: end + 1]
                        if not line.strip():
                            continue
                        try:
                            message = types.jsonrpc_message_adapter.validate_json(
                                line, by_name=False
                            )
                        except ValueError:
                            cut_off(f"it sent a malformed message: {line[:80]!r}")
                            return
                        try:
                            await incoming_send.send(SessionMessage(message))
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return
                    if len(buffer) > MAX_MESSAGE_BYTES:
                        cut_off(f"it sent a message longer than {MAX_MESSAGE_BYTES} bytes")
                        return

    async def read_stderr() -> None:
        assert process.stderr is not None
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, OSError):
            while True:
                ending.stderr += await process.stderr.receive()
                if len(ending.stderr) > STDERR_TAIL:
                    del ending.stderr[: len(ending.stderr) - STDERR_TAIL]

    async def watch() -> None:
        await process.wait()
        ending.returncode = process.returncode
        ending.exited.set()

    async def write_stdin() -> None:
        assert process.stdin is not None
        async with outgoing_receive:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for item in outgoing_receive:
                    body = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(body.encode() + b"\n")

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_stdout)
            tasks.start_soon(read_stderr)
            tasks.start_soon(write_stdin)
            tasks.start_soon(watch)
            try:
                yield incoming, outgoing
            finally:
                with anyio.CancelScope(shield=True):
                    await _stop(process, prepared.reaped)
                    ending.returncode = process.returncode
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            # Normally stopped by now. Cut short (the front's process ending meanwhile),
            # the trampoline is told to finish and left to (it needs nothing of Tether);
            # without one, the group is killed.
            _end(process, prepared.reaped)
            await _reap(process)
            ending.returncode = process.returncode
            ending.exited.set()
            for stream in (incoming, outgoing, incoming_send, outgoing_receive):
                await stream.aclose()


async def _stop(process: Process, reaped: bool) -> None:
    """End the server and everything it started, each hammer only once the smaller one had
    its time: stdin closed and ``GRACE_SECONDS`` to exit; then SIGTERM and ``TREE_SECONDS``
    — through the trampoline (``reaped``), which SIGTERMs every descendant, SIGKILLs what
    lives on after its own grace and exits once none is left; else to the group. Whatever
    is left after that is killed, the whole tree (``_kill_tree``)."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    if not await _exited(process, GRACE_SECONDS):
        _kill_group(process, signal.SIGTERM)  # the trampoline, or every process of the group
        if not await _exited(process, TREE_SECONDS):
            await anyio.to_thread.run_sync(_kill_tree, process)
            return
    if not reaped:
        _kill_group(process)  # what it left behind in its group


async def _exited(process: Process, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await process.wait()
    return process.returncode is not None


async def _reap(process: Process) -> None:
    with anyio.move_on_after(TREE_SECONDS):
        await process.wait()
    if process.returncode is None:
        log.warning("MCP server process %d has not ended", process.pid)


def _end(process: Process, reaped: bool) -> None:
    """End it without waiting: the trampoline told to stop (it ends every descendant, then
    itself, within its grace), else the group killed."""
    if not reaped:
        _kill_group(process)
    elif process.returncode is None:  # not reaped yet: the pid is still the trampoline's
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, signal.SIGTERM)


def _kill_group(process: Process, sig: signal.Signals = signal.SIGKILL) -> None:
    """Signal the server's process group (it leads it: ``start_new_session``)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def _kill_tree(process: Process) -> None:
    """SIGKILL every descendant of the process (``kill_tree``), then its group (blocking:
    reads ``/proc``)."""
    if process.returncode is None:  # not reaped: its pid cannot be another process's
        kill_tree(process.pid)
    _kill_group(process)


def is_running(ending: Ending) -> bool:
    return ending.returncode is None and ending.reason is None
