"""A running command says that it runs: ``tool-progress`` events (the time so far, the last
line it printed) while ``bash`` runs, before its ``tool-result`` — transient: not in the
session log, not in the model's conversation, no ``seq`` of their own.

The command prints a line and then waits on a FIFO the test opens only once it has seen
that line reported: no sleep decides what the test sees."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from tests.fifo import gate as make_gate
from tests.fifo import release
from tests.providers.fakes import FakeApi, Sse, openai_stream

from ..waiting import wait_until
from .conftest import Editor, script
from .test_plain_lsp import HELIX_25_07, command, open_as

COMMAND = "echo compiling part one; echo; read word < gate; echo finished $word"
RUNNING = re.compile(r" · \d+ s · compiling part one$")


def progress(editor: Editor, run_id: str = "r1") -> list[dict[str, Any]]:
    """The ``tool-progress`` events of a run, as sent (camelCase)."""
    return [e.to_wire() for e in editor.events_of(run_id) if e.kind == "tool-progress"]


async def test_a_running_command_reports_its_time_and_last_line_until_its_result(
    editor: Editor, workspace: Path, fake: FakeApi
) -> None:
    gate = make_gate(workspace)
    call = json.dumps({"command": COMMAND})
    fake.queue(
        Sse(openai_stream(calls=[("call_1", "bash", [call])], usage=(10, 5))),
        Sse(openai_stream("Built.", usage=(20, 5))),
    )
    options = {"provider": "openai", "baseUrl": fake.url + "/v1", "model": "gpt-5.4"}
    await editor.open_session(workspace, options={**options, "autoApprove": ["bash"]})
    run = asyncio.create_task(editor.run(prompt="build it", runId="r1"))
    try:
        # The last line printed (not the blank one after it), and the time moving on.
        def reports() -> list[dict[str, Any]]:
            return [p for p in progress(editor) if p["lastLine"] == "compiling part one"]

        await wait_until(lambda: len(reports()) >= 2, "two reports of the line it printed")
        seen = reports()
        assert seen[-1]["elapsedMs"] > seen[0]["elapsedMs"]
        assert {(p["tool"], p["callId"]) for p in seen} == {("bash", "call_1")}
        assert all(p["tail"].startswith("compiling part one\n") for p in seen)
        assert editor.tool_results() == []  # still running
    finally:
        await release(gate)
    result = await asyncio.wait_for(run, 30)
    assert result["outcome"] == "done"

    events = [e.to_wire() for e in editor.events_of("r1")]
    kinds = [e["kind"] for e in events]
    result_at = kinds.index("tool-result")
    assert "tool-progress" not in kinds[result_at:]  # none after the command ended
    assert "finished go" in events[result_at]["output"]
    # Transient: the other events count 1, 2, 3… with no gap; a report repeats the seq of
    # the event before it.
    durable = [e["seq"] for e in events if e["kind"] != "tool-progress"]
    assert durable == list(range(1, len(durable) + 1))
    for before, event in zip(events, events[1:], strict=False):
        if event["kind"] == "tool-progress":
            assert event["seq"] == before["seq"]
    # Not in the session log…
    [log] = (editor.state_dir / "sessions").glob("*.jsonl")
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [x["kind"] for x in logged if "kind" in x and x.get("runId") == "r1"] == [
        k for k in kinds if k != "tool-progress"
    ]
    # …nor in what the model read next: the tool's one result, nothing else added.
    second = fake.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert "finished go" in second[-1]["content"]


async def test_a_client_without_events_sees_the_command_run_in_its_progress(
    editor: Editor, workspace: Path
) -> None:
    """Helix, coc.nvim: no Tether plugin, but ``$/progress`` in the status line."""
    gate = make_gate(workspace)
    turns = script({"toolCalls": [{"name": "bash", "arguments": {"command": COMMAND}}]})
    options = {"provider": "scripted", "script": turns, "autoApprove": ["bash"]}
    await open_as(editor, workspace, HELIX_25_07, options)
    run = asyncio.create_task(command(editor, {"prompt": "build it", "runId": "p1"}))

    def running() -> list[str]:
        reports = editor.client.progress_reports.get("tether-p1", [])
        return [r.message for r in reports if r.kind == "report" and RUNNING.search(r.message)]

    try:
        [said, *_] = await wait_until(running, "a report of the running command")
    finally:
        await release(gate)
    assert said.startswith("step 1 · bash echo compiling part one;"), said
    assert "… · " in said and len(said) < 100, said  # the command cut: a status line is short
    assert (await asyncio.wait_for(run, 30))["outcome"] == "done"
