"""Ask the user in the terminal: a coloured diff or the command, then allow / always / deny."""

from __future__ import annotations

import contextlib
import difflib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

from tether_protocol import ApproveParams, CommandPreview

from ..text.display import shown
from ..text.model import split_lines
from .render import _cells, styled_terminal
from .terminal import END_OF_INPUT, TextOut, open_terminal, read_key, read_line

ASKED = "[n] deny  [?] more > "
"""How every question ends (the choices before it depend on the call)."""
PROMPT = f"[y] allow  [A] always  [e] edit  {ASKED}"
"""The question for an edit the server offers no rule for ("always": that tool, for this
session). Each answer is one key, no Enter."""
REASON = "  why? (Enter skips) > "
LEGEND = """\
  y or a  allow this call
  n or d  deny it (then a one-line reason for the model; Enter skips)
  A       always allow this exact call
  p       always allow by the wider rule shown (when the server offers one)
  e       edit the command or the proposed text in $EDITOR, then decide
  ?       this legend
"""
EDIT_LINE = "  e       edit"
"""The legend's line an MCP call leaves out: the server takes no changed call."""


def editable(tool: str) -> bool:
    """Whether the user may change the call before allowing it: not an MCP server's tool
    (the server refuses a changed call, so ``[e]`` is not offered)."""
    return not tool.startswith("mcp__")


def legend(tool: str) -> str:
    """The legend for a call of ``tool``."""
    if editable(tool):
        return LEGEND
    return "".join(line for line in LEGEND.splitlines(True) if not line.startswith(EDIT_LINE))


@dataclass(frozen=True)
class Offer:
    """The allow-always rules the server offered (``suggestedPatterns``), as the prompt
    uses them: ``exact`` for ``[A]`` (the command's words, or the file), ``wide`` for ``[p]``
    (``pytest *``, ``src/*.py``). The client computes none itself."""

    exact: str | None = None
    wide: str | None = None


def offer_of(params: ApproveParams) -> Offer:
    """Split the server's suggestions (narrowest first) into the exact and the wider rule."""
    patterns = [p for p in params.suggested_patterns or [] if p.strip()]
    if not patterns:
        return Offer()
    exact: str | None = patterns[0]
    preview = params.preview
    if isinstance(preview, CommandPreview) and exact != " ".join(preview.command.split()):
        exact = None  # only a wider rule (`git commit *` for a quoted command): [p] offers it
    wide = patterns[-1] if patterns[-1] != exact else None
    return Offer(exact, wide)


def command_prompt(pattern: str | None, tool: str = "bash") -> str:
    """The question for a command: always this exact command, or by the offered rule. An
    MCP server's tool (shown as a command) is a call: its rule ``*`` is every call of it."""
    if tool.startswith("mcp__"):
        wide = f"every `{shown(tool)}` call" if pattern == "*" else f"`{shown(pattern or '')}`"
        offer = f"  [p] always {wide} in this project" if pattern else ""
        return f"[y] allow  [A] always this exact call{offer}  {ASKED}"
    offer = f"  [p] always `{shown(pattern)}` in this project" if pattern else ""
    return f"[y] allow  [A] always this exact command{offer}  [e] edit  {ASKED}"


def edit_prompt(offer: Offer) -> str:
    """The question for an edit: always this file (this session), or the offered folder
    rule in this project; the bare one when the server offered none."""
    if offer.exact is None:
        return PROMPT
    wide = f"  [p] always `{shown(offer.wide)}` in this project" if offer.wide else ""
    return f"[y] allow  [A] always `{shown(offer.exact)}`{wide}  [e] edit  {ASKED}"


WRAPPED = "↪"
"""The gutter of a diff line's continuation rows on a colour terminal, in its sign's colour."""
_COLOURS = {"+": "32", "-": "31"}


def colour_diff(diff: str, color: bool, columns: int | None = None) -> str:
    """A unified diff with additions green and removals red; its file names and lines come
    from outside, shown as such (``text.display``). On a colour terminal (``columns`` wide,
    else as wide as this process's) a line too wide for it goes on under ``↪`` in the
    gutter, in its colour: the end of an added line still reads as added."""
    diff = shown(diff, lines=True)
    if not color:
        return diff
    if columns is None:
        columns = shutil.get_terminal_size((100, 24)).columns
    out = []
    for line in split_lines(diff):  # a form feed inside a line stays inside it
        if line.startswith(("+++", "---")):
            out.append(f"\x1b[1m{line}\x1b[0m")
        elif line[:1] in ("+", "-", " "):
            colour = _COLOURS.get(line[0])
            for number, row in enumerate(rows_of(line.expandtabs(TAB)[1:], columns - 1)):
                row = (line[0] if number == 0 else WRAPPED) + row
                out.append(f"\x1b[{colour}m{row}\x1b[0m" if colour else row)
        elif line.startswith("@@"):
            out.append(f"\x1b[36m{line}\x1b[0m")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


