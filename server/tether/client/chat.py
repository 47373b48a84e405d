"""``tether`` (``tether chat``): a conversation in the terminal. A prompt, the answer
streamed, the prompt again, all in one session of one server; approvals take one key;
Ctrl-C cancels the turn (the chat goes on), Ctrl-D on an empty prompt leaves.

Slash commands: the ones that act on a session come from the server (``agent/commands``,
run with ``agent/command``), so every front offers the same; the ones only a terminal has
(help, exit, sessions, resume, rules) are here."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from tether_protocol import (
    AGENT_COMMAND_METHOD,
    AGENT_COMMANDS_METHOD,
    AGENT_RULES_LIST_METHOD,
    AGENT_RULES_REMOVE_METHOD,
)

from .approver import TerminalApprover
from .asker import TerminalAsker
from .connection import ServerError, TetherClient
from .exits import EXIT_OK, EXIT_USAGE
from .headless import connect
from .history import remember, sessions
from .render import TerminalRenderer
from .terminal import GuardedOutput, on_interrupt, unechoed
from .terminal_run import TerminalRun, _server_error, make_renderer, terminal_message

FRONT_COMMANDS: dict[str, str] = {
    "help": "these commands",
    "sessions": "this folder's sessions, numbered",
    "resume": "N|ID: go on with a listed session",
    "rules": "the rules in force; `/rules remove N` removes one",
    "diff": "what this session changed, as one diff",
    "exit": "leave (Ctrl-D does too)",
}
"""The commands of the terminal alone (the server lists the others)."""


@dataclass
class Chat:
    """One chat: its server, its session, what it shows."""

    job: TerminalRun
    client: TetherClient
    renderer: TerminalRenderer
    approver: TerminalApprover
    session_id: str | None = None
    server_commands: list[dict[str, Any]] = field(default_factory=list)
    listed: list[str] = field(default_factory=list)
    """The session ids ``/sessions`` showed last, for ``/resume N``."""
    running: bool = False

    def say(self, text: str, style: str = "2") -> None:
        """A line of the chat's own (dim unless told)."""
        self.renderer._line(self.renderer._style(text, style))

    def commands(self) -> list[tuple[str, str]]:
        """Every command's name and help, for ``/help`` and completion."""
        listed = [(c["name"], c["description"]) for c in self.server_commands]
        return sorted([*listed, *FRONT_COMMANDS.items()])

    # --- a turn --------------------------------------------------------------------------
    async def turn(self, prompt: str) -> None:
        """Run ``prompt`` in the session; Ctrl-C cancels it (twice: stops waiting)."""
        run_id = "r-" + uuid.uuid4().hex[:16]
        params: dict[str, Any] = {k: v for k, v in self.job.run_params.items() if k != "sessionId"}
        if self.session_id is not None:
            params["sessionId"] = self.session_id
        self.approver.interrupted = False
        interrupts = 0
        started = time.monotonic()
        result: dict[str, Any] | None = None
        with anyio.CancelScope() as waiting:

            def interrupt() -> None:
                nonlocal interrupts
                interrupts += 1
                self.renderer.others_wrote()
                if interrupts == 1:
                    self.client.cancel_soon(run_id, then=self.approver.interrupt)
                else:
                    waiting.cancel()

            with on_interrupt(interrupt), unechoed(sys.stdin):
                async with anyio.create_task_group() as spinner:
                    if self.renderer.color:
                        spinner.start_soon(self.renderer.animate)
                    try:
                        result = await self.client.run(prompt, runId=run_id, **params)
                    finally:
                        spinner.cancel_scope.cancel()
        if result is None:
            self.say("interrupted (the server is still stopping the run)", "33")
            return
        self.session_id = result["sessionId"]
        await anyio.to_thread.run_sync(remember, self.job.state_dir, self.session_id, self.job.root)
        self.renderer.finish_turn(result, time.monotonic() - started)

    # --- slash commands ------------------------------------------------------------------
    async def command(self, text: str) -> bool:
        """Do ``/name args``; False when the chat should end."""
        name, _, argument = text[1:].partition(" ")
        argument = argument.strip()
        if name in ("exit", "quit"):
            return False
        front = FRONT_ACTIONS.get(name)
        if front is not None:
            await front(self, argument)
            return True
        if any(c["name"] == name for c in self.server_commands):
            await self.server_command(name, argument)
            return True
        self.say(f"unknown command /{name}: /help lists the commands", "33")
        return True

    async def server_command(self, name: str, argument: str) -> None:
        """A session command, done by the server."""
        params: dict[str, Any] = {"name": name}
        if argument:
            params["argument"] = argument
        if self.session_id is not None:
            params["sessionId"] = self.session_id
        try:
            answer = await self.client.request(AGENT_COMMAND_METHOD, params)
        except ServerError as exc:
            self.say(f"/{name}: {terminal_message(exc)}", "33")
            return
        if answer.get("newSession"):
            self.session_id = None
        for line in str(answer.get("message", "")).splitlines():
            self.say(line, "0")

    async def load_commands(self) -> None:
        """The server's session commands (none from a server that has no list)."""
        try:
            answer = await self.client.request(AGENT_COMMANDS_METHOD, {})
        except ServerError:
            return
        self.server_commands = list(answer.get("commands") or [])


