"""A headless connection: spawn the server, initialize, answer its requests, shut down."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

from .connection import RequestHandler, TetherClient
from .spawn import DRAIN_SECONDS, relay_stderr, spawn_server


@asynccontextmanager
async def connect(
    root: Path,
    options: dict[str, Any],
    *,
    environ: dict[str, str] | None = None,
    events: bool = True,
    approver: RequestHandler | None = None,
    asker: RequestHandler | None = None,
    process: Process | None = None,
) -> AsyncIterator[TetherClient]:
    """A client connected to a fresh ``tether serve`` for ``root``; shut down on exit.

    The client has no documents: it declares no ``workspace/applyEdit``, so the server
    writes each approved edit itself, with its confined writer (no link followed, never
    over text the edit was not computed on). With an ``approver`` the client declares
    ``approvals`` and answers ``agent/approve`` with it (without one, the server asks with
    ``window/showMessageRequest``, which this client leaves unanswered: deny). With an
    ``asker`` it declares ``ask`` and answers the model's questions (``agent/ask``) with it;
    without one the server tells the model at once that no one can be asked. ``process``
    is a server already started in ``root`` (``spawn_server``); else one is started.
    """
    root = Path(await anyio.Path(root).resolve())
    async with anyio.create_task_group() as tg:
        if process is None:
            process = await spawn_server(root, list(TetherClient.command()), environ)
        async with process:
            relayed = anyio.Event()
            if process.stderr is not None:
                tg.start_soon(_relay, process, relayed)
            else:
                relayed.set()
            client = TetherClient(process, tg)
            if approver is not None:
                client.handle("agent/approve", approver)
            if asker is not None:
                client.handle("agent/ask", asker)
            tg.start_soon(client.read_messages)
            try:
                await client.initialize(
                    root,
                    options,
                    events=events,
                    approvals=approver is not None,
                    ask=asker is not None,
                )
                yield client
            finally:
                with anyio.CancelScope(shield=True):
                    await client.shutdown()
                    with anyio.move_on_after(DRAIN_SECONDS):  # its last words come first
                        await relayed.wait()
                tg.cancel_scope.cancel()


async def _relay(process: Process, done: anyio.Event) -> None:
    try:
        await relay_stderr(process)
    finally:
        done.set()
