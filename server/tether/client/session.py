"""Run a headless session: spawn the server, initialize, call back, shut down."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from .connection import TetherClient, serve_environment


@asynccontextmanager
async def connect(
    root: Path,
    options: dict[str, Any],
    *,
    environ: dict[str, str] | None = None,
    events: bool = True,
) -> AsyncIterator[TetherClient]:
    """A client connected to a fresh ``tether serve`` for ``root``; shut down on exit."""
    root = Path(await anyio.Path(root).resolve())
    env = serve_environment(dict(os.environ if environ is None else environ))
    async with anyio.create_task_group() as tg:
        process = await anyio.open_process(
            list(TetherClient.command()), env=env, cwd=str(root), stderr=None
        )
        async with process:
            client = TetherClient(process, tg)
            tg.start_soon(client.read_messages)
            try:
                await client.initialize(root, options, events=events)
                yield client
            finally:
                with anyio.CancelScope(shield=True):
                    await client.shutdown()
                tg.cancel_scope.cancel()
