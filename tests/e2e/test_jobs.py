"""Background jobs: ``bash`` with ``background: true`` answers at once with a job id and
what the command printed so far, and the command keeps running; ``job_output`` returns
what it printed since, waking as soon as ``until`` matches or the job ends; ``job_stop``
ends it and every process it started. A job ends with its session or the server.

Against the real server with the scripted model. Waits are bounded by the test's own
``wait_for``s; a job's ``wait_seconds`` is never what decides an outcome."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from tether.sandbox import Backend

from ..sandboxes import BACKENDS, require_backend
from ..waiting import wait_until
from .conftest import Editor, script, serving

WAIT = 100  # a job_output's wait_seconds: far beyond what any of these takes


def bash(command: str, **extra: Any) -> dict[str, Any]:
    return {"name": "bash", "arguments": {"command": command, **extra}}


def job_output(job: str, **extra: Any) -> dict[str, Any]:
    return {"name": "job_output", "arguments": {"job": job, **extra}}


def job_stop(job: str) -> dict[str, Any]:
    return {"name": "job_stop", "arguments": {"job": job}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


async def run_calls(editor: Editor, workspace: Path, *calls: dict[str, Any]) -> list[Any]:
    """One run whose model makes ``calls``, one a turn; its tool results."""
    turns = script(*({"toolCalls": [c]} for c in calls))
    await editor.open_session(workspace, script=turns, options={"maxSteps": len(calls) + 2})
    try:
        result = await asyncio.wait_for(editor.run(prompt="go", runId="r1"), 90)
    except TimeoutError:
        raise AssertionError(f"the run did not end; its events: {editor.events}") from None
    assert result["outcome"] == "done", result
    return editor.tool_results()


async def test_a_server_started_in_the_background_is_waited_for_queried_and_stopped(
    editor: Editor, workspace: Path
) -> None:
    port = free_port()
    fetch = (
        'python3 -c "import urllib.request as u; '
        f"print('status', u.urlopen('http://127.0.0.1:{port}/').status)\""
    )
    started, waited, fetched, stopped = await run_calls(
        editor,
        workspace,
        bash(f"python3 -u -m http.server {port} --bind 127.0.0.1", background=True),
        job_output("job-1", until="Serving HTTP", wait_seconds=WAIT),
        bash(fetch),
        job_stop("job-1"),
    )
    assert started.ok and "job-1" in started.output, started.output
    assert "running" in started.output
    assert waited.ok and "Serving HTTP" in waited.output, waited.output
    assert "running" in waited.output
    assert fetched.ok and "status 200" in fetched.output, fetched.output
    assert stopped.ok and "stopped" in stopped.output, stopped.output
    assert "GET / HTTP" in stopped.output  # what it printed since, the request's log line
    assert not listening(port)


async def test_job_output_returns_when_the_job_ends_with_its_exit_code(
    editor: Editor, workspace: Path
) -> None:
    started, ended, again = await run_calls(
        editor,
        workspace,
        bash("echo first; read -r go < /dev/null; echo second; exit 3", background=True),
        job_output("job-1", until="never printed", wait_seconds=WAIT),
        job_output("job-1"),
    )
    assert started.ok and "job-1" in started.output
    assert "exited with code 3" in ended.output, ended.output
    assert "second" in ended.output
    assert "exited with code 3" in again.output and "(no new output)" in again.output


async def test_bad_calls_get_clear_errors_and_the_job_runs_on(
    editor: Editor, workspace: Path
) -> None:
    results = await run_calls(
        editor,
        workspace,
        bash("echo $$ > pid; echo up; exec sleep 300", background=True),
        job_output("job-9"),
        job_stop("job-9"),
        job_output("job-1", until="(unclosed", wait_seconds=1),
        job_output("job-1", until="(?=look)", wait_seconds=1),
        job_output("job-1", wait_seconds=121),
        job_output("job-1", wait_seconds=-1),
        job_output("job-1", until="up", wait_seconds=WAIT),
    )
    started, unknown, unknown_stop, unclosed, lookahead, too_long, negative, fine = results
    assert started.ok
    assert not unknown.ok and "no job job-9 in this session" in unknown.output
    assert "job-1" in unknown.output  # the jobs there are
    assert not unknown_stop.ok and "no job job-9" in unknown_stop.output
    assert not unclosed.ok and "until" in unclosed.output
    assert not lookahead.ok and "look-ahead is not supported" in lookahead.output
    assert not too_long.ok and "wait_seconds" in too_long.output
    assert not negative.ok and "wait_seconds" in negative.output
    assert fine.ok and "up" in fine.output and "running" in fine.output
    pid = int((workspace / "pid").read_text())
    assert not gone(pid)  # still running: the bad calls did nothing to it


async def test_a_job_that_floods_is_kept_bounded(editor: Editor, workspace: Path) -> None:
    started, flood = await run_calls(
        editor,
        workspace,
        bash("yes flood | head -c 5000000; echo; echo the end", background=True),
        job_output("job-1", until="the end", wait_seconds=WAIT),
    )
    assert started.ok
    assert "the end" in flood.output and "characters" in flood.output and "cut" in flood.output
    assert len(flood.output) < 40_000


async def test_job_stop_ends_what_the_job_started_daemons_included(
    editor: Editor, workspace: Path
) -> None:
    daemon = "setsid sh -c 'echo $$ > daemon; exec sleep 300' < /dev/null > /dev/null 2>&1 &"
    _, waited, stopped = await run_calls(
        editor,
        workspace,
        bash(f"{daemon} echo started; exec sleep 300", background=True),
        job_output("job-1", until="started", wait_seconds=WAIT),
        job_stop("job-1"),
    )
    assert waited.ok and stopped.ok
    pid = await wait_until(
        lambda: (workspace / "daemon").is_file() and (workspace / "daemon").read_text().strip(),
        "the daemon's pid",
    )
    await wait_until(lambda: gone(int(pid)), "the daemon gone")


async def test_at_most_the_set_number_of_jobs_run_at_once(tmp_path: Path, workspace: Path) -> None:
    (tmp_path / "config" / "tether").mkdir(parents=True)
    (tmp_path / "config" / "tether" / "config.toml").write_text("maxBackgroundJobs = 2\n")
    async with serving(tmp_path / "state") as editor:
        results = await run_calls(
            editor,
            workspace,
            bash("exec sleep 301", background=True),
            bash("exec sleep 302", background=True),
            bash("exec sleep 303", background=True),
            job_stop("job-1"),
            bash("echo again; exec sleep 300", background=True),
        )
    first, second, third, stop, fourth = results
    assert first.ok and second.ok
    assert not third.ok and "2 background jobs" in third.output, third.output
    assert stop.ok
    assert fourth.ok and "job-3" in fourth.output, fourth.output


async def test_every_job_ends_with_the_server(tmp_path: Path, workspace: Path) -> None:
    async with serving(tmp_path / "state") as editor:
        await run_calls(
            editor,
            workspace,
            bash("echo $$ > pid; exec sleep 300", background=True),
            bash("sleep 300 & echo $! > pid2; echo started; wait", background=True),
        )
        pid = int((workspace / "pid").read_text())
        pid2 = int((workspace / "pid2").read_text())
        assert not gone(pid) and not gone(pid2)  # the run ended, its jobs run on
    await wait_until(lambda: gone(pid) and gone(pid2), "every job's process gone")


async def test_asking_a_job_again_and_again_is_not_going_round_in_circles(
    editor: Editor, workspace: Path
) -> None:
    """The same ``job_output`` call answers differently as the job goes on: a run that
    polls a job (the model's choice) is not ended ``no-progress`` on the third one."""
    results = await run_calls(
        editor,
        workspace,
        bash("echo one; exec sleep 300", background=True),
        *[job_output("job-1")] * 4,
    )
    assert [r.ok for r in results] == [True] * 5
    assert "one" in results[1].output and "(no new output)" in results[4].output


async def request(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    return await editor.client.protocol.send_request_async(method, params)


async def test_the_user_lists_and_stops_a_job_left_running_after_the_run(
    editor: Editor, workspace: Path
) -> None:
    await run_calls(
        editor,
        workspace,
        bash("echo $$ > pid; echo 'listening on :8000'; exec sleep 300", background=True),
        bash("echo short; exit 4", background=True),
    )
    session_id = editor.events[0].to_wire()["sessionId"]
    pid = int((workspace / "pid").read_text())

    def listed() -> Any:
        return request(editor, "agent/jobs", {})

    jobs = (await listed())["jobs"]
    by_id = {j["jobId"]: j for j in jobs}
    assert set(by_id) == {"job-1", "job-2"}
    first = by_id["job-1"]
    assert first["sessionId"] == session_id and first["state"] == "running"
    assert first["command"].startswith("echo $$ > pid") and first["runtimeSeconds"] >= 0
    assert first["lastLine"] == "listening on :8000"
    assert by_id["job-2"]["state"] == "exited" and by_id["job-2"]["exitCode"] == 4
    one = await request(editor, "agent/jobs", {"sessionId": session_id})
    assert [j["jobId"] for j in one["jobs"]] == ["job-1", "job-2"]
    assert (await request(editor, "agent/jobs", {"sessionId": "s-other"}))["jobs"] == []

    listing = await request(editor, "agent/command", {"name": "jobs", "sessionId": session_id})
    assert "job-1 · running" in listing["message"] and "listening on :8000" in listing["message"]
    assert "job-2 · exited 4" in listing["message"]

    unknown = await request(editor, "agent/jobStop", {"sessionId": session_id, "jobId": "job-7"})
    assert unknown == {"stopped": False}
    elsewhere = await request(editor, "agent/jobStop", {"sessionId": "s-other", "jobId": "job-1"})
    assert elsewhere == {"stopped": False}
    assert not gone(pid)

    stopped = await request(editor, "agent/jobStop", {"sessionId": session_id, "jobId": "job-1"})
    assert stopped["stopped"] is True and stopped["job"]["state"] == "stopped"
    await wait_until(lambda: gone(pid), "the stopped job's process gone")
    again = await request(
        editor, "agent/command", {"name": "jobs", "sessionId": session_id, "argument": "stop job-1"}
    )
    assert again["message"].startswith("not running: job-1 · stopped")


async def test_bad_job_requests_are_refused_naming_the_field(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace)
    for params, field in [
        ({"jobId": "job-1"}, "sessionId"),
        ({"sessionId": "s-1"}, "jobId"),
        ({"sessionId": "s-1", "jobId": ""}, "jobId"),
        ({"sessionId": "s-1", "jobId": "job-1", "extra": 1}, "extra"),
    ]:
        try:
            await request(editor, "agent/jobStop", params)
        except Exception as exc:  # the JSON-RPC error
            assert field in str(exc), exc
        else:
            raise AssertionError(f"{params} was accepted")
    usage = await request(editor, "agent/command", {"name": "jobs", "argument": "kill job-1"})
    assert usage["message"] == "usage: /jobs [stop ID]"


def marked(mark: str) -> list[int]:
    """Live processes whose command line holds ``mark`` (seen from outside any namespace)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if mark.encode() in (entry / "cmdline").read_bytes() and not gone(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_background_job_runs_in_the_sandbox_and_stops_whole(
    tmp_path: Path, workspace: Path, backend: Backend
) -> None:
    require_backend(backend)
    tag = uuid.uuid4().hex
    mark = f"tj{tag}"  # the command line spells it `${M}…`: only the marked processes hold it
    folder = tempfile.TemporaryDirectory(dir="/var/tmp", prefix="tether-e2e-")
    outside = Path(folder.name) / "outside.txt"  # not under /tmp: the sandbox hides that
    command = (
        f"M=tj; echo escaped > {outside}; echo wrote $?; (exec -a ${{M}}{tag}-child sleep 300) & "
        f"echo up; exec -a ${{M}}{tag} sleep 300"
    )
    async with serving(tmp_path / "state") as editor:
        turns = script(
            {"toolCalls": [bash(command, background=True)]},
            {"toolCalls": [job_output("job-1", until="up", wait_seconds=WAIT)]},
        )
        await editor.open_session(workspace, script=turns, options={"sandbox": backend})
        result = await asyncio.wait_for(editor.run(prompt="go", runId="r1"), 60)
        assert result["outcome"] == "done"
        started, waited = editor.tool_results()
        assert f"in the {backend} sandbox" in started.output, started.output
        assert "wrote 1" in waited.output or "wrote 2" in waited.output, waited.output
        assert not outside.exists()
        await wait_until(lambda: len(marked(mark)) == 2, f"both processes ({marked(mark)})")
        [session_id] = {e.to_wire()["sessionId"] for e in editor.events if e.kind == "run-started"}
        [job] = (await request(editor, "agent/jobs", {}))["jobs"]
        assert job["sandbox"] == backend
        stopped = await request(
            editor, "agent/jobStop", {"sessionId": session_id, "jobId": "job-1"}
        )
        assert stopped["stopped"] is True
        await wait_until(lambda: marked(mark) == [], "every process of the job gone")
    folder.cleanup()


async def test_a_background_job_that_asks_ends_saying_what_it_asked(
    editor: Editor, workspace: Path
) -> None:
    _, ended = await run_calls(
        editor,
        workspace,
        bash('echo starting; read -p "Overwrite? [y/N] " a; echo "answer=$a"', background=True),
        job_output("job-1", until="never", wait_seconds=WAIT),
    )
    assert "the command waited for input: `Overwrite? [y/N] `" in ended.output, ended.output
    assert "answer=" not in ended.output
    [job] = (await request(editor, "agent/jobs", {}))["jobs"]
    assert job["state"] == "failed" and "Overwrite?" in job["note"]


async def test_what_a_job_printed_is_shown_to_people_escaped(
    editor: Editor, workspace: Path
) -> None:
    """A job's last line is text from outside: ``agent/jobs`` and ``/jobs`` show control,
    bidi and invisible characters escaped; the command too, in ``/jobs``."""
    hostile = r"printf 'ok\n\033[2J\033]0;title\007 a\u202eb\u200bc\n'; exec sleep 300"
    await run_calls(editor, workspace, bash(hostile, background=True))
    session_id = editor.events[0].to_wire()["sessionId"]
    [job] = (await request(editor, "agent/jobs", {}))["jobs"]
    listing = await request(editor, "agent/command", {"name": "jobs", "sessionId": session_id})
    for text in (job["lastLine"], listing["message"]):
        assert not any(c in text for c in "\x1b\x07\u202e\u200b\r"), repr(text)
    assert "\\x1b[2J" in job["lastLine"] and "\\u202e" in job["lastLine"], job["lastLine"]
    await request(editor, "agent/jobStop", {"sessionId": session_id, "jobId": "job-1"})


NEAR_MISSES = [
    "JOB-1",
    "job-01",
    " job-1",
    "job-1 ",
    "job-1\u200b",
    "job\u20111",
    "job-1\n",
    "job-",
    "job-1*",
    "job-.*",
    "../job-1",
    "job-" + "1" * 150,
    "\x00job-1",
    "job-\u202e1",
]


async def test_only_the_jobs_exact_id_reaches_it(editor: Editor, workspace: Path) -> None:
    """A job is found by its id exactly: near-miss spellings (case, padding, invisible
    characters, a pattern, a path) and random strings stop nothing, from the user or from
    the model, and the server keeps serving."""
    rng = random.Random(47)
    alphabet = "job-1J \u200b\u202e\x00\n*./é"
    randoms = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(40)]
    results = await run_calls(
        editor,
        workspace,
        bash("echo $$ > pid; exec sleep 300", background=True),
        *(job_stop(job) for job in NEAR_MISSES[:6]),
    )
    assert all(not r.ok and "there is no job" in r.output for r in results[1:]), results
    session_id = editor.events[0].to_wire()["sessionId"]
    for job in [*NEAR_MISSES, *(r for r in randoms if r != "job-1")]:
        try:
            answer = await request(editor, "agent/jobStop", {"sessionId": session_id, "jobId": job})
        except Exception as exc:  # too long or empty: refused naming the field
            assert "jobId" in str(exc), exc
        else:
            assert answer == {"stopped": False}, (job, answer)
    pid = int((workspace / "pid").read_text())
    assert not gone(pid)
    stopped = await request(editor, "agent/jobStop", {"sessionId": session_id, "jobId": "job-1"})
    assert stopped["stopped"] is True
    await wait_until(lambda: gone(pid), "the job gone")