async def _help(chat: Chat, argument: str) -> None:
    for name, help_text in chat.commands():
        chat.say(f"  /{name:<10} {help_text}", "0")
    chat.say("  Enter sends · Alt-Enter a new line · Tab completes /commands and @paths")
    chat.say("  Ctrl-R searches what you typed · Ctrl-C stops a turn · Ctrl-D leaves")


async def _sessions(chat: Chat, argument: str) -> None:
    rows = await anyio.to_thread.run_sync(sessions, chat.job.state_dir, chat.job.root, 10)
    chat.listed = [row.session_id for row in rows]
    if not rows:
        chat.say("no sessions in this folder yet")
        return
    for number, row in enumerate(rows, 1):
        mark = "*" if row.session_id == chat.session_id else " "
        chat.say(
            f" {mark}{number:>2}  {row.session_id}  {row.updated}  {row.runs} run(s)  "
            f"{' '.join(row.last_prompt.split())[:50]}",
            "0",
        )


async def _resume(chat: Chat, argument: str) -> None:
    if not argument:
        chat.say("/resume N or /resume ID (/sessions lists them)", "33")
        return
    if argument.isdigit():
        if not chat.listed:
            rows = await anyio.to_thread.run_sync(sessions, chat.job.state_dir, chat.job.root, 10)
            chat.listed = [row.session_id for row in rows]
        number = int(argument)
        if not 1 <= number <= len(chat.listed):
            chat.say(f"no session number {number}: /sessions lists {len(chat.listed)}", "33")
            return
        chat.session_id = chat.listed[number - 1]
    else:
        chat.session_id = argument  # the server says, at the next message, if it knows none
    chat.say(f"resumed session {chat.session_id}")


async def _rules(chat: Chat, argument: str) -> None:
    from .rules_cli import pick, table

    try:
        listed = await chat.client.request(AGENT_RULES_LIST_METHOD, {})
        verb, _, which = argument.partition(" ")
        if verb == "remove" and which.strip():
            found = pick(listed.get("rules") or [], which.strip(), None)
            if isinstance(found, str):
                chat.say(found, "33")
                return
            await chat.client.request(AGENT_RULES_REMOVE_METHOD, {"rule": found})
            chat.say(f"removed {found['decision']} {found['tool']} `{found['pattern']}`")
            return
        if argument:
            chat.say("/rules, or /rules remove N", "33")
            return
    except ServerError as exc:
        chat.say(f"/rules: {terminal_message(exc)}", "33")
        return
    for line in table(listed).splitlines():
        chat.say(line, "0")


async def _diff(chat: Chat, argument: str) -> None:
    from .approver import colour_diff
    from .chat_diff import session_diff

    if chat.session_id is None:
        chat.say("no run yet: nothing changed")
        return
    diff, notes = await anyio.to_thread.run_sync(
        session_diff, chat.job.state_dir, chat.session_id, chat.job.root
    )
    if diff:
        printer = chat.renderer.diff_printer()
        if printer is not None:
            printer(diff, "")
        else:
            chat.renderer.out.write(colour_diff(diff, chat.renderer.color))
            chat.renderer.out.flush()
    for note in notes:
        chat.say(note, "33")
    if not diff and not notes:
        chat.say("this session has changed no file (or its changes were undone)")


FRONT_ACTIONS: dict[str, Callable[[Chat, str], Awaitable[None]]] = {
    "diff": _diff,
    "help": _help,
    "sessions": _sessions,
    "resume": _resume,
    "rules": _rules,
}


async def chat_in_terminal(job: TerminalRun) -> int:
    """Chat in ``job.root`` until the user leaves; the process exit status."""
    from .chat_input import ChatInput

    err = GuardedOutput(sys.stderr)
    out = GuardedOutput(sys.stdout)
    renderer = make_renderer(out)
    renderer.echo_prompt = False  # the prompt is on the screen as typed
    approver = TerminalApprover(
        yes=job.yes,
        out=out,
        color=renderer.color,
        diff_printer=renderer.diff_printer(),
        hold=renderer.hold,
    )
    try:
        asker = TerminalAsker(approver)
        async with connect(job.root, job.options, approver=approver, asker=asker) as client:
            client.on_event = renderer
            client.on_notice = renderer.others_wrote
            chat = Chat(job, client, renderer, approver, job.run_params.get("sessionId"))
            await chat.load_commands()
            reader = ChatInput(job.root, job.state_dir, chat.commands, renderer.color)
            resumed = f" · session {chat.session_id}" if chat.session_id else ""
            chat.say(f"tether in {job.root}{resumed} · /help for commands · Ctrl-D leaves")
            await _talk(chat, reader)
    except (ServerError, BaseExceptionGroup) as exc:
        error = _server_error(exc)
        if error is None:
            raise
        err.write(f"tether: {terminal_message(error)}\n")
        return EXIT_USAGE
    return EXIT_OK


async def _talk(chat: Chat, reader: Any) -> None:
    warned = False
    while True:
        try:
            text = await reader.read()
        except KeyboardInterrupt:
            if not warned:
                chat.say("(Ctrl-D or /exit leaves; Ctrl-C during a turn stops it)")
            warned = True
            continue
        except EOFError:
            return
        warned = False
        text = text.strip()
        if not text:
            continue
        if text.startswith("/") and not text.startswith("//"):
            if not await chat.command(text):
                return
            continue
        try:
            await chat.turn(text)
        except ServerError as exc:
            if exc.message == "the server exited":
                raise
            chat.say(f"tether: {terminal_message(exc)}", "31")
