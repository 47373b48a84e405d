"""An editor session against the real ``tether serve`` subprocess over stdio (pytest-lsp).

``editor`` starts the server; ``await editor.open_session(root, ...)`` initializes it with a
real editor's capability snapshot (Neovim 0.11 or VS Code) plus Tether's declaration.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

import pytest
import pytest_asyncio
from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from tests import forkserver
from tests.providers.fakes import FakeApi
from tether.text.model import encoding_name, offset_at
from tether_protocol import ApprovalEvent, RunEvent, ToolResultEvent, parse_event

from ..waiting import wait_until
from .documents import send_did_change, send_did_open

SERVE = [sys.executable, "-m", "tether", "serve"]
"""A new interpreter: for the tests of the start, the exit and the process itself."""
SERVER = forkserver.command("serve")
"""Forked by the worker's fork server (``tests/forkserver.py``): every other test."""
PROFILES = {"neovim": "neovim@v0.11", "vscode": "visual-studio-code"}


class Editor:
    """The test's editor: sends requests, records events and server-to-client traffic.

    It behaves like a real editor: ``workspace/applyEdit`` changes an open buffer and
    reports it with ``didChange`` (or writes the file when it is not open), approvals are
    answered by ``approve`` (allow by default), and every request is recorded.

    Real clients' habits are switched on by attributes: when the ``didChange`` of an applied
    edit is sent (``report``: before answering like VS Code, ``report_delay`` seconds after
    like Eglot's idle timer or vim-lsp, or never like Emacs blocked in a synchronous
    command; ``report_copies`` duplicates it), by how much versions jump
    (``version_step``, Neovim's changedtick), whether the edit's version is checked
    (``check_versions``; vim-lsp does not), how many times an edit is applied
    (``apply_times``), whether files can be created (``can_create``), and raw answers
    (``apply_answer``, ``message_answer``).
    """

    def __init__(self, client: LanguageClient, state_dir: Path) -> None:
        self.client = client
        self.state_dir = state_dir
        self.events: list[RunEvent] = []
        self.init_result: types.InitializeResult | None = None
        self.root: Path | None = None
        self.docs: dict[str, tuple[str, int]] = {}
        self.approvals: list[dict[str, Any]] = []
        self.approve: Callable[[dict[str, Any]], Any] = lambda params: {"decision": "allow"}
        self.applied: list[dict[str, Any]] = []
        self.apply_mode = "apply"  # or "refuse", or "claim" (answer applied, change nothing)
        self.before_apply: Callable[[], None] | None = None
        self.message_requests: list[types.ShowMessageRequestParams] = []
        self.message_choice: str | None = "Allow"
        self.saves: list[list[str]] = []
        self.report: Literal["now", "late", "never"] = "now"
        self.report_delay = 3.0
        self.report_copies = 1
        """How many times each ``didChange`` of an edit is sent (a duplicate keeps its version)."""
        self.version_step = 1
        self.check_versions = True
        self.apply_times = 1
        self.can_create = True
        self.unsaved: dict[str, str] = {}
        """Buffers of files that do not exist on disk (a CreateFile the editor ignored)."""
        self.apply_answer: Callable[[], Any] | None = None
        """A raw answer to ``workspace/applyEdit`` instead of applying (may raise)."""
        self.message_answer: Callable[[], Any] | None = None
        """A raw answer to ``window/showMessageRequest`` instead of ``message_choice``."""
        self.save_answer: Callable[[], Any] | None = None
        """A raw answer to ``agent/saveDocuments`` instead of saving."""
        self.unreported: set[str] = set()
        self._late: list[asyncio.Future[None]] = []

        @client.feature("agent/event")
        def on_event(params: Any) -> None:
            self.events.append(parse_event(params))

        @client.feature("agent/approve")
        async def on_approve(params: Any) -> Any:
            self.approvals.append(params)
            answer = self.approve(params)
            return await answer if inspect.isawaitable(answer) else answer

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def on_apply(params: types.ApplyWorkspaceEditParams) -> Any:
            self.applied.append(get_converter().unstructure(params))
            if self.before_apply is not None:
                self.before_apply()
            if self.apply_answer is not None:
                return self.apply_answer()
            if self.apply_mode == "refuse":
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="refused")
            if self.apply_mode == "apply":
                for _ in range(self.apply_times):
                    self._apply(params.edit)
            return types.ApplyWorkspaceEditResult(applied=True)

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        async def on_message(params: types.ShowMessageRequestParams) -> Any:
            self.message_requests.append(params)
            if self.message_answer is not None:
                answer = self.message_answer()  # may be awaitable: a prompt left open
                return await answer if inspect.isawaitable(answer) else answer
            if self.message_choice is None:
                return None
            return types.MessageActionItem(title=self.message_choice)

        @client.feature("agent/saveDocuments")
        def on_save(params: Any) -> Any:
            self.saves.append(list(params["uris"]))
            if self.save_answer is not None:
                return self.save_answer()
            for uri in params["uris"]:
                if uri in self.docs:
                    Path(uri.removeprefix("file://")).write_bytes(self.docs[uri][0].encode())
            return {"saved": list(params["uris"])}

    def apply_last_edit(self) -> None:
        """Apply the last ``workspace/applyEdit`` received (from a custom ``apply_answer``)."""
        params = get_converter().structure(self.applied[-1], types.ApplyWorkspaceEditParams)
        self._apply(params.edit)

    def _apply(self, edit: types.WorkspaceEdit) -> None:
        for change in edit.document_changes or []:
            if isinstance(change, types.CreateFile):
                if self.can_create:
                    Path(change.uri.removeprefix("file://")).write_bytes(b"")
                continue
            assert isinstance(change, types.TextDocumentEdit)
            uri = change.text_document.uri
            path = Path(uri.removeprefix("file://"))
            if uri in self.docs:
                text, version = self.docs[uri]
                if self.check_versions and change.text_document.version is not None:
                    assert change.text_document.version == version
            elif path.exists():
                text, version = path.read_bytes().decode(), None
            else:  # Eglot 1.9 without CreateFile: an unsaved buffer, nothing on disk
                text, version = self.unsaved.get(uri, ""), None
            # Positions are resolved by LSP's rules (the shared text model), as an editor does.
            encoding = encoding_name(
                self.init_result and self.init_result.capabilities.position_encoding
            )
            for text_edit in sorted(
                change.edits,
                key=lambda e: (e.range.start.line, e.range.start.character),
                reverse=True,
            ):
                start = offset_at(
                    text, text_edit.range.start.line, text_edit.range.start.character, encoding
                )
                end = offset_at(
                    text, text_edit.range.end.line, text_edit.range.end.character, encoding
                )
                text = text[:start] + text_edit.new_text + text[end:]
            if version is not None:
                self._edited(uri, text)
            elif path.exists():
                path.write_bytes(text.encode())
            else:
                self.unsaved[uri] = text

    def _edited(self, uri: str, text: str) -> None:
        """An edit changed an open buffer: report it as ``report`` says."""
        self.docs[uri] = (text, self.docs[uri][1] + self.version_step)
        if self.report == "now":
            self._send_change(uri, self.report_copies)
        else:
            self.unreported.add(uri)
            if self.report == "late":  # the editor's timer: after the answer is sent
                done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                self._late.append(done)
                asyncio.get_running_loop().call_later(self.report_delay, self._late_report, done)

    def _late_report(self, done: asyncio.Future[None]) -> None:
        self.flush_changes()
        done.set_result(None)

    async def late_reports_sent(self) -> None:
        """Wait (up to 10 s) until every delayed ``didChange`` has been sent."""
        async with asyncio.timeout(10):
            await asyncio.gather(*self._late)

    def flush_changes(self) -> None:
        """Send the ``didChange`` of every buffer changed but not reported yet."""
        for uri in sorted(self.unreported):
            self._send_change(uri, self.report_copies)
        self.unreported.clear()

    def _send_change(self, uri: str, copies: int = 1) -> None:
        text, version = self.docs[uri]
        for _ in range(copies):
            send_did_change(self.client, uri, text, version)

    def replace_buffer(self, uri: str, text: str) -> None:
        """The user (or an edit) changes an open buffer: a full-text ``didChange``."""
        self.docs[uri] = (text, self.docs[uri][1] + 1)
        self._send_change(uri)

    def type_unreported(self, uri: str, text: str) -> None:
        """The user changes a buffer and the editor has not sent the ``didChange`` yet."""
        self.docs[uri] = (text, self.docs[uri][1] + 1)
        self.unreported.add(uri)

    async def open_session(
        self,
        root: Path,
        *,
        profile: str = "neovim",
        events: bool = True,
        approvals: bool = True,
        save_documents: bool = False,
        diagnostics: bool = False,
        apply_edit: bool = True,
        resource_operations: bool = True,
        show_document: bool = True,
        options: dict[str, Any] | None = None,
        script: dict[str, Any] | None = None,
    ) -> types.InitializeResult:
        """``initialize`` + ``initialized`` with a workspace folder at ``root``."""
        caps = client_capabilities(PROFILES[profile])
        caps.experimental = {
            "tether": {
                "events": events,
                "approvals": approvals,
                "saveDocuments": save_documents,
                "diagnostics": diagnostics,
            }
        }
        if not apply_edit and caps.workspace is not None:
            caps.workspace.apply_edit = False
        if not resource_operations and caps.workspace and caps.workspace.workspace_edit:
            caps.workspace.workspace_edit.resource_operations = None  # Eglot 1.9
        if not show_document and caps.window is not None:
            caps.window.show_document = None  # Eglot 1.9, vim-lsp
        init_options: dict[str, Any] = {"provider": "scripted", **(options or {})}
        if script is not None:
            init_options["script"] = script
        self.root = root
        self.init_result = await self.client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
                initialization_options=init_options,
            )
        )
        return self.init_result

    async def run(self, **params: Any) -> dict[str, Any]:
        """``agent/run`` with camelCase params; the result as a dict."""
        result = await self.client.protocol.send_request_async("agent/run", params)
        assert isinstance(result, dict)
        return result

    def events_of(self, run_id: str) -> list[RunEvent]:
        """The events of one run, in arrival order."""
        return [e for e in self.events if e.run_id == run_id]

    def kinds(self, run_id: str) -> list[str]:
        """The kinds of one run's events, in arrival order."""
        return [e.kind for e in self.events_of(run_id)]

    def tool_results(self, run_id: str = "r1") -> list[ToolResultEvent]:
        """The ``tool-result`` events of one run, in arrival order."""
        return [e for e in self.events_of(run_id) if isinstance(e, ToolResultEvent)]

    def approval_events(self, run_id: str = "r1") -> list[ApprovalEvent]:
        """The ``approval`` events of one run (how each call was decided), in arrival order."""
        return [e for e in self.events_of(run_id) if isinstance(e, ApprovalEvent)]

    def decisions(self, run_id: str = "r1") -> list[str]:
        """How each approval of one run was decided (``allow``, ``auto``, ...), in order."""
        return [e.decision for e in self.approval_events(run_id)]

    def open_document(self, path: Path, text: str, version: int = 1) -> str:
        """``didOpen`` a document (the buffer may differ from the disk)."""
        uri = path.as_uri()
        self.docs[uri] = (text, version)
        send_did_open(self.client, uri, text, version)
        return uri

    async def wait_for_event(self, kind: str) -> RunEvent:
        """Wait (up to 10 s) until an event of ``kind`` arrives."""
        return await wait_until(
            lambda: next((e for e in self.events if e.kind == kind), None), f"a {kind!r} event"
        )


