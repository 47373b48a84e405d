"""The real-provider task: read → write → answer through the OpenAI and the Anthropic
provider (their official SDKs) against local fake APIs that answer at once.

Prompt → result: ``agent/run`` sent → its result read, with the write approved by this
client and applied to disk through ``workspace/applyEdit``, as an editor would.

The first prompt of a fresh server, 2 s after its spawn (an editor's), against the same
server's prompt 2 s after a warm one, paired in one process (two processes of the same
program differ by a few percent): the median over 15 servers of first − paired, in ms, at
most ``FIRST_PROMPT_MARGIN_MS`` (the ratio is printed beside it). Reported too: the first
prompt against a warm server's prompts back to back (a machine idle for 2 s is slower to
answer anything, warm or not — a warm server's prompts after a pause are ~1.3× its
back-to-back ones here — so this ratio has that floor). A first server runs one task before
anything is measured, so that the fake API and this client have done their own first-time
work.

The same paired difference for ``tether acp`` (an ACP client's first ``session/prompt`` 2 s
after the spawn, against the same process's prompt 2 s after a warm one), driven by the ACP
kit's client (``tests/acp``: permission allowed once, files read and written through the
client's ``fs`` methods).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.acp.client import AcpAgent
from tests.acp.recorder import RecordingClient
from tests.providers.fakes import FakeApi, Sse, anthropic_stream, openai_stream
from tether.text.model import offset_at
from tether.workspace.folders import path_from_uri

from ..agents import agent
from ..harness import Context, allow, ms
from ..report import Row, median

NAME = "real-provider task"
APP = "def greet(name):\n    return 'hello ' + name\n"


def _queue_task(fake: FakeApi, provider: str, index: int) -> None:
    stream = openai_stream if provider == "openai" else anthropic_stream
    content = json.dumps({"path": "src/app.py", "content": APP.replace("hello", f"hi {index}")})
    fake.queue(
        Sse(stream("Let me read it.", calls=[("c1", "read_file", ['{"path": "src/app.py"}'])])),
        Sse(stream("Now the change.", calls=[("c2", "write_file", [content])])),
        Sse(stream("Done: ", "it says hi now.")),
    )


def _workspace(ctx: Context, name: str) -> Path:
    """A folder holding the task's one file."""
    root = ctx.folder(name)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text(APP)
    return root


def applied_text(text: str, edits: list[dict[str, Any]]) -> str:
    """``text`` with an editor's LSP ``TextEdit``s applied (ranges in ``text``, UTF-16)."""
    spans = []
    for edit in edits:
        start, end = edit["range"]["start"], edit["range"]["end"]
        begin = offset_at(text, start["line"], start["character"])
        spans.append((begin, offset_at(text, end["line"], end["character"]), edit["newText"]))
    for begin, finish, new in sorted(spans, reverse=True):
        text = text[:begin] + new + text[finish:]
    return text


def apply_on_disk(params: Any) -> dict[str, Any]:
    """``workspace/applyEdit`` for files that are not open: change the disk (as an editor
    would; the task only edits files that exist)."""
    for change in params["edit"]["documentChanges"]:
        path = path_from_uri(change["textDocument"]["uri"])
        assert path is not None
        text = applied_text(path.read_text(encoding="utf-8"), change["edits"])
        path.write_text(text, encoding="utf-8")
    return {"applied": True}


FIRST_PROMPT_AFTER_NS = 2_000_000_000
"""An editor's first prompt comes seconds after it started the server."""

NEXT_PROMPT_AFTER_NS = 8_000_000_000
"""A person's pause between two prompts of a conversation: reading the answer, typing."""


async def _timed(
    ctx: Context,
    fake: FakeApi,
    provider: str,
    started_ns: int,
    counts: tuple[int, int],
    prompt: Callable[[int], Awaitable[None]],
    pause_ns: int = FIRST_PROMPT_AFTER_NS,
) -> list[float]:
    """From 2 s after ``started_ns`` (an editor's first prompt: the start answered at once
    and loaded the rest, the SDK too, meanwhile), ``prompt`` the task ``runs`` times back
    to back, then ``paused`` more times each ``pause_ns`` after the one before (a user's
    next prompt; ``counts``: runs, paused); each one's time in ms."""
    runs, paused = counts
    await asyncio.sleep(max(0, started_ns + FIRST_PROMPT_AFTER_NS - time.monotonic_ns()) / 1e9)
    times: list[float] = []
    for index in range(runs + paused):
        if index >= runs:
            await asyncio.sleep(pause_ns / 1e9)
        _queue_task(fake, provider, index)
        began = time.monotonic_ns()
        await prompt(index)
        times.append(ms(time.monotonic_ns() - began))
        ctx.log(f"{provider} prompt {index}: {times[-1]:.1f} ms")
    return times


