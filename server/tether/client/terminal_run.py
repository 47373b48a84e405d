"""One run driven from the terminal: Ctrl-C, a closed output and a server that fails to
start all end it cleanly, with an exit status like other Unix tools and no traceback."""

from __future__ import annotations

import json
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

from tether_protocol import RunEvent

from .approver import TerminalApprover
from .asker import TerminalAsker, can_ask_here
from .connection import ServerError, TetherClient
from .exits import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from .exits import EXIT_NOT_DONE as EXIT_NOT_DONE
from .exits import EXIT_OK as EXIT_OK
from .exits import EXIT_PIPE_CLOSED as EXIT_PIPE_CLOSED
from .exits import EXIT_USAGE as EXIT_USAGE
from .headless import connect
from .history import remember
from .render import TerminalRenderer, styled_terminal
from .terminal import GuardedOutput, TextOut, on_interrupt
from .words import terminal_words


def make_renderer(out: TextOut) -> TerminalRenderer:
    """The renderer for ``out``: Rich's Markdown, highlighted diffs and tool cards on a
    terminal, today's plain text anywhere else (Rich is imported only then)."""
    if not styled_terminal(out):
        return TerminalRenderer(out, color=False)
    from .rich_render import RichRenderer

    return RichRenderer(out)


@dataclass
class TerminalRun:
    """What to run and how to show it."""

    root: Path
    prompt: str
    options: dict[str, Any]
    """The ``initializationOptions``: the flags (the server assembles what lies under them)."""
    state_dir: Path
    """Where the server keeps the session (``config.assemble`` says, as for the server)."""
    yes: bool = False
    as_json: bool = False
    yes_reason: str = "--yes"
    run_params: dict[str, Any] = field(default_factory=dict)
    intro: str | None = None
    """A line shown before the run starts (the demo says where its project is)."""


class _Stopper:
    """Turns Ctrl-C and a closed output into a cancelled run, then a quick exit."""

    def __init__(self, run_id: str, err: GuardedOutput) -> None:
        self.run_id = run_id
        self.err = err
        self.client: TetherClient | None = None
        self.approver: TerminalApprover | None = None
        self.renderer: TerminalRenderer | None = None
        self.everything: anyio.CancelScope | None = None
        self.interrupts = 0
        self.output_closed = False

    def _stop_run(self) -> None:
        if self.client is not None:
            # The open question is denied only once the server knows the run is cancelled:
            # a denial that came first would let the run go on to its next step.
            self.client.cancel_soon(self.run_id, then=self._stop_asking)
        else:
            self._stop_asking()
            if self.everything is not None:
                self.everything.cancel()  # nothing started yet: just leave

    def _stop_asking(self) -> None:
        if self.approver is not None:
            self.approver.interrupt()

    def interrupt(self) -> None:
        """Ctrl-C: the first cancels the run, the second leaves at once."""
        self.interrupts += 1
        if self.renderer is not None:
            self.renderer.others_wrote()
        if self.interrupts == 1:
            self.err.write("\ntether: cancelling the run (Ctrl-C again to quit)\n")
            self.err.flush()
            self._stop_run()
        elif self.everything is not None:
            self.everything.cancel()

    def closed(self) -> None:
        """Our output's reader went away: nobody is watching, so stop."""
        if not self.output_closed:
            self.output_closed = True
            self._stop_run()


def _server_error(exc: BaseException) -> ServerError | None:
    """The server's error inside ``exc`` (possibly a task group's exception group)."""
    if isinstance(exc, ServerError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _server_error(inner)) is not None:
                return found
    return None


def terminal_message(error: ServerError) -> str:
    """A server error in the words of someone at a terminal, not of the protocol."""
    if error.message == "the server exited":
        return "the server stopped before the run could start (its error is above)"
    return terminal_words(error.message)


async def run_in_terminal(job: TerminalRun, server: Process | None = None) -> int:
    """Run ``job`` in a fresh server (``server``, if already started) and show it; the
    process exit status."""
    run_id = "r-" + uuid.uuid4().hex[:16]
    err = GuardedOutput(sys.stderr)
    stopper = _Stopper(run_id, err)
    out = GuardedOutput(sys.stdout, stopper.closed)
    renderer = TerminalRenderer(out, color=False) if job.as_json else make_renderer(out)
    approver = TerminalApprover(
        yes=job.yes,
        out=err if job.as_json else out,
        color=None if job.as_json else renderer.color,
        yes_reason=job.yes_reason,
        diff_printer=renderer.diff_printer(),
        hold=renderer.hold,
    )
    stopper.approver = approver
    stopper.renderer = renderer
    result: dict[str, Any] | None = None
    if job.intro and not job.as_json:
        renderer._line(renderer._style(job.intro, "2"))

    def show(event: RunEvent) -> None:
        if job.as_json:
            out.write(event.model_dump_json(by_alias=True) + "\n")
            out.flush()
        else:
            renderer(event)

    try:
        with anyio.CancelScope() as everything, on_interrupt(stopper.interrupt):
            stopper.everything = everything
            asker = TerminalAsker(approver) if can_ask_here() else None  # else: no one to ask
            async with connect(
                job.root, job.options, approver=approver, asker=asker, process=server
            ) as client:
                stopper.client = client
                client.on_event = show
                client.on_notice = renderer.others_wrote
                async with anyio.create_task_group() as spinner:
                    if not job.as_json and renderer.color:
                        spinner.start_soon(renderer.animate)
                    result = await client.run(job.prompt, runId=run_id, **job.run_params)
                    spinner.cancel_scope.cancel()
    except (ServerError, BaseExceptionGroup) as exc:
        error = _server_error(exc)
        if error is None:
            raise
        if stopper.output_closed:
            return EXIT_PIPE_CLOSED
        err.write(f"tether: {terminal_message(error)}\n")
        return EXIT_INTERRUPTED if stopper.interrupts else EXIT_USAGE
    if stopper.output_closed:
        return EXIT_PIPE_CLOSED
    if result is None:
        err.write("tether: stopped\n")
        return EXIT_INTERRUPTED
    await anyio.to_thread.run_sync(remember, job.state_dir, result["sessionId"], job.root)
    if job.as_json:
        out.write(json.dumps({"result": result}) + "\n")
        out.flush()
    else:
        renderer.summary(result)
    if stopper.output_closed:
        return EXIT_PIPE_CLOSED
    if stopper.interrupts:
        return EXIT_INTERRUPTED
    return EXIT_OK if result["outcome"] == "done" else EXIT_NOT_DONE
