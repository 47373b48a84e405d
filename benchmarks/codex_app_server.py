"""``codex app-server`` (Codex's Rust agent server) driven over its own JSON-RPC on stdio, for
the same read → write → answer task against the same fake model (``task_model.py``).

Optional, like the ACP peers: installed with npm into the peers' cache folder
(``PEERS_DIR``, never committed)::

    npm install --prefix ~/.cache/tether-acp-peers @openai/codex@0.169.0

How it is driven (read from ``codex app-server generate-json-schema``): one JSON object per
line each way, ``initialize`` (``clientInfo``) → the ``initialized`` notification →
``thread/start`` (``cwd`` = the task's workspace, ``approvalPolicy`` ``never``, ``sandbox``
``workspace-write``, so the patch is applied with no approval asked) → ``turn/start`` with
the prompt as text input → the ``turn/completed`` notification. The answer's words come in
``item/agentMessage/delta`` notifications. ``CODEX_HOME`` is a fresh folder per run with a
custom ``model_providers.fake`` (``wire_api = "responses"``, key from ``env_key``) given
with ``-c``, as for codex-acp, so no login is needed. The model is ``gpt-5.5``, one this
version knows (with ``gpt-5.2-codex`` it warns of missing metadata and offers no
``apply_patch``). The native binary is spawned, not the npm package's Node launcher.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .agents import PEERS_DIR, _base_env, _bin, codex_fake_model
from .task_model import ANSWER, PROMPT, Dialect, TaskModel, make_workspace, task_done

VERSION = "0.169.0"
INSTALL = f"npm install --prefix {PEERS_DIR} @openai/codex@{VERSION}"
NAME = "codex app-server"
DIALECT = Dialect("responses", "codex")


PACKAGE = PEERS_DIR / "node_modules" / "@openai" / "codex"


def native() -> Path | None:
    """The Rust binary the npm package ships for this platform, if installed.

    ``node_modules/.bin/codex`` is a Node script that finds this binary and execs it;
    the benchmark spawns the binary itself, with the two variables the script sets (as an
    editor embedding the app-server spawns its binary), so Node's start is not timed."""
    found = sorted((PEERS_DIR / "node_modules" / "@openai").glob("codex-*/vendor/*/bin/codex"))
    return found[0] if found else None


def available() -> bool:
    """The pinned package and its native binary are in the peers' folder."""
    return _bin("codex").exists() and native() is not None


def version() -> str:
    """What the binary's ``--version`` says (``codex-cli 0.169.0``)."""
    done = subprocess.run([str(native()), "--version"], capture_output=True, text=True, timeout=30)
    return done.stdout.strip()


def command(base_url: str, home: Path) -> tuple[list[str], dict[str, str]]:
    """``codex app-server`` pointed at the fake model, with a fresh ``CODEX_HOME``."""
    argv = [str(native()), "app-server", *codex_fake_model(base_url, "gpt-5.5")]
    codex_home = home / "codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    env = {
        **_base_env(home),
        "CODEX_HOME": str(codex_home),
        "FAKE_MODEL_KEY": "bench-key",
        "CODEX_MANAGED_BY_NPM": "1",
        "CODEX_MANAGED_PACKAGE_ROOT": str(PACKAGE.resolve()),
    }
    return argv, env


class AppServerFailed(RuntimeError):
    """codex app-server did not do the task (an error, no answer, the file unchanged)."""


