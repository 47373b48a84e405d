"""Hostile patterns never freeze the server (issue 12, item 1).

A model calling ``search`` with ``^(\\w+\\s?)*$``, ``list_files`` with a glob of many stars,
or a cloned repository whose ``.gitignore`` holds such a glob: with a backtracking matcher
(Python ``re``, holding the GIL) the whole server stopped answering and neither
``agent/cancel`` nor ``timeoutSeconds`` could end the run. Here each one runs through the real
server: the tool answers, another request is answered while the run goes on, and the run
ends ``cancelled`` on ``agent/cancel`` and ``timeout`` on ``timeoutSeconds``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol.converters import get_converter
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

from tether_protocol import ToolResultEvent

from .conftest import SERVER, Editor, script, server_env

# Exponential for a backtracking engine (2^34 ways to split the a's), linear for RE2.
HOSTILE_REGEX = r"^(\w+\s?)*$"
# Fourteen stars against a 200-character name: C(200, 14) ways to place them.
HOSTILE_GLOB = "*a" * 14 + "*!"
LONG_NAME = "a" * 200
# How long another request may take to be answered while the run goes on. A frozen server
# (a backtracking matcher: hours for these patterns) never answers, so the bound only ends
# the wait; it is wide because a loaded 2-core machine is slow, not because Tether may be.
ANSWER_WITHIN = 60


EditorFactory = Callable[[dict[str, str]], Awaitable[Editor]]


@pytest_asyncio.fixture
async def start_editor(tmp_path: Path) -> AsyncIterator[EditorFactory]:
    """Starts the real server with extra environment variables (conftest's has none)."""
    started: list[Editor] = []

    async def start(extra_env: dict[str, str]) -> Editor:
        client = LanguageClient(converter_factory=get_converter)
        register_lsp_features(client)
        state_dir = tmp_path / f"state{len(started)}"
        await client.start_io(*SERVER, env={**server_env(state_dir), **extra_env})
        started.append(Editor(client, state_dir))
        return started[-1]

    yield start
    for editor in started:
        try:
            if editor.init_result is not None and editor.client.error is None:
                await asyncio.wait_for(editor.client.shutdown_session(), 10)
        except TimeoutError:
            pass  # a frozen server (the failure the test reports): it is killed below
        finally:
            # A frozen server never exits and client.stop() would wait for it forever.
            server = editor.client._server
            if server is not None and server.returncode is None:
                server.kill()
            await asyncio.wait_for(editor.client.stop(), 10)


def hostile_workspace(tmp_path: Path) -> Path:
    """notes.txt with the catastrophic line (and one rg finds, so rg passes the file on),
    a file with a long name, and a .gitignore of many stars."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("a" * 34 + "!\nok\n")
    (root / LONG_NAME).write_text("long-name\n")
    (root / "clone").mkdir()
    (root / "clone" / ".gitignore").write_text(HOSTILE_GLOB + "\n")
    (root / "clone" / LONG_NAME).write_text("long-name\n")
    return root


# (tool call, what its output shows): the results are right, not just quick.
CASES = {
    "search": (
        {"name": "search", "arguments": {"pattern": HOSTILE_REGEX}},
        ["notes.txt:2: ok"],
    ),
    "list_files-glob": (
        {"name": "list_files", "arguments": {"pattern": HOSTILE_GLOB}},
        ["No files found in the workspace root matching '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*!'."],
    ),
    "gitignore": (
        {"name": "list_files", "arguments": {"path": "clone"}},
        ["clone/.gitignore", f"clone/{LONG_NAME}"],
    ),
}
ENGINES = {"rg": {}, "python": {"TETHER_SEARCH_ENGINE": "python"}}
KEEPS_GOING = {"name": "bash", "arguments": {"command": "sleep 300"}}
"""A call that lasts until the run is cancelled (the editor allows it)."""


async def answered_soon(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    """The answer to a request, which must come within ``ANSWER_WITHIN`` seconds."""
    request = editor.client.protocol.send_request_async(method, params)
    return await asyncio.wait_for(request, ANSWER_WITHIN)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES)
async def test_hostile_pattern_answers_and_cancel_ends_the_run(
    start_editor: EditorFactory, tmp_path: Path, case: str, engine: str
) -> None:
    call, expected = CASES[case]
    editor = await start_editor(ENGINES[engine])
    # The second turn's command keeps the run going after the tool call until it is
    # cancelled, however long the answers below take.
    await editor.open_session(
        hostile_workspace(tmp_path),
        script=script({"toolCalls": [call]}, {"toolCalls": [KEEPS_GOING]}),
    )
    run = asyncio.ensure_future(editor.run(prompt="look", runId="r1"))
    result = await editor.wait_for_event("tool-result")  # within 10 s, or the tool froze
    assert isinstance(result, ToolResultEvent) and result.ok, result
    assert result.output.split("\n") == expected

    sessions = await answered_soon(editor, "agent/sessions", {})
    assert "sessions" in sessions
    assert not run.done()  # answered while the run was still going
    assert await answered_soon(editor, "agent/cancel", {"runId": "r1"}) == {"cancelled": True}
    outcome = await asyncio.wait_for(run, ANSWER_WITHIN)
    assert outcome["outcome"] == "cancelled"
    assert editor.events_of("r1")[-1].kind == "run-finished"


@pytest.mark.parametrize("case", CASES)
async def test_hostile_pattern_cannot_outlive_the_timeout(
    start_editor: EditorFactory, tmp_path: Path, case: str
) -> None:
    call, _ = CASES[case]
    editor = await start_editor(ENGINES["python"])
    # Each later turn asks something new (no "no-progress"); together they outlast 2 s.
    later = [
        {"toolCalls": [{"name": "list_files", "arguments": {"pattern": f"x{n}*"}}]}
        for n in range(8)
    ]
    await editor.open_session(
        hostile_workspace(tmp_path), script=script({"toolCalls": [call]}, *later, delaySeconds=0.5)
    )
    run = editor.run(prompt="look", runId="r1", limits={"timeoutSeconds": 2})
    outcome = await asyncio.wait_for(run, 2 + ANSWER_WITHIN)  # frozen: never
    assert outcome["outcome"] == "timeout"
    first = next(e for e in editor.events_of("r1") if isinstance(e, ToolResultEvent))
    assert first.tool == call["name"] and first.ok