async def _tasks(
    ctx: Context,
    fake: FakeApi,
    provider: str,
    root: Path,
    runs: int,
    paused: int = 0,
    pause_ns: int = FIRST_PROMPT_AFTER_NS,
) -> list[float]:
    """Spawn a server and time its prompts (``_timed``): each ``agent/run``'s prompt →
    result, its write approved and applied to disk."""
    base_url = fake.url + "/v1" if provider == "openai" else fake.url
    options = {"provider": provider, "baseUrl": base_url, "model": "bench-model"}
    async with ctx.server(f"provider-{provider}", root) as server:
        server.handlers["agent/approve"] = allow
        server.handlers["workspace/applyEdit"] = apply_on_disk
        await server.initialize(root, options)

        async def prompt(index: int) -> None:
            result = await server.run("make it say hi")
            if result["outcome"] != "done" or result["steps"] != 3:
                raise RuntimeError(f"{provider}: unexpected result {result}")

        counts = (runs, paused)
        times = await _timed(ctx, fake, provider, server.started_ns, counts, prompt, pause_ns)
    if f"hi {runs + paused - 1}" not in (root / "src" / "app.py").read_text():
        raise RuntimeError(f"{provider}: the write did not reach the disk")
    return times


async def _acp_prompts(
    ctx: Context, fake: FakeApi, provider: str, root: Path, runs: int, paused: int = 0
) -> list[float]:
    """``_tasks`` for ``tether acp``: each ``session/prompt`` → answer, in a session of its
    own (as each ``agent/run`` of ``_tasks``: the conversations are the same size), its
    write allowed once and made through the client."""
    base_url = fake.url + "/v1" if provider == "openai" else fake.url
    home = ctx.folder(f"acp-{provider}-home-{time.monotonic_ns()}")
    argv, env = agent(f"tether acp ({provider})").command(base_url, home)
    client = RecordingClient(permission="allow_once")
    client.validate = False  # the timing is the agent's, not the schema check's
    async with AcpAgent.spawn(argv, cwd=root, env=env, client=client, request_within=60) as acp:
        await acp.initialize()
        sessions = [await acp.new_session(root) for _ in range(runs + paused)]

        async def prompt(index: int) -> None:
            answer = await acp.prompt(sessions[index], "make it say hi")
            if answer.get("stopReason") != "end_turn":
                raise RuntimeError(f"tether acp ({provider}): unexpected answer {answer}")

        times = await _timed(ctx, fake, provider, acp.started_ns, (runs, paused), prompt)
    written = [content for path, content in client.writes if path == str(root / "src" / "app.py")]
    if not written or f"hi {runs + paused - 1}" not in written[-1]:
        raise RuntimeError(f"tether acp ({provider}): the write did not reach the client")
    return times


SESSION_PROMPTS = 25
"""Prompts of the long session: each one's read → write → answer adds 6 messages."""

LONG_SESSION = 1.5
"""A late prompt of a long session over an early one: what grows with the conversation is
sending it (a copy per request is unavoidable; a walk over it by the SDK was not)."""


async def _session(ctx: Context, fake: FakeApi, provider: str, root: Path) -> list[float]:
    """One server, one session of ``SESSION_PROMPTS`` prompts back to back (each continues
    the session: the model gets the whole conversation so far); each one's time in ms."""
    base_url = fake.url + "/v1" if provider == "openai" else fake.url
    options = {"provider": provider, "baseUrl": base_url, "model": "bench-model"}
    times: list[float] = []
    session: dict[str, Any] = {}
    async with ctx.server(f"session-{provider}", root) as server:
        server.handlers["agent/approve"] = allow
        server.handlers["workspace/applyEdit"] = apply_on_disk
        await server.initialize(root, options)
        for index in range(SESSION_PROMPTS):
            _queue_task(fake, provider, index)
            began = time.monotonic_ns()
            result = await server.run("make it say hi", **session)
            times.append(ms(time.monotonic_ns() - began))
            if result["outcome"] != "done":
                raise RuntimeError(f"{provider}: unexpected result {result}")
            session = {"sessionId": result["sessionId"]}
    return times


FIRST_PROMPT_MARGIN_MS = 10.0
"""An editor's first prompt may take this much longer than the same process's prompt after
the same pause: absolute, as a person feels it (a ratio of two ~30 ms prompts moves with
the machine more than with the server)."""

WARMING_RUNS = 3
"""Prompts a fresh server answers back to back after its first, before its paused one."""


async def _provider(
    ctx: Context, provider: str
) -> tuple[list[float], tuple[int, int], list[float], list[float]]:
    """The warm times of one server (after its first task, back to back) and the
    connections to the model API it opened for them all, those another server opened for
    two tasks ``NEXT_PROMPT_AFTER_NS`` apart, and for each of
    ``ctx.sizes.first_prompts`` fresh servers its first task (2 s after spawn) and, after
    ``WARMING_RUNS`` more back to back, one sent 2 s after the one before: the same
    server's warm answer to a prompt after the same pause as the first's.

    One server runs a task before any is measured: the fake API (a thread of this process)
    and this client do their own first-time work there, as a real API and a running editor
    have done theirs, so a first task measures the server's first time alone."""
    root = _workspace(ctx, f"provider-{provider}")
    firsts: list[float] = []
    paused: list[float] = []
    with FakeApi() as fake:
        await _tasks(ctx, fake, provider, root, 1)  # the fake's and the client's first time
        before = fake.connections
        times = (await _tasks(ctx, fake, provider, root, ctx.sizes.provider_runs + 1))[1:]
        opened = fake.connections - before
        before = fake.connections
        await _tasks(ctx, fake, provider, root, 1, 1, NEXT_PROMPT_AFTER_NS)
        kept = fake.connections - before
        for _ in range(ctx.sizes.first_prompts):
            server = await _tasks(ctx, fake, provider, root, 1 + WARMING_RUNS, 1)
            firsts.append(server[0])
            paused.append(server[-1])
    return times, (opened, kept), firsts, paused


