"""One language server process and Tether's LSP client of it (pygls' client, lsprotocol
types): started in a neutral folder with the workspace as data, every request bounded in
time, and ended with everything it started.

The process is started as the MCP servers are (``mcp/stdio.py``): the command runner's
allow-listed environment with a ``PATH`` that points nowhere in the workspace, the folder
``neutral_folder`` gives (never the workspace), its own process group, and through the
trampoline (``sandbox/trampoline.py``) that ends its descendants with it. The workspace
reaches it only as the ``rootUri`` and workspace folders of ``initialize``. Its standard
error is drained, the last ``STDERR_TAIL`` bytes kept for the error that names a crash.

A server that exits, answers something that is not LSP, or does not answer within the
timeout is done for: its pending requests fail with the reason (a ``ToolError``), it is
stopped, and the pool starts a new one on the next call. What it asks of the client is
answered without effect: no configuration, no edit applied (``workspace/applyEdit`` is
refused), nothing shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient

import tether

from ..errors import ToolError
from ..mcp.stdio import neutral_folder, program_path, server_environment
from ..sandbox.runner import KILL_GRACE_SECONDS, kill_tree, unsandboxed
from ..text.display import shown
from .catalog import ServerCommand

log = logging.getLogger(__name__)
_wire = logging.getLogger(f"{__name__}.wire")
"""pygls' reader logs what it cannot read with a traceback: the failure is said once, by
``fail``, so its own report stays out of the user's terminal."""
_wire.propagate = False
_wire.addHandler(logging.NullHandler())

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""The longest message a server may send; a longer one ends it."""
START_SECONDS = 60.0
"""How long a server may take to answer ``initialize``."""
STDERR_TAIL = 4096
SHUTDOWN_SECONDS = 1.0
"""How long ``shutdown`` may take before the server is ended by signal."""
GRACE_SECONDS = 0.5
TREE_SECONDS = KILL_GRACE_SECONDS + 1.0


def client_capabilities() -> types.ClientCapabilities:
    """What Tether's client can take: the five requests the code tools make, full-text
    sync, edits as ``documentChanges`` (no file operations), positions in UTF-16."""
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf16]
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(),
            definition=types.DefinitionClientCapabilities(link_support=True),
            references=types.ReferenceClientCapabilities(),
            hover=types.HoverClientCapabilities(
                content_format=[types.MarkupKind.PlainText, types.MarkupKind.Markdown]
            ),
            document_symbol=types.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True
            ),
            rename=types.RenameClientCapabilities(prepare_support=False),
        ),
        workspace=types.WorkspaceClientCapabilities(
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            symbol=types.WorkspaceSymbolClientCapabilities(),
            workspace_folders=True,
            configuration=True,
        ),
    )


class _Bounded:
    """The server's output as pygls' reader reads it, refusing a message longer than
    ``MAX_MESSAGE_BYTES`` before reading it (a flood is cut off, not buffered)."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream

    async def readline(self) -> bytes:
        return await self.stream.readline()

    async def readexactly(self, n: int) -> bytes:
        if n > MAX_MESSAGE_BYTES:
            raise _TooLong(n)
        return await self.stream.readexactly(n)


class _TooLong(Exception):
    def __init__(self, length: int) -> None:
        super().__init__(f"it sent a message of {length} bytes (more than {MAX_MESSAGE_BYTES})")


class _Client(LanguageClient):
    """pygls' client, telling its owner when the server sends what it cannot read."""

    def __init__(self, owner: LanguageServerProcess) -> None:
        super().__init__("tether", tether.__version__)
        self.owner = owner

    def report_server_error(self, error: Exception, source: Any) -> None:
        self.owner.fail(f"it sent a message that is not LSP ({type(error).__name__})")


