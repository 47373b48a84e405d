"""What every protocol front does with runs, once: a created run served to its result, a
session's MCP servers started, and the end of input (every run stopped, the servers, the
log). A front (``lsp/``, ``acp/``) validates its protocol's requests, calls these, and
turns the results into its protocol's answers; it owns no run machinery of its own."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether_protocol import McpServerSettings, RunResult

from ..providers.sdk import close_shared_http
from ..session.writer import SessionLogWriter
from .manager import Run, RunManager

if TYPE_CHECKING:
    from ..mcp.hub import McpHub

_BACKGROUND: set[asyncio.Task[Any]] = set()
"""The tasks started here and not awaited by anyone (kept, so none is collected early)."""


def background(work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """``work`` as a task of its own whose failure is read (not logged as unretrieved)."""
    task = asyncio.ensure_future(work)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
    return task


async def serve_run(runs: RunManager, run: Run, setup: Awaitable[None] | None = None) -> RunResult:
    """Run the created ``run`` to its result, as a task of its own awaited shielded: when
    the request waiting for it is cancelled (the client's cancel, the end of input), the run
    is cancelled and wound down, and its result is still returned (the request is
    answered). ``setup`` is the front's own preparation (LSP: the client's progress token),
    awaited before the model is called: a cancel meanwhile ends the run ``cancelled``
    without a model call."""
    task = asyncio.ensure_future(runs.execute(run, setup))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        current = asyncio.current_task()
        runs.cancel(run.run_id)
        result = await task
        if current is not None:
            current.uncancel()
        return result


def start_mcp(
    environ: Mapping[str, str],
    servers: Mapping[str, McpServerSettings],
    root: Path,
    warn: Any = None,
) -> McpHub:
    """A session's MCP servers, starting in the background at once (a run waits for the ones
    still in their first start, bounded and shown); ``warn`` tells the user one could not
    start. The hub runs until ``close_front`` (or its own ``close``). Imported only when
    servers are configured."""
    from ..mcp.hub import McpHub

    hub = McpHub(environ, warn)
    background(hub.serve())

    async def configure() -> None:
        await hub.configure(dict(servers), root)
        hub.start()

    background(configure())
    return hub


async def close_front(
    runs: RunManager,
    hubs: Iterable[McpHub],
    log_writer: SessionLogWriter,
    runs_seconds: float,
    hubs_seconds: float,
) -> None:
    """The end of input: cancel every run (their tools and children end with them) and
    stop the MCP servers (their process groups killed) side by side, each within its
    time, then close the session log (which writes what is queued) and the connections
    kept to model APIs. Every session's background jobs end too, within the runs' time."""
    runs.cancel_all()
    jobs = runs.close_jobs()

    async def bounded(work: Awaitable[Any], seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(work, timeout=seconds)

    closing = [hub.close() for hub in hubs]
    await asyncio.gather(
        bounded(runs.wait_all(), runs_seconds),
        *(bounded(asyncio.wait([job]), runs_seconds) for job in jobs),
        *(bounded(hub, hubs_seconds) for hub in closing),
        return_exceptions=True,
    )
    log_writer.close()
    await close_shared_http()
