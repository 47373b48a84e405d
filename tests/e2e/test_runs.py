"""agent/run end to end: outcomes, events, progress, cancel, buffers and concurrency."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from ..waiting import wait_for_run_logged
from .conftest import Editor, script
from .documents import send_did_change_range

READ_APP = {"name": "read_file", "arguments": {"path": "src/app.py"}}


def assert_gapless(editor: Editor, run_id: str) -> None:
    seqs = [e.seq for e in editor.events_of(run_id)]
    assert seqs == list(range(1, len(seqs) + 1))


async def test_done_streams_every_kind_of_event(editor: Editor, workspace: Path) -> None:
    await editor.open_session(
        workspace,
        script=script(
            {"text": "I will read the app.", "toolCalls": [READ_APP]}, {"text": "It greets."}
        ),
    )
    result = await editor.run(prompt="what does app.py do?", runId="r1")
    assert result["outcome"] == "done" and result["steps"] == 2
    assert result["answer"] == "It greets." and result["runId"] == "r1"
    assert result["usage"]["inputTokens"] > 0 and result["usage"]["outputTokens"] > 0
    kinds = editor.kinds("r1")
    assert kinds[0] == "run-started" and kinds[-1] == "run-finished"
    assert kinds.count("step") == 2 and kinds.count("assistant") == 2
    assert kinds.count("text-delta") >= 5  # text arrives as several deltas
    assert {"tool-call", "tool-result", "usage"} <= set(kinds)
    deltas = "".join(e.text for e in editor.events_of("r1") if e.kind == "text-delta")  # type: ignore[union-attr]
    assert deltas == "I will read the app.It greets."
    tool_result = editor.tool_results()[0]
    assert tool_result.ok and "return 'hello ' + name" in tool_result.output
    assert_gapless(editor, "r1")


async def test_the_unsaved_buffer_is_read_instead_of_the_disk(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=script({"toolCalls": [READ_APP]}))
    uri = editor.open_document(workspace / "src" / "app.py", "def greet(name):\n    return name\n")
    send_did_change_range(editor.client, uri, 2, (1, 11), (1, 15), "'héllo 🌍 ' + name  # unsaved")
    # UTF-16: 🌍 is two code units, so "after the globe" is character 21
    send_did_change_range(editor.client, uri, 3, (1, 21), (1, 21), "!")
    await editor.run(prompt="read it", runId="r1")
    output = editor.tool_results()[0].output
    assert "return 'héllo 🌍! ' + name  # unsaved" in output
    assert "hello" not in output


@pytest.mark.parametrize(
    ("turns", "options", "limits", "outcome", "steps"),
    [
        (
            [{"text": "a", "toolCalls": [READ_APP]}],
            {"repeatLast": True},
            {"maxSteps": 2},
            "max-steps",
            2,
        ),
        ([{"text": "again", "toolCalls": [READ_APP]}], {"repeatLast": True}, {}, "no-progress", 3),
        ([{"text": "slow"}], {"delaySeconds": 600}, {"timeoutSeconds": 0.3}, "timeout", 1),
        (
            [{"text": "x" * 400, "toolCalls": [READ_APP]}],
            {"repeatLast": True},
            {"maxTokens": 150},
            "budget",
            1,
        ),
        ([{"text": "hmm", "toolCalls": [READ_APP]}], {}, {}, "done", 2),
    ],
)
async def test_each_outcome_returns_what_the_run_has(
    editor: Editor,
    workspace: Path,
    turns: list[dict[str, Any]],
    options: dict[str, Any],
    limits: dict[str, Any],
    outcome: str,
    steps: int,
) -> None:
    await editor.open_session(workspace, script=script(*turns, **options))
    # A timeout does not wait for the 600 s model: the bound only ends the wait, wide enough
    # for any load.
    result = await asyncio.wait_for(editor.run(prompt="go", runId="r1", limits=limits), 60)
    assert result["outcome"] == outcome
    assert result["steps"] == steps
    assert editor.events_of("r1")[-1].kind == "run-finished"
    assert editor.events_of("r1")[-1].outcome == outcome  # type: ignore[union-attr]
    if outcome == "no-progress":  # the third identical call is not executed
        assert editor.kinds("r1").count("tool-result") == 2
    assert_gapless(editor, "r1")


async def test_provider_failure_ends_in_error(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, options={"script": str(workspace / "missing.json")})
    with pytest.raises(JsonRpcException) as caught:
        await editor.run(prompt="go")
    assert caught.value.code == -32602 and "script" in str(caught.value)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "prompt"),
        ({"prompt": ""}, "prompt"),
        ({"prompt": 5}, "prompt"),
        ({"prompt": "hi", "limits": {"maxSteps": "ten"}}, "limits.maxSteps"),
        ({"prompt": "hi", "provider": "nonesuch"}, "provider"),
        ({"prompt": "hi", "surprise": 1}, "surprise"),
    ],
)
async def test_invalid_params_name_the_field(
    editor: Editor, workspace: Path, params: dict[str, Any], field: str
) -> None:
    await editor.open_session(workspace, script=script())
    with pytest.raises(JsonRpcException) as caught:
        await editor.run(**params)
    assert caught.value.code == -32602
    assert field in str(caught.value)
    assert (await editor.run(prompt="still serving"))["outcome"] == "done"


async def test_a_run_id_already_running_is_refused(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=script({"text": "slow"}, delaySeconds=2))
    first = asyncio.ensure_future(editor.run(prompt="one", runId="same"))
    await editor.wait_for_event("step")
    with pytest.raises(JsonRpcException) as caught:
        await editor.run(prompt="two", runId="same")
    assert caught.value.code == -32602 and "runId" in str(caught.value)
    await editor.client.protocol.send_request_async("agent/cancel", {"runId": "same"})
    assert (await first)["outcome"] == "cancelled"


async def cancel_after_first_step(editor: Editor, how: str) -> dict[str, Any]:
    token = "tok-1"
    editor.client.progress_reports.setdefault(token, [])
    params = {"prompt": "wait", "runId": "r1", "workDoneToken": token}
    task = asyncio.ensure_future(
        editor.client.protocol.send_request_async("agent/run", params, msg_id="req-1")
    )
    await editor.wait_for_event("step")
    if how == "agent/cancel":
        answer = await editor.client.protocol.send_request_async("agent/cancel", {"runId": "r1"})
        assert answer == {"cancelled": True}
    elif how == "progress":
        editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token))
    elif how == "command":
        await editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tether.cancel", arguments=[{"runId": "r1"}])
        )
    else:
        editor.client.cancel_request(types.CancelParams(id="req-1"))
    # The contract says 1 s (the real number is benchmarks' "cancel" scenario); a cancel that
    # waited for the 600 s model fails here, and no load comes near the bound.
    return await asyncio.wait_for(task, 60)


@pytest.mark.parametrize("how", ["agent/cancel", "progress", "$/cancelRequest", "command"])
async def test_cancel_stops_the_run_within_a_second(
    editor: Editor, workspace: Path, how: str
) -> None:
    await editor.open_session(workspace, script=script({"text": "slow"}, delaySeconds=600))
    result = await cancel_after_first_step(editor, how)
    assert result["outcome"] == "cancelled" and result["runId"] == "r1"
    assert editor.events_of("r1")[-1].kind == "run-finished"
    assert [r.kind for r in editor.client.progress_reports["tok-1"]][-1] == "end"


async def test_progress_on_the_clients_token(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=script({"toolCalls": [READ_APP]}))
    editor.client.progress_reports.setdefault("mine", [])
    await editor.run(prompt="read the app please", runId="r1", workDoneToken="mine")
    reports = editor.client.progress_reports["mine"]
    assert [r.kind for r in reports] == ["begin", "report", "report", "report", "end"]
    begin = reports[0]
    assert begin.title == "Tether" and begin.cancellable is True
    assert begin.message == "read the app please"
    assert reports[2].message == "step 1 · read_file src/app.py"
    assert reports[-1].message == "done"


async def test_progress_on_a_server_created_token(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=script({"text": "hi"}))
    await editor.run(prompt="hello", runId="r1")
    assert list(editor.client.progress_reports) == ["tether-r1"]
    assert [r.kind for r in editor.client.progress_reports["tether-r1"]] == [
        "begin",
        "report",
        "end",
    ]


async def test_two_concurrent_runs_are_isolated(editor: Editor, workspace: Path) -> None:
    (workspace / "b.txt").write_text("bee\n")
    await editor.open_session(
        workspace,
        script=script(
            {"text": "reading", "toolCalls": [READ_APP]}, {"text": "done"}, delaySeconds=0.3
        ),
    )
    one, two = await asyncio.gather(
        editor.run(prompt="first", runId="a"), editor.run(prompt="second", runId="b")
    )
    # Both ran at once: each had stepped before either finished (timings: "concurrency" bench).
    order = [(e.run_id, e.kind) for e in editor.events]
    first_end = min(order.index((run_id, "run-finished")) for run_id in ("a", "b"))
    assert {run_id for run_id, kind in order[:first_end] if kind == "step"} == {"a", "b"}
    assert one["outcome"] == two["outcome"] == "done"
    assert one["sessionId"] != two["sessionId"]
    for run_id in ("a", "b"):
        assert_gapless(editor, run_id)
        assert editor.kinds(run_id).count("step") == 2


async def test_tether_run_command_for_plain_lsp_clients(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, events=False, script=script({"text": "hi there"}))
    result = await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="tether.run", arguments=[{"prompt": "hello", "runId": "c1"}]
        )
    )
    assert result["outcome"] == "done" and result["answer"] == "hi there"
    assert editor.events == []  # the client did not declare events


async def test_session_log_holds_every_event(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=script({"toolCalls": [READ_APP]}, {"text": "ok"}))
    result = await editor.run(prompt="go", runId="r1")
    log = editor.state_dir / "sessions" / f"{result['sessionId']}.jsonl"
    await wait_for_run_logged(log, "r1")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    lines = [x for x in lines if "record" not in x]  # events; the rest rebuilds the history
    assert [x["seq"] for x in lines] == [e.seq for e in editor.events_of("r1")]
    assert lines[-1] == editor.events_of("r1")[-1].model_dump(
        mode="json", by_alias=True, exclude_none=True
    )


async def test_settings_change_applies_to_later_runs(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=script({"text": "first"}))
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"tether": {"script": script({"text": "second"}), "maxSteps": 3}}
        )
    )
    assert (await editor.run(prompt="go"))["answer"] == "second"


@pytest.mark.parametrize(
    "path", ["../outside.txt", "/etc/passwd", "link-out/secret.txt", "src/../../outside.txt"]
)
async def test_paths_outside_the_workspace_are_refused(
    editor: Editor, workspace: Path, path: str
) -> None:
    outside = workspace.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET\n")
    (workspace.parent / "outside.txt").write_text("TOP SECRET\n")
    (workspace / "link-out").symlink_to(outside)
    call = {"name": "read_file", "arguments": {"path": path}}
    await editor.open_session(workspace, script=script({"toolCalls": [call]}, {"text": "ok"}))
    result = await editor.run(prompt="read it", runId="r1")
    assert result["outcome"] == "done"
    tool_result = editor.tool_results()[0]
    assert not tool_result.ok
    assert "outside the workspace" in (tool_result.error or "")
    assert "TOP SECRET" not in tool_result.output


@pytest.mark.parametrize("profile", ["neovim", "vscode"])
async def test_a_run_with_each_editors_capabilities(
    editor: Editor, workspace: Path, profile: str
) -> None:
    await editor.open_session(
        workspace, profile=profile, script=script({"toolCalls": [READ_APP]}, {"text": "ok"})
    )
    result = await editor.run(
        prompt="go", runId="r1", context={"uri": (workspace / "src" / "app.py").as_uri()}
    )
    assert result["outcome"] == "done"
    assert editor.kinds("r1")[-1] == "run-finished"
    assert [r.kind for r in editor.client.progress_reports["tether-r1"]][-1] == "end"