@dataclass
class _Peer:
    """One spawned ``codex app-server``: requests by id, notifications as they came."""

    process: asyncio.subprocess.Process
    started_ns: int
    pending: dict[int, asyncio.Future[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    notes: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    turn_done: asyncio.Event = field(default_factory=asyncio.Event)
    next_id: int = 0

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def request(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(arrival ns, result) of one request; an error answer raises."""
        self.next_id += 1
        future: asyncio.Future[tuple[int, dict[str, Any]]] = (
            asyncio.get_running_loop().create_future()
        )
        self.pending[self.next_id] = future
        await self._send({"id": self.next_id, "method": method, "params": params})
        return await future

    async def notify(self, method: str) -> None:
        await self._send({"method": method})

    async def read(self) -> None:
        """Every line of the server's stdout until it ends."""
        assert self.process.stdout is not None
        try:
            await self._read_lines(self.process.stdout)
        finally:
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(AppServerFailed("codex app-server exited"))
            self.turn_done.set()

    async def _read_lines(self, stdout: asyncio.StreamReader) -> None:
        while line := await stdout.readline():
            now = time.monotonic_ns()
            message = json.loads(line)
            if "method" in message and "id" in message:
                # A request to the client (an approval): none is expected with approvals
                # off; refuse it so a wrong setup fails instead of hanging.
                await self._send(
                    {"id": message["id"], "error": {"code": -32601, "message": "not offered"}}
                )
                self.notes.append((now, message["method"], message.get("params") or {}))
            elif "method" in message:
                self.notes.append((now, message["method"], message.get("params") or {}))
                if message["method"] == "turn/completed":
                    self.turn_done.set()
            elif (future := self.pending.pop(message.get("id"), None)) is not None:
                if "error" in message:
                    future.set_exception(AppServerFailed(f"{message['error']}"))
                else:
                    future.set_result((now, message.get("result") or {}))


@dataclass(frozen=True)
class AppServerTiming:
    """One run, in ms from the spawn."""

    initialize: float
    first_request: float
    """The fake model's first request (everything before the model is asked)."""
    first_chunk: float
    answer: float


def _ms(ns: int) -> float:
    return ns / 1e6


async def once(
    root: Path, home: Path, within: float = 90, sandbox: str = "workspace-write"
) -> AppServerTiming:
    """One fresh ``codex app-server`` doing the task in ``root``; checks the file and answer.

    ``sandbox``: ``workspace-write`` (Codex runs each command and patch in its Linux
    sandbox) or ``danger-full-access`` (none, as ``tether run --yes``)."""
    make_workspace(root)
    model = TaskModel(DIALECT, root)
    with model:
        argv, env = command(model.base_url, home)
        began = time.monotonic_ns()
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        peer = _Peer(process, began)
        reader = asyncio.create_task(peer.read())
        try:
            async with asyncio.timeout(within):
                initialized, _ = await peer.request(
                    "initialize", {"clientInfo": {"name": "tether-bench", "version": "0"}}
                )
                await peer.notify("initialized")
                _, thread = await peer.request(
                    "thread/start",
                    {"cwd": str(root), "approvalPolicy": "never", "sandbox": sandbox},
                )
                text = {"type": "text", "text": PROMPT, "text_elements": []}
                await peer.request(
                    "turn/start", {"threadId": thread["thread"]["id"], "input": [text]}
                )
                await peer.turn_done.wait()
        finally:
            if process.stdin is not None:
                process.stdin.close()
            try:
                async with asyncio.timeout(5):
                    await process.wait()
            except TimeoutError:
                process.kill()
                await process.wait()
            reader.cancel()
    deltas = [
        (at, p.get("delta", "")) for at, m, p in peer.notes if m.endswith("agentMessage/delta")
    ]
    completed = [(at, p) for at, m, p in peer.notes if m == "turn/completed"]
    said = "".join(text for _, text in deltas)
    if not completed or ANSWER not in said or not task_done(root):
        status = completed[0][1].get("turn", {}).get("status") if completed else "no turn/completed"
        raise AppServerFailed(
            f"{NAME}: {status}; said {said[-300:]!r}; written: {task_done(root)}; "
            f"methods: {sorted({m for _, m, _ in peer.notes})}"
        )
    first = next(at for at, text in deltas if text)
    return AppServerTiming(
        _ms(initialized - began),
        _ms(model.arrivals[0] - began),
        _ms(first - began),
        _ms(completed[0][0] - began),
    )


def main() -> None:
    """A smoke run: ``python -m benchmarks.codex_app_server``."""
    import shutil
    import tempfile

    PEERS_DIR.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="app-server-", dir=PEERS_DIR))
    try:
        print(asyncio.run(once(scratch / "work", scratch / "home")))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
