"""The code tools through ``tether serve`` for an editor: a rename is offered only to a client
whose approvals show a change of several files (``changeSets``; a plain LSP client, whose
approval shows the diff as text, always), and is then asked once and applied through the
editor's ``workspace/applyEdit``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import client_capabilities

from .conftest import PROFILES, Editor, serving

VENV_BIN = str(Path(sys.executable).parent)
LIB = 'def greet(name: str) -> str:\n    return f"hello {name}"\n'
APP = 'from lib import greet\n\nprint(greet("you"))\n'
CALLS = {
    "turns": [
        {
            "toolCalls": [
                {
                    "name": "definition",
                    "arguments": {"path": "app.py", "line": 3, "symbol": "greet"},
                },
                {
                    "name": "rename",
                    "arguments": {"path": "app.py", "line": 3, "symbol": "greet", "new_name": "hi"},
                },
            ]
        },
        {"text": "done"},
    ]
}


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "lib.py").write_text(LIB)
    (root / "app.py").write_text(APP)
    return root


async def open_session(editor: Editor, root: Path, tether: dict[str, Any]) -> None:
    caps = client_capabilities(PROFILES["neovim"])
    caps.experimental = {"tether": tether}
    editor.root = root
    editor.init_result = await editor.client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options={"provider": "scripted", "script": CALLS},
        )
    )


def env() -> dict[str, str]:
    return {"PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


async def test_an_editor_without_change_sets_is_not_offered_rename(tmp_path: Path) -> None:
    root = project(tmp_path)
    async with serving(tmp_path / "state", env=env()) as editor:
        await open_session(editor, root, {"events": True, "approvals": True})
        await editor.run(runId="r1", prompt="rename greet")
        definition, rename = editor.tool_results()
        assert definition.ok and "lib.py:1:5: def greet" in definition.output
        assert not rename.ok and rename.output.startswith("unknown tool 'rename'")
        assert editor.approvals == []
    assert (root / "app.py").read_text() == APP


async def test_an_editor_with_change_sets_is_asked_once_and_edits_its_buffers(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    async with serving(tmp_path / "state", env=env()) as editor:
        await open_session(editor, root, {"events": True, "approvals": True, "changeSets": True})
        await editor.run(runId="r1", prompt="rename greet")
        _, rename = editor.tool_results()
        assert rename.ok, rename.output
        [asked] = editor.approvals
        preview = asked["preview"]
        assert preview["kind"] == "diff" and "proposed" not in preview
        assert "+++ b/app.py" in preview["diff"] and "+++ b/lib.py" in preview["diff"]
        assert asked["title"].startswith("Rename greet → hi in 2 files")
        assert len(editor.applied) == 2  # each file through workspace/applyEdit
    assert (root / "app.py").read_text() == APP.replace("greet", "hi")
    assert (root / "lib.py").read_text() == LIB.replace("greet", "hi")


async def test_a_plain_lsp_client_is_asked_with_the_diff_of_every_file(tmp_path: Path) -> None:
    root = project(tmp_path)
    async with serving(tmp_path / "state", env=env()) as editor:
        await open_session(editor, root, {})  # no Tether plugin: asked by showMessageRequest
        await editor.run(runId="r1", prompt="rename greet")
        [asked] = editor.message_requests
        assert "Rename greet → hi in 2 files" in asked.message
        assert "app.py" in asked.message and "lib.py" in asked.message, asked.message
    assert (root / "app.py").read_text() == APP.replace("greet", "hi")
    assert (root / "lib.py").read_text() == LIB.replace("greet", "hi")
