"""A real Python language server (basedpyright, from PyPI, in the test extra) behind the test
editor: the error it publishes after the agent's edit reaches the model in the edit's
result, through the real `tether serve`.

The editor forwards its buffer to basedpyright as VS Code or Neovim would (``didOpen``, a
``didChange`` per applied edit) and answers ``agent/diagnostics`` from what basedpyright
last published (``textDocument/publishDiagnostics``), as ``vscode.languages.getDiagnostics``
and ``vim.diagnostic.get`` do.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from ..waiting import wait_until
from .calls import one_call_a_turn
from .conftest import Editor, send_did_change, send_did_open

APP = "def greet(name: str) -> str:\n    return 'hello ' + name\n"


def basedpyright() -> str:
    """``basedpyright-langserver`` next to the test's Python, else on PATH."""
    beside = Path(sys.executable).parent / "basedpyright-langserver"
    found = str(beside) if beside.exists() else shutil.which("basedpyright-langserver")
    if found is None:
        pytest.fail(
            "basedpyright-langserver is missing: install the test extra (basedpyright)",
            pytrace=False,
        )
    return found


class Pyright:
    """basedpyright as the editor's language server: it sees the editor's buffers."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.versions: dict[str, int] = {}

    @property
    def published(self) -> dict[str, list[dict[str, Any]]]:
        """What it last published per document (pytest-lsp keeps ``publishDiagnostics``)."""
        converter = get_converter()
        return {
            uri: [converter.unstructure(d) for d in found]
            for uri, found in self.client.diagnostics.items()
        }

    def open(self, uri: str, text: str) -> None:
        self.versions[uri] = 1
        send_did_open(self.client, uri, text)

    def change(self, uri: str, text: str) -> None:
        self.versions[uri] += 1
        send_did_change(self.client, uri, text, self.versions[uri])


@pytest_asyncio.fixture
async def pyright(workspace: Path) -> AsyncIterator[Pyright]:
    client = LanguageClient(converter_factory=get_converter)
    register_lsp_features(client)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: Any) -> None:
        return None  # file watchers and the like: accepted, as an editor does

    server = Pyright(client)
    await client.start_io(basedpyright(), "--stdio")
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            )
        )
        yield server
    finally:
        try:
            await client.shutdown_session()
        finally:
            await client.stop()


async def test_a_real_language_servers_new_error_reaches_the_model(
    editor: Editor, workspace: Path, pyright: Pyright
) -> None:
    (workspace / "src" / "app.py").write_text(APP)
    typo = {"path": "src/app.py", "old_text": "+ name", "new_text": "+ nme"}
    await editor.open_session(
        workspace,
        diagnostics=True,
        # basedpyright re-checks within a second here; generous for a loaded machine
        options={"diagnosticsSettleMs": 2000, "diagnosticsMaxWaitMs": 20000},
        script=one_call_a_turn({"name": "edit_file", "arguments": typo}),
    )
    app = editor.open_document(workspace / "src" / "app.py", APP)
    pyright.open(app, APP)
    await wait_until(lambda: app in pyright.published, "basedpyright's first publication", 60)
    assert pyright.published[app] == []

    edited = editor._edited

    def forward(uri: str, text: str) -> None:
        edited(uri, text)  # the editor changes its buffer and tells both servers
        pyright.change(uri, text)

    editor._edited = forward  # type: ignore[method-assign]
    asked: list[Any] = []

    @editor.client.feature("agent/diagnostics")
    def on_diagnostics(params: Any) -> Any:
        asked.append(params)
        uris = params.get("uris")
        return {
            "items": [
                {"uri": uri, "diagnostics": found}
                for uri, found in pyright.published.items()
                if uris is None or uri in uris
            ]
        }

    result = await editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 120})
    [tool] = editor.tool_results()
    assert tool.ok, tool.output
    assert 'src/app.py:2: error [basedpyright] "nme" is not defined' in tool.output, tool.output
    assert result["outcome"] == "done" and len(asked) >= 2
