"""A session's MCP servers are waited for before its first model call, and the wait is shown.

The server here (``recording_server.py`` with ``GATE``) answers nothing until the test opens
its FIFO: the test releases it only once it has seen the wait reported, so no sleep decides
what it sees. Through the real ``tether serve`` and the fake OpenAI API: the first model
request has the slow server's tools, after ``tool-progress`` reports that name it; a cancel
during the wait ends the run without a model call; a server that does not start within its
``startupTimeoutSeconds`` leaves the prompt to run without it, and the model is told which.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

from tests.providers.fakes import FakeApi, Recorded, Sse, openai_stream
from tether_protocol import ToolProgressEvent

from ..fifo import gate, release
from ..waiting import wait_until
from .conftest import Editor
from .test_plain_lsp import HELIX_25_07, command, open_as

RECORDER = Path(__file__).parents[1] / "mcp" / "recording_server.py"
WAITED = re.compile(r"^waiting for MCP server slow to start \(\d+ s\)$")
WITHIN = 30.0
"""A bound on each wait, never a timing assertion (a loaded 2-core machine)."""


def slow_server(marks: Path, fifo: Path, startup: float) -> dict[str, Any]:
    """The recording server, held at its start until ``fifo`` is opened."""
    return {
        "command": sys.executable,
        "args": [str(RECORDER)],
        "env": {"MARKS": str(marks), "TAG": "slow", "GATE": str(fifo)},
        "startupTimeoutSeconds": startup,
    }


def settings(fake: FakeApi, server: dict[str, Any]) -> dict[str, Any]:
    return {
        "provider": "openai",
        "baseUrl": fake.url + "/v1",
        "model": "gpt-5.4",
        "mcpServers": {"slow": server},
    }


def folders(tmp_path: Path) -> tuple[Path, Path]:
    """The server's marks folder and its gate (a FIFO)."""
    marks = tmp_path / "marks"
    marks.mkdir()
    return marks, gate(tmp_path)


def waiting(editor: Editor, run_id: str) -> list[ToolProgressEvent]:
    """The run's reports that it waits for the slow server."""
    return [
        e
        for e in editor.events_of(run_id)
        if isinstance(e, ToolProgressEvent) and "MCP server slow" in e.last_line
    ]


def tools_of(request: Recorded) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools", [])]


def system_of(request: Recorded) -> str:
    first = request.body["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


async def test_the_first_prompt_waits_for_a_slow_server_and_has_its_tools(
    editor: Editor, workspace: Path, tmp_path: Path, fake: FakeApi
) -> None:
    marks, fifo = folders(tmp_path)
    fake.queue(Sse(openai_stream("Noted.", usage=(10, 5))))
    await editor.open_session(workspace, options=settings(fake, slow_server(marks, fifo, 90)))
    run = asyncio.create_task(editor.run(prompt="list my notes", runId="r1"))
    try:
        [seen, *_] = await wait_until(lambda: waiting(editor, "r1"), "the wait reported", WITHIN)
        assert seen.last_line == "waiting for MCP server slow to start"
        assert fake.requests == []  # the model is not asked meanwhile
    finally:
        await release(fifo, WITHIN)
    result = await asyncio.wait_for(run, WITHIN)
    assert result["outcome"] == "done"
    [request] = fake.requests
    assert "mcp__slow__echo" in tools_of(request)
    assert "slow" not in system_of(request)  # nothing missing to tell
    kinds = editor.kinds("r1")
    assert kinds.index("run-started") < kinds.index("tool-progress") < kinds.index("step")


async def test_a_cancel_during_the_wait_ends_the_run_at_once_without_a_model_call(
    editor: Editor, workspace: Path, tmp_path: Path, fake: FakeApi
) -> None:
    marks, fifo = folders(tmp_path)
    await editor.open_session(workspace, options=settings(fake, slow_server(marks, fifo, 90)))
    run = asyncio.create_task(editor.run(prompt="list my notes", runId="r1"))
    try:
        await wait_until(lambda: waiting(editor, "r1"), "the wait reported", WITHIN)
        await editor.client.protocol.send_request_async("agent/cancel", {"runId": "r1"})
        # The wait would last 30 s (the server's startup allows 90): well before that.
        result = await asyncio.wait_for(run, 20)
    finally:
        await release(fifo, WITHIN)
    assert result["outcome"] == "cancelled"
    assert fake.requests == []
    assert editor.kinds("r1")[-1] == "run-finished"


async def test_a_server_that_does_not_start_in_time_leaves_the_prompt_to_run_without_it(
    editor: Editor, workspace: Path, tmp_path: Path, fake: FakeApi
) -> None:
    marks, fifo = folders(tmp_path)  # never released: its startup timeout (1 s) ends it
    fake.queue(Sse(openai_stream("Without notes.", usage=(10, 5))))
    await editor.open_session(workspace, options=settings(fake, slow_server(marks, fifo, 1)))
    result = await asyncio.wait_for(editor.run(prompt="list my notes", runId="r1"), WITHIN)
    assert result["outcome"] == "done"
    [request] = fake.requests
    assert not [name for name in tools_of(request) if name.startswith("mcp__")]
    system = system_of(request)
    assert 'MCP server "slow"' in system and "not available" in system, system
    await wait_until(
        lambda: [m for m in editor.client.messages if "'slow' did not start" in m.message],
        f"the user told that the server did not start: {editor.client.messages}",
        WITHIN,
    )


async def test_a_client_without_events_sees_the_wait_in_its_progress(
    editor: Editor, workspace: Path, tmp_path: Path, fake: FakeApi
) -> None:
    """Helix, coc.nvim: no Tether plugin, but ``$/progress`` in the status line."""
    marks, fifo = folders(tmp_path)
    fake.queue(Sse(openai_stream("Noted.", usage=(10, 5))))
    await open_as(editor, workspace, HELIX_25_07, settings(fake, slow_server(marks, fifo, 90)))
    run = asyncio.create_task(command(editor, {"prompt": "list my notes", "runId": "p1"}))

    def waited() -> list[str]:
        reports = editor.client.progress_reports.get("tether-p1", [])
        return [r.message for r in reports if r.kind == "report" and WAITED.match(r.message)]

    try:
        await wait_until(waited, "a report of the wait", WITHIN)
    finally:
        await release(fifo, WITHIN)
    assert (await asyncio.wait_for(run, WITHIN))["outcome"] == "done"
    [request] = fake.requests
    assert "mcp__slow__echo" in tools_of(request)
