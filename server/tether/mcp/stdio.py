"""An MCP server over stdio: its process, its messages, its end.

The SDK's ``stdio_client`` inherits the SDK's idea of a safe environment, reads lines of
any length and reports a malformed line to the session as a value; Tether needs its own:
the server gets the command runner's allow-listed environment (``sandbox/walls.py``) plus
what its configuration sets, runs in its own process group (``start_new_session``), and
is cut off — killed, its pending calls failed with the reason — when it sends a message
longer than ``MAX_MESSAGE_BYTES`` or one that is not JSON-RPC. It starts through the
command runner's trampoline (``sandbox/trampoline.py``, no walls): a child subreaper that
Tether's death stops, and that ends every descendant of the server. Its standard error is read
and only the last ``STDERR_TAIL`` bytes kept, for the error that names a crash. On close
the whole group is killed, whatever the server does with its stdin.
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
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import Process

from ..sandbox.runner import unsandboxed
from ..sandbox.walls import passed

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""The longest message a server may send (a line); longer, it is cut off."""
STDERR_TAIL = 4096
GRACE_SECONDS = 0.5
"""How long a server may take to exit after its stdin closes, then after SIGTERM."""


def server_environment(
    environ: Mapping[str, str], configured: Mapping[str, str] | None
) -> dict[str, str]:
    """The allow-listed part of ``environ`` (as a command gets it) plus the configured
    variables, ``${NAME}`` in their values replaced by ``environ``'s."""
    env = {k: v for k, v in environ.items() if passed(k) and not v.startswith("()")}
    for name, value in (configured or {}).items():
        env[name] = expand(value, environ)
    return env


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


def program_path(command: str, env: Mapping[str, str], cwd: Path | None) -> str:
    """``command`` as a path: looked up on the server's ``PATH`` when it is a bare name,
    else taken relative to its folder; ``FileNotFoundError`` when there is none."""
    if "/" in command:
        path = Path(command).expanduser()
        if not path.is_absolute() and cwd is not None:
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
    cwd: Path | None,
    ending: Ending,
) -> AsyncIterator[tuple[Any, Any]]:
    """The server's message streams (as ``ClientSession`` takes them), the process ended
    with its group on exit; ``ending`` tells why it stopped."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    # Through the command runner's trampoline (a child subreaper with the server's death
    # signal): every process the server starts ends with it, even if Tether is killed.
    prepared = unsandboxed([program_path(command, env, cwd), *args], env)
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
        _kill_group(process)

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
                    await _stop(process)
                    ending.returncode = process.returncode
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            _kill_group(process)
            await _reap(process)
            ending.returncode = process.returncode
            ending.exited.set()
            for stream in (incoming, outgoing, incoming_send, outgoing_receive):
                await stream.aclose()


async def _stop(process: Process) -> None:
    """Close stdin, a short grace, SIGTERM to the group, a short grace, SIGKILL."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    if await _exited(process, GRACE_SECONDS):
        _kill_group(process)  # what it left behind in its group
        return
    _kill_group(process, signal.SIGTERM)
    if not await _exited(process, GRACE_SECONDS):
        _kill_group(process)


async def _exited(process: Process, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await process.wait()
    return process.returncode is not None


async def _reap(process: Process) -> None:
    with anyio.move_on_after(5):
        await process.wait()
    if process.returncode is None:
        log.warning("MCP server process %d survived SIGKILL", process.pid)


def _kill_group(process: Process, sig: signal.Signals = signal.SIGKILL) -> None:
    """Signal the server's process group (it leads it: ``start_new_session``)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def is_running(ending: Ending) -> bool:
    return ending.returncode is None and ending.reason is None
