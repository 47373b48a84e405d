"""What the ACP peers get wrong, reproduced with the ACP test kit (``tests/acp``).

    python -m benchmarks.peer_checks [--only codex-acp,claude-agent-acp] [--verbose]

Each check drives a fresh agent process with the kit's client (every message checked
against the ACP schema) against the fake model of ``benchmarks/task_model.py`` on
127.0.0.1, and prints a Markdown table: what ACP asks, then what each agent did. The
peers are optional (see ``benchmarks/agents.py`` for installing them); one that is not
installed is reported as such. ``tether acp`` is in the table too. This is a
script, not a test: the peers are not installed in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from tests.acp.client import AcpAgent, RequestError
from tests.acp.recorder import RecordingClient

from .agents import AGENTS, INSTALL, PEERS_DIR, AgentSpec
from .task_model import ANSWER, APP, CHANGED, PROMPT, TaskModel, make_workspace, task_done

UNSAVED = "# an unsaved edit, only in the editor's buffer\n"


@dataclass
class Peer:
    """One agent under check: its spec and a scratch folder for its runs."""

    spec: AgentSpec
    scratch: Path
    verbose: bool = False
    violations: int = 0
    runs: int = 0

    def fresh(self, name: str) -> tuple[Path, Path]:
        """A new workspace and a new home for one check."""
        self.runs += 1
        base = self.scratch / f"{self.runs:02d}-{name}"
        return make_workspace(base / "work"), base / "home"

    @contextlib.asynccontextmanager
    async def session(
        self,
        root: Path,
        home: Path,
        client: RecordingClient,
        *,
        bare_usage: bool = False,
        new_session: bool = True,
    ) -> AsyncIterator[tuple[AcpAgent, TaskModel, str]]:
        """A spawned, initialized agent with a session in ``root`` (unless not wanted)."""
        with TaskModel(self.spec.dialect, root, bare_usage=bare_usage) as model:
            argv, env = self.spec.command(model.base_url, home)
            async with AcpAgent.spawn(
                argv, cwd=root, env=env, client=client, request_within=90
            ) as agent:
                await agent.initialize()
                session = await agent.new_session(root) if new_session else ""
                try:
                    yield agent, model, session
                finally:
                    client.check_all()
                    self.violations += len(client.violations)
                    if self.verbose:
                        for violation in client.violations:
                            print(f"    {self.spec.name}: {violation}", file=sys.stderr)


Check = Callable[[Peer], Awaitable[str]]


async def check_task(peer: Peer) -> str:
    root, home = peer.fresh("task")
    client = RecordingClient(permission="allow_once")
    async with peer.session(root, home, client) as (agent, _model, session):
        answer = await agent.prompt(session, PROMPT)
        # written to the disk by the agent, or through the client's fs/write_text_file
        through_client = (str(root / "src" / "app.py"), CHANGED) in client.writes
        written = task_done(root) or through_client
        ok = answer["stopReason"] == "end_turn" and written and ANSWER in agent.text()
        kinds = "/".join(client.permissions[0].kinds) if client.permissions else "none asked"
        return f"{'ok' if ok else 'FAILS'}: {answer['stopReason']}; options {kinds}"


async def check_reject(peer: Peer) -> str:
    root, home = peer.fresh("reject")
    client = RecordingClient(permission="reject_once")
    async with peer.session(root, home, client) as (agent, model, session):
        answer = await agent.prompt(session, PROMPT)
        told = len(model.requests) - model.side_requests >= 3
        ok = (
            answer["stopReason"] == "end_turn"
            and told
            and not task_done(root)
            and not client.writes
        )
        went_on = "the model was told and answered" if told else "the model was never told"
        return f"{'ok' if ok else 'FAILS'}: {answer['stopReason']}, {went_on}"


async def check_cancel(peer: Peer) -> str:
    root, home = peer.fresh("cancel")
    client = RecordingClient(permission="never")
    async with peer.session(root, home, client) as (agent, _model, session):
        turn = agent.start_prompt(session, PROMPT)
        asked = await agent.wait_for_permission(within=60)
        began = time.monotonic()
        await agent.cancel(session, answer_pending=False)
        done, _ = await asyncio.wait({turn}, timeout=1.0)
        answered_self = not done
        if not done:
            client.settle(session)  # answer it ourselves, as a client must
        answer = await asyncio.wait_for(turn, 30)
        took = time.monotonic() - began
        client.settle(session)  # a permission still open is answered cancelled, as it must be
        ok = asked.withdrawn and not answered_self and answer["stopReason"] == "cancelled"
        withdrawal = "withdrawn ($/cancel_request)" if asked.withdrawn else "never withdrawn"
        late = "; answered only after the client answered the permission" if answered_self else ""
        return (
            f"{'ok' if ok else 'FAILS'}: {answer['stopReason']} in {took:.2f} s, {withdrawal}{late}"
        )


async def check_unsaved(peer: Peer) -> str:
    root, home = peer.fresh("unsaved")
    path = str(root / "src" / "app.py")
    client = RecordingClient(permission="allow_once", buffers={path: UNSAVED + APP})
    async with peer.session(root, home, client) as (agent, model, session):
        await agent.prompt(session, PROMPT)
        seen = any(UNSAVED.strip() in json.dumps(r.body) for r in model.requests)
        how = "fs/read_text_file" if client.reads else "its own read of the disk"
        wrote = "fs/write_text_file" if client.writes else "the disk"
        what = "the unsaved text" if seen else "the disk, not the unsaved buffer"
        return f"{'ok' if seen else 'FAILS'}: read with {how}, the model saw {what}; wrote {wrote}"


async def check_usage(peer: Peer) -> str:
    root, home = peer.fresh("usage")
    client = RecordingClient(permission="allow_once")
    async with peer.session(root, home, client, bare_usage=True) as (agent, _model, session):
        await agent.prompt(session, PROMPT)
        usages = [u.update for u in client.updates if u.kind == "usage_update"]
        nulls = [u for u in usages if u.get("used") is None or u.get("size") is None]
        dropped = len(client.dropped_by_sdk)
        if not usages:
            return "none sent"
        if nulls:
            return f"FAILS: {len(nulls)} of {len(usages)} with used: null (the SDK drops {dropped})"
        return f"ok: {len(usages)} sent, used = {usages[-1].get('used')}"


async def check_relative_cwd(peer: Peer) -> str:
    root, home = peer.fresh("relative")
    client = RecordingClient()
    async with peer.session(root, home, client, new_session=False) as (agent, _model, _session):
        try:
            result = await agent.request("session/new", {"cwd": "work", "mcpServers": []})
        except RequestError as error:
            ok = error.code == -32602
            return f"{'ok' if ok else 'FAILS'}: error {error.code} ({error})"
        return f"FAILS: accepted (session {str(result.get('sessionId'))[:8]}…)"


async def check_eof(peer: Peer) -> str:
    root, home = peer.fresh("eof")
    client = RecordingClient(permission="allow_once")
    async with peer.session(root, home, client) as (agent, _model, session):
        await agent.prompt(session, PROMPT)
        check = await agent.exit_after_eof(within=2.0)
    if check.clean:
        return f"ok: exited in {check.seconds:.2f} s"
    left = f", {len(check.left_behind)} child process(es) left" if check.left_behind else ""
    state = "exited" if check.exited else "still running after 2 s"
    return f"FAILS: {state}{left}"


async def check_load(peer: Peer) -> str:
    root, home = peer.fresh("load")
    async with peer.session(root, home, RecordingClient()) as (agent, _model, session):
        await agent.prompt(session, PROMPT)
    client = RecordingClient()
    async with peer.session(root, home, client, new_session=False) as (agent, _model, _):
        try:
            await agent.load_session(session, root)
        except RequestError as error:
            return f"FAILS: error {error.code} ({error})"
        replayed = [u for u in client.updates if u.session_id == session]
        kinds = [u.kind for u in replayed]
        final: dict[str, str] = {}
        for update in replayed:
            if update.kind in ("tool_call", "tool_call_update") and "status" in update.update:
                final[str(update.update.get("toolCallId"))] = str(update.update["status"])
        statuses = "/".join(final.values()) or "no status"
        counts = ", ".join(
            f"{kinds.count(k)} {k}"
            for k in ("user_message_chunk", "agent_message_chunk", "tool_call")
        )
        texts = kinds.count("user_message_chunk") and kinds.count("agent_message_chunk")
        ok = texts and len(final) >= 2 and set(final.values()) == {"completed"}
        return f"{'ok' if ok else 'FAILS'}: replayed {counts} ({statuses})"


CHECKS: tuple[tuple[str, str, Check], ...] = (
    ("read → write → answer, allowed", "end_turn; file written", check_task),
    ("reject the write", "the call fails, the model is told, end_turn", check_reject),
    (
        "session/cancel with a permission pending",
        "cancelled within 1 s; the request withdrawn with $/cancel_request",
        check_cancel,
    ),
    ("client declares fs; the buffer is unsaved", "the model sees the buffer", check_unsaved),
    (
        "usage_update when the API omits cache counts",
        "used and size integers (required)",
        check_usage,
    ),
    ("session/new with a relative cwd", "error -32602", check_relative_cwd),
    ("stdin EOF after a turn", "exit within 2 s, children too", check_eof),
    (
        "session/load in a new process",
        "replays user, agent text and the tool calls",
        check_load,
    ),
)


async def run_checks(peers: list[Peer]) -> list[list[str]]:
    """The table's rows (check, expected, one cell per peer)."""
    rows = []
    for title, expected, check in CHECKS:
        row = [title, expected]
        for peer in peers:
            print(f"· {peer.spec.name}: {title} …", file=sys.stderr, flush=True)
            try:
                cell = await check(peer)
            except Exception as error:
                cell = f"ERROR: {type(error).__name__}: {str(error)[:200]}"
            row.append(cell.replace("|", "\\|"))
        rows.append(row)
    rows.append(["schema violations, all checks", "0", *[str(p.violations) for p in peers]])
    return rows


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peer_checks", description=__doc__)
    parser.add_argument("--only", help="comma-separated agent names")
    parser.add_argument("--verbose", action="store_true", help="print every schema violation")
    args = parser.parse_args(argv)
    if not args.verbose:
        # The SDK logs a traceback for each notification it drops; the table counts them.
        logging.basicConfig(level=logging.CRITICAL)
    wanted = {n.strip() for n in args.only.split(",")} if args.only else None
    chosen = [spec for spec in AGENTS if wanted is None or spec.name in wanted]
    missing = [spec.name for spec in chosen if not spec.available()]
    for name in missing:
        print(f"{name}: not installed", file=sys.stderr)
    if missing and any(n in missing for n in ("codex-acp", "claude-agent-acp")):
        print(f"  install the peers with: {INSTALL}", file=sys.stderr)
    # Homes outside /tmp: Codex refuses to create its helper binaries under a temp folder.
    PEERS_DIR.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="checks-", dir=PEERS_DIR))
    try:
        peers = [
            Peer(spec, scratch / spec.name.replace(" ", "-"), args.verbose)
            for spec in chosen
            if spec.name not in missing
        ]
        if not peers:
            print("no agent to check", file=sys.stderr)
            return 1
        rows = asyncio.run(run_checks(peers))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(markdown(["check", "ACP asks", *[p.spec.name for p in peers]], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