TAB = 8


def rows_of(text: str, width: int) -> list[str]:
    """``text`` cut into rows of at most ``width`` terminal cells (wide characters take
    two), as a terminal would wrap it."""
    rows: list[str] = []
    row, cells = "", 0
    for char in text:
        size = _cells(char)
        if cells + size > max(width, 2) and row:
            rows.append(row)
            row, cells = "", 0
        row += char
        cells += size
    rows.append(row)
    return rows


class TerminalApprover:
    """Answers ``agent/approve``: shows the change, asks (or approves it all with ``yes``).

    The question waits on the event loop, so Ctrl-C (``interrupt``) ends it at once, and
    Ctrl-D (end of input) is a denial.
    """

    def __init__(
        self,
        *,
        yes: bool,
        out: TextOut | None = None,
        ask: Callable[[str], str] | None = None,
        color: bool | None = None,
        yes_reason: str = "--yes",
        diff_printer: Callable[[str, str], None] | None = None,
        hold: Callable[[bool], None] | None = None,
    ) -> None:
        self.yes = yes
        self.hold = hold
        """Told True while the user is asked, False after (the renderer's spinner stops)."""
        self.yes_reason = yes_reason
        self.out: TextOut = out or sys.stdout
        self.color = styled_terminal(self.out) if color is None else color
        self._ask = ask
        self.diff_printer = diff_printer
        """Shows a diff highlighted (Rich, on a colour terminal); else ``colour_diff``."""
        self._asking: anyio.CancelScope | None = None
        self.interrupted = False
        """After a Ctrl-C (or a closed output) every further question is denied unasked."""

    def interrupt(self) -> None:
        """Stop asking: the open question (if any) and every later one are denied."""
        self.interrupted = True
        if self._asking is not None:
            self._asking.cancel()

    def show(self, params: ApproveParams) -> None:
        """Print what the call would do, as text from outside is shown (``text.display``:
        a title or a name that hides an escape sequence cannot rewrite the question)."""
        self.out.write(f"\n{shown(params.title)}\n")
        preview = params.preview
        if isinstance(preview, CommandPreview):
            shell = "$ " if editable(params.tool) else ""  # an MCP call is no command
            # each line of a long command indented under the first: none can pass for a line
            # of Tether's own (the question, a title)
            command = shown(preview.command, lines=True).replace("\n", "\n  " + " " * len(shell))
            self.out.write(f"  {shell}{command}\n  (in {shown(preview.cwd)})\n")
        elif self.diff_printer is not None:
            self.diff_printer(shown(preview.diff, lines=True), preview.uri)
        else:
            self.out.write(colour_diff(preview.diff, self.color))
        self.out.flush()

    async def _read(
        self, prompt: str, fd: int | None, *, line: bool = False, hidden: bool = False
    ) -> str | None:
        """The user's answer, one key (or a ``line``, not shown as typed when ``hidden``);
        None when they ended the input (Ctrl-D) or interrupted."""
        if self.interrupted:
            return None
        with anyio.CancelScope() as scope:
            self._asking = scope
            try:
                if self._ask is not None:
                    answer = (await anyio.to_thread.run_sync(self._ask, prompt)).strip()
                    return answer if line or answer else None
                if line:
                    text = await read_line(prompt, self.out, fd, hidden=hidden)
                    return None if text is None else text.strip()
                key = await read_key(prompt, self.out, fd)
                if key == END_OF_INPUT:
                    return None
                self.out.write(f"{key if key.isprintable() else ''}\n")  # the key, echoed
                self.out.flush()
                return key
            finally:
                self._asking = None
        return None  # cancelled by ``interrupt``

    def _denied(self, why: str) -> dict[str, Any]:
        self.out.write(f"\n  → denied ({why})\n")
        self.out.flush()
        return {"decision": "deny", "feedback": f"the user {why}"}

    @contextlib.contextmanager
    def asking(self) -> Iterator[None]:
        """The spinner held off the screen while the user is asked (``hold``)."""
        if self.hold is not None:
            self.hold(True)
        try:
            yield
        finally:
            if self.hold is not None:
                self.hold(False)

    async def __call__(self, raw: Any) -> dict[str, Any]:
        with self.asking():
            return await self._approve(raw)

    async def _approve(self, raw: Any) -> dict[str, Any]:
        params = ApproveParams.model_validate(raw, strict=False)
        self.show(params)
        if self.yes:
            self.out.write(f"  → allowed ({self.yes_reason})\n")
            return {"decision": "allow"}
        terminal = None if self._ask is not None else open_terminal()
        if self._ask is None and terminal is None:
            self.out.write("  → denied (no terminal to ask; use --yes to allow)\n")
            return {"decision": "deny", "feedback": "no one was there to approve it"}
        fd, opened = terminal or (None, False)
        try:
            return await self._decide(params, fd)
        finally:
            if opened and fd is not None:
                os.close(fd)

    async def _decide(self, params: ApproveParams, fd: int | None) -> dict[str, Any]:
        """Ask until one key decides."""
        offer = offer_of(params)
        if isinstance(params.preview, CommandPreview):
            prompt = command_prompt(offer.wide, params.tool)
        else:
            prompt = edit_prompt(offer)
        edits: dict[str, Any] = {}
        while True:
            answer = await self._read(prompt, fd)
            if answer is None:
                return self._denied("cancelled" if self.interrupted else "ended the input")
            if answer in ("y", "a"):
                return {"decision": "allow", **edits}
            if answer == "A":
                if offer.exact is None or edits:
                    return {"decision": "allow-always", **edits}
                return {
                    "decision": "allow-always",
                    "rule": {"pattern": offer.exact, "scope": "session"},
                }
            if answer == "p" and offer.wide is not None and not edits:
                self.out.write(
                    f"  → always allowed in this project: {shown(params.tool)} "
                    f"`{shown(offer.wide)}`\n"
                )
                self.out.flush()
                rule = {"pattern": offer.wide, "scope": "project"}
                return {"decision": "allow-always", "rule": rule}
            if answer in ("n", "d"):
                feedback = await self._read(REASON, fd, line=True)
                return {"decision": "deny", **({"feedback": feedback} if feedback else {})}
            if answer == "e" and self._ask is None and editable(params.tool):
                edited = await self._edit(params, edits, fd)
                if edited is not None:
                    edits = edited
                    offer = Offer()  # a rule for the proposed call would not cover the edit
                    prompt = f"[y] allow the edited version  {ASKED}"
                continue
            self.out.write(legend(params.tool))
            self.out.flush()

    async def _edit(
        self, params: ApproveParams, edits: dict[str, Any], fd: int | None
    ) -> dict[str, Any] | None:
        """The user's version of the call, edited in ``$VISUAL``/``$EDITOR`` (None: left
        as it was, or no editor could run), shown before they decide on it."""
        preview = params.preview
        if isinstance(preview, CommandPreview):
            before = edits.get("arguments", {}).get("command", preview.command)
            suffix = ".sh"
        elif preview.proposed is not None:
            before = edits.get("editedText", preview.proposed.text)
            suffix = Path(preview.uri).suffix or ".txt"
        else:
            self.out.write("  (this server sends no text to edit)\n")
            return None
        after = await anyio.to_thread.run_sync(edit_text, before, suffix, fd)
        if after is None:
            self.out.write("  (the editor failed: nothing changed)\n")
            return None
        if isinstance(preview, CommandPreview):
            after = after.strip()
            if not after or after == before:
                self.out.write("  (unchanged)\n")
                return None
            self.out.write(f"  edited:\n  $ {shown(after, lines=True)}\n")
            return {"arguments": {**params.arguments, "command": after}}
        if after == before:
            self.out.write("  (unchanged)\n")
            return None
        assert preview.proposed is not None
        diff = "".join(
            difflib.unified_diff(
                preview.proposed.base_text.splitlines(keepends=True),
                after.splitlines(keepends=True),
                "before",
                "edited",
            )
        )
        self.out.write("  edited:\n")
        if self.diff_printer is not None:
            self.diff_printer(shown(diff, lines=True), preview.uri)
        else:
            self.out.write(colour_diff(diff, self.color))
        return {"editedText": after}


def edit_text(text: str, suffix: str, fd: int | None) -> str | None:
    """``text`` as the user left it in their editor (``$VISUAL``, ``$EDITOR``, else ``vi``),
    run on the terminal ``fd`` (else this process's own); None when it failed."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="tether-edit-") as folder:
        path = Path(folder) / f"proposed{suffix}"
        path.write_text(text)
        try:
            status = subprocess.run(
                [*shlex.split(editor), str(path)],
                stdin=fd,
                stdout=fd,
                stderr=fd,
                check=False,
            ).returncode
        except (OSError, ValueError):
            return None
        if status != 0:
            return None
        return path.read_text()