class LanguageServerProcess:
    """One language server for one workspace: started by ``start``, asked by ``request``,
    told the files' text by ``sync``, ended by ``close``."""

    def __init__(
        self,
        command: ServerCommand,
        roots: tuple[Path, ...],
        environ: Mapping[str, str],
        timeout: float,
    ) -> None:
        self.command = command
        self.roots = roots
        self.environ = environ
        self.timeout = timeout
        self.failure: str | None = None
        """Why the server is done for (None while it serves)."""
        self._client = _Client(self)
        self._process: asyncio.subprocess.Process | None = None
        self._reaped = False
        self._stderr = bytearray()
        self._tasks: list[asyncio.Task[Any]] = []
        self._versions: dict[str, tuple[int, str]] = {}
        """Open documents: their version and the text the server has."""
        self.encoding = "utf-16"

    @property
    def name(self) -> str:
        return self.command.name

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def _last_line(self) -> str:
        text = self._stderr.decode("utf-8", "replace").strip()
        return shown(text.splitlines()[-1][:300]) if text else ""

    def fail(self, reason: str) -> None:
        """The server is done for: every pending request fails with ``reason``."""
        if self.failure is None:
            self.failure = reason
            log.warning("language server %s: %s", self.name, reason)
        for future in list(self._client.protocol._request_futures.values()):
            if not future.done():
                future.set_exception(ToolError(self._error()))

    def _error(self) -> str:
        return f"the language server {self.name} failed: {self.failure}"

    async def start(self) -> None:
        """Start the process and initialize it; ``ToolError`` when it cannot."""
        root = self.roots[0]
        env = server_environment(self.environ, None, root)
        cwd = neutral_folder(None, self.environ, root)
        try:
            program = await anyio.to_thread.run_sync(program_path, self.command.argv[0], env, cwd)
        except FileNotFoundError:
            raise ToolError(
                f"the language server {self.name} could not start: "
                f"{self.command.argv[0]!r} was not found"
            ) from None
        prepared = unsandboxed([program, *self.command.argv[1:]], env)
        self._reaped = prepared.reaped
        try:
            self._process = process = await asyncio.create_subprocess_exec(
                *prepared.argv,
                env=prepared.env,
                cwd=cwd,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise ToolError(f"the language server {self.name} could not start: {exc}") from None
        assert process.stdin is not None and process.stdout is not None
        self._answer_server_requests()
        self._client.protocol.set_writer(process.stdin)
        self._tasks = [
            asyncio.ensure_future(self._read(process.stdout)),
            asyncio.ensure_future(self._drain(process)),
            asyncio.ensure_future(self._watch(process)),
        ]
        params = types.InitializeParams(
            process_id=os.getpid(),
            root_uri=root.as_uri(),
            root_path=str(root),
            workspace_folders=[
                types.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in self.roots
            ],
            capabilities=client_capabilities(),
            initialization_options=self.command.initialization_options,
            client_info=types.ClientInfo(name="tether", version=tether.__version__),
        )
        result = await self._ask(types.INITIALIZE, params, START_SECONDS)
        encoding = getattr(getattr(result, "capabilities", None), "position_encoding", None)
        if encoding not in (None, types.PositionEncodingKind.Utf16):
            self.fail(f"it chose the position encoding {encoding}, not UTF-16")
            raise ToolError(self._error())
        self._client.protocol.notify(types.INITIALIZED, types.InitializedParams())

    def _answer_server_requests(self) -> None:
        feature: Any = self._client.feature  # pygls' decorator is untyped

        def configuration(params: types.ConfigurationParams) -> list[Any]:
            return [None for _ in params.items]  # the server's defaults

        def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            return types.ApplyWorkspaceEditResult(
                applied=False, failure_reason="Tether applies edits only through its approvals"
            )

        def nothing(params: Any) -> None:
            return None

        feature(types.WORKSPACE_CONFIGURATION)(configuration)
        feature(types.WORKSPACE_APPLY_EDIT)(apply_edit)
        for method in (
            types.CLIENT_REGISTER_CAPABILITY,
            types.CLIENT_UNREGISTER_CAPABILITY,
            types.WINDOW_WORK_DONE_PROGRESS_CREATE,
            types.WINDOW_SHOW_MESSAGE_REQUEST,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
            types.WINDOW_LOG_MESSAGE,
            types.WINDOW_SHOW_MESSAGE,
            types.PROGRESS,
            types.TELEMETRY_EVENT,
        ):
            feature(method)(nothing)

    async def _read(self, stdout: asyncio.StreamReader) -> None:
        try:
            await run_async(
                stop_event=self._client._stop_event,
                reader=_Bounded(stdout),
                protocol=self._client.protocol,
                logger=_wire,
                error_handler=lambda exc, source: self.fail(
                    f"it sent a message that is not LSP ({type(exc).__name__})"
                ),
            )
        except _TooLong as exc:
            self.fail(str(exc))
        except (ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            self.fail(f"it sent something that is not LSP ({type(exc).__name__})")
        except Exception as exc:  # the reader must never take the server down with it
            self.fail(f"its output could not be read ({type(exc).__name__}: {exc})")

    async def _drain(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := await process.stderr.read(4096):
                self._stderr += chunk
                if len(self._stderr) > STDERR_TAIL:
                    del self._stderr[: len(self._stderr) - STDERR_TAIL]

    async def _watch(self, process: asyncio.subprocess.Process) -> None:
        code = await process.wait()
        await asyncio.sleep(0)  # let the reader hand over what came before the exit
        said = self._last_line()
        self.fail(f"it exited with code {code}" + (f" ({said})" if said else ""))

    async def _ask(self, method: str, params: Any, seconds: float | None = None) -> Any:
        if self.failure is not None:
            raise ToolError(self._error())
        seconds = self.timeout if seconds is None else seconds
        try:
            future = self._client.protocol.send_request_async(method, params)
            return await asyncio.wait_for(future, seconds)
        except TimeoutError:
            self.fail(f"it did not answer {method} within {seconds:g} s")
            raise ToolError(self._error()) from None
        except JsonRpcException as exc:
            raise ToolError(
                f"the language server {self.name} refused {method}: {shown(str(exc.message))[:300]}"
            ) from None
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            self.fail(f"the connection broke ({type(exc).__name__})")
            raise ToolError(self._error()) from None

    async def request(self, method: str, params: Any) -> Any:
        """Ask the server (within the timeout); ``ToolError`` for an error answer, a
        crash, a hang or garbage."""
        return await self._ask(method, params)

    def sync(self, uri: str, language_id: str, text: str) -> None:
        """Tell the server the text of a document (opened once, then whole-text changes)."""
        if self.failure is not None:
            raise ToolError(self._error())
        known = self._versions.get(uri)
        if known is not None and known[1] == text:
            return
        protocol = self._client.protocol
        if known is None:
            item = types.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)
            protocol.notify(
                types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=item)
            )
            self._versions[uri] = (1, text)
            return
        version = known[0] + 1
        change = types.TextDocumentContentChangeWholeDocument(text=text)
        protocol.notify(
            types.TEXT_DOCUMENT_DID_CHANGE,
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                content_changes=[change],
            ),
        )
        self._versions[uri] = (version, text)

    async def close(self) -> None:
        """End the server and everything it started: ``shutdown`` and ``exit`` when it
        still answers, then stdin closed, SIGTERM (the trampoline ends its descendants),
        and SIGKILL for whatever is left of the tree, each after the smaller one's time."""
        process = self._process
        if process is None:
            return
        with anyio.CancelScope(shield=True):
            if self.failure is None and process.returncode is None:
                with contextlib.suppress(ToolError, Exception):
                    await self._ask(types.SHUTDOWN, None, SHUTDOWN_SECONDS)
                    self._client.protocol.notify(types.EXIT, None)
            self.failure = self.failure or "it was stopped"
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
            if not await _exited(process, GRACE_SECONDS):
                _signal(process, signal.SIGTERM, self._reaped)
                if not await _exited(process, TREE_SECONDS):
                    await anyio.to_thread.run_sync(kill_tree, process.pid)
                    _kill_group(process)
                    await _exited(process, TREE_SECONDS)
            if not self._reaped:
                _kill_group(process)  # what it left in its group
            self._client._stop_event.set()
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)


async def _exited(process: asyncio.subprocess.Process, seconds: float) -> bool:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), seconds)
    return process.returncode is not None


def _signal(process: asyncio.subprocess.Process, sig: signal.Signals, reaped: bool) -> None:
    """``sig`` to the trampoline (which passes it on to every descendant), else the group."""
    if reaped and process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, sig)
    elif not reaped:
        _kill_group(process, sig)


def _kill_group(process: asyncio.subprocess.Process, sig: signal.Signals = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)
