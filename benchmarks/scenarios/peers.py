"""The peers' method: a fresh process per run, medians of 5, on the same read → write →
answer task against the same fake model (``benchmarks/task_model.py``), for every system:

- each ACP agent of ``benchmarks/agents.py`` that is installed (codex-acp,
  claude-agent-acp, ``tether acp``), driven by the ACP kit's client
  (``tests/acp``; the schema check runs after the timing): spawn → ``initialize``
  answered, spawn → first non-empty ``agent_message_chunk``, spawn → ``session/prompt``
  answered (which includes ``session/new``), the permission allowed once;
- ``tether serve`` over LSP: spawn → ``initialize`` answered, → first ``text-delta``
  event, → the ``agent/run`` result (approved, applied through ``workspace/applyEdit``);
- ``tether run``: spawn → the first words on its stdout, → the answer on its stdout.

Both Tether providers are measured (``--quick``: openai only). Each system runs once
unmeasured first (page cache, the peers' home folders), then the systems take turns, one
run each per round. The ratios are of each system's median to the fastest's.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from tests.acp.client import AcpAgent
from tests.acp.recorder import RecordingClient

from ..agents import AGENTS, INSTALL, PEERS_DIR, AgentSpec
from ..client import TETHER, Server
from ..harness import Context, allow, ms
from ..report import Row, median
from ..task_model import (
    ANSWER,
    CHANGED,
    FIRST_WORDS,
    PROMPT,
    Dialect,
    TaskModel,
    make_workspace,
    task_done,
)
from .providers import apply_on_disk

NAME = "peers' method (fresh process)"
KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
WIRES = {"openai": "chat", "anthropic": "messages"}


@dataclass(frozen=True)
class Timing:
    """One run, in ms from the spawn."""

    initialize: float | None
    first_chunk: float
    answer: float


class TaskFailed(RuntimeError):
    """The system did not do the task (no answer, or the file unchanged)."""


async def _acp_once(ctx: Context, spec: AgentSpec, root: Path, home: Path) -> Timing:
    make_workspace(root)
    with TaskModel(spec.dialect, root) as model:
        argv, env = spec.command(model.base_url, home)
        client = RecordingClient(permission="allow_once")
        client.validate = False  # checked after the run, off the clock
        async with AcpAgent.spawn(
            argv, cwd=root, env=env, client=client, request_within=90
        ) as agent:
            await agent.initialize()
            initialized = agent.last_answered_ns
            session = await agent.new_session(root)
            answer = await agent.prompt(session, PROMPT)
            answered = agent.last_answered_ns
            started = agent.started_ns
    chunks = [u.at_ns for u in client.updates if u.kind == "agent_message_chunk" and u.text()]
    # The client declares fs: an agent writing through it (tether acp) changes the client's
    # buffer, one writing the disk itself (the peers) the file.
    through_client = (str(root / "src" / "app.py"), CHANGED) in client.writes
    written = task_done(root) or through_client
    if answer.get("stopReason") != "end_turn" or ANSWER not in agent.text() or not written:
        raise TaskFailed(f"{spec.name}: {answer}, written: {written}")
    client.check_all()
    if client.violations:
        ctx.notes.append(f"{spec.name}: {len(client.violations)} schema violation(s) in a run")
    return Timing(ms(initialized - started), ms(chunks[0] - started), ms(answered - started))


async def _serve_once(ctx: Context, provider: str, root: Path) -> Timing:
    make_workspace(root)
    with TaskModel(Dialect(WIRES[provider], "tether"), root) as model:  # type: ignore[arg-type]
        env = ctx.env(ctx.folder(f"peers-serve-{provider}-state"), **{KEYS[provider]: "bench-key"})
        server = await Server.start(TETHER, env=env, cwd=root)
        try:
            server.handlers["agent/approve"] = allow
            server.handlers["workspace/applyEdit"] = apply_on_disk
            options = {"provider": provider, "baseUrl": model.base_url, "model": "bench-model"}
            initialized, _ = await server.initialize(root, options)
            answered, result = await asyncio.wait_for(
                server.request_timed("agent/run", {"prompt": PROMPT}), 60
            )
            first = next(e.at for e in server.events if e.kind == "text-delta")
        finally:
            await server.close()
    if result.get("outcome") != "done" or not task_done(root):
        raise TaskFailed(f"tether serve ({provider}): {result}")
    started = server.started_ns
    return Timing(ms(initialized - started), ms(first - started), ms(answered - started))


async def _run_once(ctx: Context, provider: str, root: Path) -> Timing:
    make_workspace(root)
    with TaskModel(Dialect(WIRES[provider], "tether"), root) as model:  # type: ignore[arg-type]
        argv = [sys.executable, "-m", "tether", "run", "--yes", "--provider", provider]
        argv += ["--base-url", model.base_url, "--model", "bench-model", PROMPT]
        env = ctx.env(ctx.folder(f"peers-run-{provider}-state"), **{KEYS[provider]: "bench-key"})
        began = time.monotonic_ns()
        process = await asyncio.create_subprocess_exec(
            *argv, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE
        )
        assert process.stdout is not None
        seen, first, answered = b"", 0, 0
        try:
            async with asyncio.timeout(60):
                while chunk := await process.stdout.read(65536):
                    seen += chunk
                    now = time.monotonic_ns()
                    first = first or (now if FIRST_WORDS.encode() in seen else 0)
                    answered = answered or (now if ANSWER.encode() in seen else 0)
                code = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    if not answered or not first or code != 0 or not task_done(root):
        raise TaskFailed(f"tether run ({provider}) exited {code}: {seen[-1500:]!r}")
    return Timing(None, ms(first - began), ms(answered - began))


Once = Callable[[], Awaitable[Timing]]


def _systems(ctx: Context, home: Path) -> list[tuple[str, Once]]:
    systems: list[tuple[str, Once]] = []
    for spec in AGENTS:
        if not spec.available():
            ctx.notes.append(
                f"{spec.name}: not installed"
                if "tether" not in spec.name
                else f"{spec.name}: not in this checkout yet"
            )
            continue
        root, agent_home = ctx.folder(f"peers-{spec.name}"), home / spec.name.replace(" ", "-")
        systems.append((spec.name, lambda s=spec, r=root, h=agent_home: _acp_once(ctx, s, r, h)))
    if any("not installed" in note for note in ctx.notes):
        ctx.notes.append(f"to compare with the peers: {INSTALL}")
    providers = ("openai",) if ctx.quick else ("openai", "anthropic")
    for provider in providers:
        root = ctx.folder(f"peers-serve-{provider}")
        systems.append(
            (f"tether serve ({provider})", lambda p=provider, r=root: _serve_once(ctx, p, r))
        )
    for provider in providers:
        root = ctx.folder(f"peers-run-{provider}")
        systems.append(
            (f"tether run ({provider})", lambda p=provider, r=root: _run_once(ctx, p, r))
        )
    return systems


async def run(ctx: Context) -> list[Row]:
    runs = ctx.sizes.peer_runs
    # The peers' homes stay outside /tmp (Codex refuses its helper binaries there).
    PEERS_DIR.mkdir(parents=True, exist_ok=True)
    home = Path(PEERS_DIR) / f"bench-homes-{time.time_ns()}"
    systems = _systems(ctx, home)
    timings: dict[str, list[Timing]] = {name: [] for name, _ in systems}
    try:
        if not ctx.quick:
            for _name, once in systems:
                await once()  # warms the page cache and the agent's home; not counted
        # Round after round, every system once: the machine's state at any moment weighs
        # on all of them alike, so the ratios hold even when other work loads the machine.
        for _ in range(runs):
            for name, once in systems:
                timing = await once()
                timings[name].append(timing)
                ctx.log(f"{name}: {timing.answer:.0f} ms to the answer")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    rows: list[Row] = []
    for name, samples in timings.items():
        initialize = [t.initialize for t in samples if t.initialize is not None]
        if initialize:
            rows.append(Row.of(NAME, f"{name}: spawn → initialize", "ms", initialize))
        rows.append(
            Row.of(
                NAME, f"{name}: spawn → 1st message chunk", "ms", [t.first_chunk for t in samples]
            )
        )
        rows.append(Row.of(NAME, f"{name}: spawn → answer", "ms", [t.answer for t in samples]))
    answers = {name: median([t.answer for t in samples]) for name, samples in timings.items()}
    fastest = min(answers, key=answers.__getitem__)
    for name, value in answers.items():
        ratio = value / answers[fastest]
        rows.append(Row(NAME, f"{name}: answer / {fastest}", "×", ratio, None, len(timings[name])))
    return rows