async def _acp_provider(ctx: Context, provider: str) -> tuple[list[float], list[float]]:
    """For each of ``ctx.sizes.first_prompts`` fresh ``tether acp`` processes its first
    prompt (2 s after spawn) and, after ``WARMING_RUNS`` more back to back, one sent 2 s
    after the one before; one process answers a prompt before any is measured."""
    root = _workspace(ctx, f"acp-provider-{provider}")
    firsts: list[float] = []
    paused: list[float] = []
    with FakeApi() as fake:
        await _acp_prompts(ctx, fake, provider, root, 1)  # the fake's and the client's first
        for _ in range(ctx.sizes.first_prompts):
            server = await _acp_prompts(ctx, fake, provider, root, 1 + WARMING_RUNS, 1)
            firsts.append(server[0])
            paused.append(server[-1])
    return firsts, paused


def _paired(metric: str, what: str, firsts: list[float], paused: list[float]) -> Row:
    """The median over fresh processes of first − paired (ms), the ratios beside it."""
    pairs = list(zip(firsts, paused, strict=True))
    differences = [first - rested for first, rested in pairs]
    ratios = ", ".join(f"{first / rested:.2f}" for first, rested in pairs)
    return Row(
        NAME,
        metric,
        "ms",
        median(differences),
        None,
        len(differences),
        f"≤ +{FIRST_PROMPT_MARGIN_MS:.0f}",
        FIRST_PROMPT_MARGIN_MS,
        note=f"median of {len(pairs)} fresh {what}' first task − the same one's prompt 2 s "
        f"after a warm one ({', '.join(f'{d:+.1f}' for d in differences)}); ratios {ratios};"
        f" medians {median(firsts):.1f} / {median(paused):.1f} ms",
        samples=[round(d, 6) for d in differences],
    )


async def run(ctx: Context) -> list[Row]:
    rows = []
    for provider in ("anthropic", "openai"):
        times, (opened, kept), firsts, paused = await _provider(ctx, provider)
        rows.append(Row.of(NAME, f"{provider}: prompt → result", "ms", times, limit=60.0))
        tasks = len(times) + 1
        rows.append(
            Row(
                NAME,
                f"{provider}: connections to the API, {tasks} tasks back to back",
                "",
                opened,
                None,
                tasks,
                "≤ 1",
                1.0,
                note=f"{tasks * 3} model calls; each new connection to a real API costs a TCP "
                "and a TLS handshake, two round trips",
            )
        )
        pause = NEXT_PROMPT_AFTER_NS / 1e9
        rows.append(
            Row(
                NAME,
                f"{provider}: connections to the API, 2 prompts {pause:.0f} s apart",
                "",
                kept,
                None,
                2,
                "≤ 1",
                1.0,
                note="6 model calls; a person's pause between two prompts, longer than the "
                "HTTP client's default keep-alive (5 s): the second prompt's first call "
                "would pay the handshakes again",
            )
        )
        warm, first, rested = median(times), median(firsts), median(paused)
        metric = f"{provider}: 1st prompt 2 s after spawn − warm after a 2 s pause"
        rows.append(_paired(metric, "servers", firsts, paused))
        rows.append(
            Row(
                NAME,
                f"{provider}: 1st prompt 2 s after spawn / warm back to back",
                "×",
                first / warm,
                None,
                len(firsts),
                note=f"reported: against the warm median {warm:.1f} ms; a warm server's "
                f"prompts after a 2 s pause are {rested / warm:.2f}× that",
            )
        )
        root = _workspace(ctx, f"session-{provider}")
        with FakeApi() as fake:
            prompts = await _session(ctx, fake, provider, root)
        early, late = median(prompts[1:4]), median(prompts[-3:])
        rows.append(
            Row(
                NAME,
                f"{provider}: prompt {SESSION_PROMPTS} of a session / prompts 2-4",
                "×",
                late / early,
                None,
                len(prompts),
                f"≤ {LONG_SESSION}",
                LONG_SESSION,
                note=f"medians of the last 3 and of prompts 2-4: {late:.1f} / {early:.1f} ms "
                f"({SESSION_PROMPTS * 6} messages by the end)",
            )
        )
        acp_firsts, acp_paused = await _acp_provider(ctx, provider)
        metric = f"tether acp, {provider}: 1st prompt 2 s after spawn − warm after a 2 s pause"
        rows.append(_paired(metric, "processes", acp_firsts, acp_paused))
    return rows