def server_env(state_dir: Path) -> dict[str, str]:
    """The server's environment: no TETHER_* leaking in, state and the user's rules file
    kept in the test's folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env["TETHER_STATE_DIR"] = str(state_dir)
    env["XDG_CONFIG_HOME"] = str(state_dir.parent / "config")
    return env


EditorT = TypeVar("EditorT", bound=Editor)


@asynccontextmanager
async def serving(
    state_dir: Path,
    *,
    env: Mapping[str, str] | None = None,
    make_editor: Callable[[LanguageClient, Path], EditorT] = Editor,  # type: ignore[assignment]
    client_features: Mapping[str, Any] | None = None,
) -> AsyncIterator[EditorT]:
    """A started ``tether serve`` keeping its state in ``state_dir`` (``env`` added to
    ``server_env``), and its editor (``make_editor``: an ``Editor`` subclass for a client with
    other habits; ``client_features``: pytest-lsp's handlers instead of its defaults).
    Shut down cleanly at the end when the session was initialized and the link is sound."""
    client = LanguageClient(converter_factory=get_converter)
    register_lsp_features(client, None if client_features is None else dict(client_features))
    await client.start_io(*SERVER, env={**server_env(state_dir), **(env or {})})
    editor = make_editor(client, state_dir)
    try:
        yield editor
    finally:
        if editor.init_result is not None and client.error is None:
            await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()


@pytest_asyncio.fixture
async def editor(tmp_path: Path) -> AsyncIterator[Editor]:
    """A started server and its editor; shut down cleanly at the end of the test."""
    async with serving(tmp_path / "state") as session:
        yield session


@pytest.fixture
def fake() -> Iterator[FakeApi]:
    """A fake model API (OpenAI and Anthropic shapes) the server subprocess talks to over
    127.0.0.1; stopped after the test."""
    with FakeApi() as api:
        yield api


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small project folder."""
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    (root / "README.md").write_text("# demo\n")
    return root


def script(*turns: dict[str, Any], **options: Any) -> dict[str, Any]:
    """A scripted-provider script."""
    return {"turns": list(turns), **options}


def dumps(value: Any) -> str:
    """Canonical JSON for comparisons."""
    return json.dumps(value, sort_keys=True)
