"""A background job's output viewed live by a person (``agent/jobOutput``): the view reads
the same ring the model's ``job_output`` reads, from a position the caller keeps, so the
view and the model each see everything the job printed, and neither moves the other.

Against the real server with the scripted model; the job waits on files the test writes,
so each line arrives when the test says."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

from ..waiting import wait_until
from .conftest import Editor, script
from .test_jobs import NEAR_MISSES, WAIT, bash, job_output, request

VIEW_WAIT = 20  # an agent/jobOutput's waitSeconds: it answers as soon as output comes
STEPPED = (
    "echo line-1; while [ ! -e go ]; do sleep 0.02; done; echo line-2; "
    "while [ ! -e end ]; do sleep 0.02; done; echo line-3"
)


async def view(
    editor: Editor, session_id: str, since: int | None = None, wait: float = 0
) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": session_id, "jobId": "job-1"}
    if since is not None:
        params["since"] = since
    if wait:
        params["waitSeconds"] = wait
    answer = await request(editor, "agent/jobOutput", params)
    assert isinstance(answer, dict)
    return answer


async def started_session(editor: Editor) -> str:
    event = await editor.wait_for_event("run-started")
    session_id = event.to_wire()["sessionId"]
    assert isinstance(session_id, str)
    return session_id


async def test_the_view_and_the_model_each_see_all_the_output(
    editor: Editor, workspace: Path
) -> None:
    turns = script(
        {"toolCalls": [bash(STEPPED, background=True)]},
        {"toolCalls": [{**job_output("job-1", until="line-2", wait_seconds=WAIT)}]},
    )
    await editor.open_session(workspace, script=turns, options={"maxSteps": 4})
    run = asyncio.ensure_future(editor.run(prompt="go", runId="r1"))
    try:
        session_id = await started_session(editor)
        await wait_until(lambda: editor.tool_results(), "the job's start")

        seen: list[dict[str, Any]] = []

        async def read_until(text: str, since: int | None) -> dict[str, Any]:
            for _ in range(20):  # each read waits until something new was printed
                answer = await view(editor, session_id, since, wait=VIEW_WAIT)
                seen.append(answer)
                if text in answer["text"]:
                    return answer
                since = answer["next"]
            raise AssertionError(f"{text!r} never came; the view read {seen}")

        first = await read_until("line-1", None)
        assert first["state"] == "running" and "exitCode" not in first
        (workspace / "go").touch()
        second = await read_until("line-2", first["next"])
        assert "line-1" not in second["text"]  # the view's read goes on from its position
        # The model's wait was not taken from by the view: it gets both lines.
        result = await asyncio.wait_for(run, 60)
        assert result["outcome"] == "done", result
        _, waited = editor.tool_results()
        assert "line-1" in waited.output and "line-2" in waited.output, waited.output
        # ... and the model's read took nothing from the view: from 0, everything.
        again = await view(editor, session_id, 0)
        assert again["text"] == "line-1\nline-2\n", again
        (workspace / "end").touch()
        ended = await read_until("line-3", second["next"])
        while ended["state"] == "running":
            ended = await view(editor, session_id, ended["next"], wait=VIEW_WAIT)
        assert ended["state"] == "exited" and ended["exitCode"] == 0, ended
        assert (await view(editor, session_id, ended["next"]))["text"] == ""
    finally:
        run.cancel()


async def test_the_view_shows_output_escaped_line_by_line(editor: Editor, workspace: Path) -> None:
    hostile = r"printf 'ok\n\033[2J\033]0;title\007 a\u202eb\u200bc\r\ndone\n'"
    turns = script({"toolCalls": [bash(hostile, background=True)]})
    await editor.open_session(workspace, script=turns)
    result = await asyncio.wait_for(editor.run(prompt="go", runId="r1"), 60)
    answer = await view(editor, result["sessionId"], 0)
    text = answer["text"]
    assert not any(c in text for c in "\x1b\x07\u202e\u200b\r"), repr(text)
    assert text.startswith("ok\n\\x1b[2J") and "\\u202eb" in text and text.endswith("c\ndone\n")


async def test_bad_view_requests_are_clear_errors(editor: Editor, workspace: Path) -> None:
    turns = script({"toolCalls": [bash("echo pid-$$; exec sleep 300", background=True)]})
    await editor.open_session(workspace, script=turns)
    mine = (await asyncio.wait_for(editor.run(prompt="go", runId="r1"), 60))["sessionId"]
    other = (await asyncio.wait_for(editor.run(prompt="again", runId="r2"), 60))["sessionId"]
    assert other != mine
    await wait_until(lambda: len(editor.tool_results("r2")) == 1, "the other session's job")
    for params, words in [
        ({"sessionId": "s-nowhere", "jobId": "job-1"}, "no session s-nowhere"),
        ({"sessionId": mine, "jobId": "job-7"}, "no job job-7 in session"),
        ({"sessionId": mine, "jobId": "JOB-1"}, "no job JOB-1 in session"),
        ({"sessionId": mine, "jobId": "job-1", "since": -1}, "since"),
        ({"sessionId": mine, "jobId": "job-1", "since": 10**6}, "since"),
        ({"sessionId": mine}, "jobId"),
        ({"jobId": "job-1"}, "sessionId"),
        ({"sessionId": mine, "jobId": "job-1", "extra": 1}, "extra"),
    ]:
        try:
            await request(editor, "agent/jobOutput", params)
        except Exception as exc:  # the JSON-RPC error
            assert words in str(exc), (params, exc)
        else:
            raise AssertionError(f"{params} was accepted")
    # Near-miss spellings of the id and random strings reach no job; the server answers each.
    rng = random.Random(47)
    alphabet = "job-1J \u200b\u202e\x00\n*./é"
    randoms = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(30)]
    for job in [*NEAR_MISSES, *(r for r in randoms if r != "job-1")]:
        try:
            await request(editor, "agent/jobOutput", {"sessionId": mine, "jobId": job})
        except Exception as exc:  # the JSON-RPC error: no such job, or an id too long or empty
            assert "no job" in str(exc) or "jobId" in str(exc), (job, exc)
        else:
            raise AssertionError(f"{job!r} reached a job")
    # Each session has its own job-1 (the script plays again): each id reaches its own.
    here = (await view(editor, mine, 0, wait=VIEW_WAIT))["text"]
    there = (await view(editor, other, 0, wait=VIEW_WAIT))["text"]
    assert here.startswith("pid-") and there.startswith("pid-") and here != there
    # The server kept serving, and the jobs are untouched.
    for session in (mine, other):
        stopped = await request(editor, "agent/jobStop", {"sessionId": session, "jobId": "job-1"})
        assert stopped["stopped"] is True
