"""The code tools in ``tether acp``: answered by basedpyright (found on ``PATH``), a rename
asked once with every file's diff shown and written through the editor, the language server
ended with the agent."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .recorder import EDITOR, RecordingClient
from .tether import EOF_WITHIN, call, tether_acp, turns

VENV_BIN = str(Path(sys.executable).parent)
LIB = 'def greet(name: str) -> str:\n    return f"hello {name}"\n'
APP = 'from lib import greet\n\nprint(greet("you"))\n'


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "lib.py").write_text(LIB)
    (folder / "app.py").write_text(APP)
    return folder


def language_servers_of(home: Path) -> list[int]:
    """Live basedpyright processes started with this test's home folder."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            mine = f"HOME={home}".encode() in (entry / "environ").read_bytes().split(b"\0")
            if mine and b"basedpyright" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


async def test_definition_and_a_two_file_rename_in_tether_acp(root: Path, tmp_path: Path) -> None:
    script = turns(
        {"tool_calls": [call("definition", path="app.py", line=3, symbol="greet")]},
        {"tool_calls": [call("rename", path="app.py", line=3, symbol="greet", new_name="hi")]},
        {"text": "Renamed."},
    )
    client = RecordingClient(capabilities=EDITOR)
    path = f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    async with tether_acp(root, tmp_path, script, client, PATH=path) as agent:
        session = await agent.new_session(root)
        answer = await agent.prompt(session, "rename greet")
        assert answer["stopReason"] == "end_turn"
        done = [
            u.update
            for u in client.updates
            if u.kind == "tool_call_update" and u.update.get("status") == "completed"
        ]
        texts = [
            c["content"]["text"]
            for u in done
            for c in u.get("content", [])
            if c.get("type") == "content"
        ]
        assert any("lib.py:1:5: def greet(name: str) -> str:" in t for t in texts), texts
        [asked] = client.permissions
        assert asked.tool_call["title"].startswith("Rename greet → hi in 2 files")
        [shown] = asked.tool_call["content"]
        diff = shown["content"]["text"]
        assert "+++ b/app.py" in diff and "+++ b/lib.py" in diff and "+def hi(name" in diff
        written = dict(client.writes)
        assert written[str(root / "app.py")] == APP.replace("greet", "hi")
        assert written[str(root / "lib.py")] == LIB.replace("greet", "hi")
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
    assert language_servers_of(tmp_path / "home") == []
