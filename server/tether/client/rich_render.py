"""The terminal renderer on a colour terminal, with Rich: the answer as Markdown, tool
calls and results as cards, a styled outcome line, and diffs highlighted in the file's
language. Imported only when the output is such a terminal (Rich costs ~40 ms to load).

Each assistant message streams as raw text, then, when it ends, that text is erased and
the message shown once more rendered, in its place: the answer is on the screen once. A
message that grows nearly as tall as the screen is rendered in parts before it ends: the
blocks that are complete (paragraphs, code, the items of a list) are rendered and stay, the
rest streams on raw under them; a block still taller than the screen streams as its last
rows, under a dim ``…``, until it is complete. Nothing of it ever scrolls off the screen
unrendered, so whatever its height the answer is Markdown, wrapped at word boundaries."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from typing import Any

from rich.cells import get_character_cell_size
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markdown import Markdown
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from tether_protocol import (
    AssistantEvent,
    RetryEvent,
    RunEvent,
    RunFinishedEvent,
    TextDeltaEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolProgressEvent,
    ToolResultEvent,
    UsageEvent,
)

from ..text import display
from ..text.model import split_lines
from ..workspace.folders import path_from_uri
from .render import (
    DiffPrinter,
    TerminalRenderer,
    _arguments,
    footer_line,
    ok,
    outcome_line,
    retry_text,
    shown_event,
    shown_output,
    shown_result,
)
from .streamed_text import ERASE_BELOW, TAB, TerminalSize, stdout_size
from .terminal import TextOut

CODE_THEME = "ansi_dark"
"""Pygments colours mapped to the terminal's own palette, readable on any background."""


def console_for(out: TextOut) -> Console:
    """A Rich console writing to ``out`` (a terminal), as wide as the terminal."""
    return Console(
        file=out,  # type: ignore[arg-type]  # write and flush are all it uses
        force_terminal=True,
        width=shutil.get_terminal_size((100, 24)).columns,
        highlight=False,
        markup=False,
        emoji=False,
    )


WRAPPED = "↪"
"""The gutter of a diff line's continuation rows (where a line too wide for the terminal
goes on): the sign's colour, so an added line's end reads as added."""

_SIGNS = {"+": "bold green", "-": "bold red", " ": "dim"}


class HighlightedDiff:
    """A unified diff with its added and removed lines highlighted in the file's language
    (its file names and lines shown as text from outside is: ``text.display``). A line
    wider than the terminal wraps at word boundaries; each row it goes on to keeps its
    highlighting and has ``↪`` in the gutter, in the colour of the line's sign."""

    def __init__(self, diff: str, uri: str) -> None:
        diff = display.shown(diff, lines=True)
        path = path_from_uri(uri)
        lexer = Syntax.guess_lexer(str(path)) if path is not None else "text"
        code = Syntax("", lexer, theme=CODE_THEME)
        self.lines: list[tuple[str | None, Text]] = []
        """Each line's sign (None: a header, shown as it is) and its text after it."""
        for line in split_lines(diff):
            if line.startswith(("+++", "---")):
                self.lines.append((None, _expanded(Text(line, style="bold"))))
            elif line.startswith("@@"):
                self.lines.append((None, _expanded(Text(line, style="cyan"))))
            elif line[:1] in _SIGNS:
                body = code.highlight(line[1:])
                body.rstrip()
                if line[0] != " ":
                    body.stylize("on #005f00" if line[0] == "+" else "on #5f0000")
                whole = Text(line[0])  # the tabs as the terminal draws them, from its column 0
                whole.append_text(body)
                self.lines.append((line[0], _expanded(whole)[1:]))
            else:
                self.lines.append((None, _expanded(Text(line, style="dim"))))  # "\ No newline"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(2, options.max_width)
        shown = Text()
        for sign, text in self.lines:
            if sign is None:
                shown.append_text(text)
                shown.append("\n")
                continue
            rows = text.wrap(console, width - 1, overflow="fold", no_wrap=False) or [Text()]
            for number, row in enumerate(rows):
                shown.append(sign if number == 0 else WRAPPED, style=_SIGNS[sign])
                shown.append_text(row)
                shown.append("\n")
        yield shown


def _expanded(text: Text) -> Text:
    """``text`` with its tabs as spaces, as the terminal draws them: measured as drawn."""
    text.expand_tabs(TAB)
    return text


def highlighted_diff(diff: str, uri: str) -> HighlightedDiff:
    """A diff as a colour terminal shows it (``HighlightedDiff``)."""
    return HighlightedDiff(diff, uri)


class Rows:
    """Where the terminal rows of a text written from the start of a row begin, counted as
    it is written: a VT100 wraps before a character that does not fit, a tab stops at the
    next multiple of 8 and never wraps. Text that moves the cursor itself (escape sequences,
    carriage returns: never the model's, which is shown escaped) cannot be counted."""

    def __init__(self, columns: int, text: str = "") -> None:
        self.columns = max(1, columns)
        self.starts = [0]
        """The offset in the text of each row's first character (the last: the cursor's)."""
        self.countable = True
        self._column = 0
        self._length = 0
        self.add(text)

    def add(self, piece: str) -> None:
        """A piece as written after the rest."""
        for offset, char in enumerate(piece, self._length):
            if char == "\n":
                self.starts.append(offset + 1)
                self._column = 0
            elif char == "\t":
                self._column = max(
                    self._column, min(self.columns - 1, (self._column // TAB + 1) * TAB)
                )
            elif char < " " or "\x7f" <= char < "\xa0":
                self.countable = False
            else:
                width = get_character_cell_size(char)
                if self._column + width > self.columns:
                    self.starts.append(offset)
                    self._column = 0
                self._column += width
        self._length += len(piece)

    @property
    def above(self) -> int:
        """How many rows above the cursor the text began."""
        return len(self.starts) - 1


def settled(text: str) -> tuple[int, bool] | None:
    """Where streaming Markdown ``text`` can be cut so that what comes before is complete
    and renders as it will in the end: before its last top-level block (a block after it has
    begun), else, in a list that is its one block, before the list's last item. The offset,
    and whether the cut is inside a list (its parts are shown without a blank line between
    them); None when it has one block and that block is no list of two items."""
    tokens = Markdown(text).parsed
    tops = [t.map[0] for t in tokens if t.level == 0 and t.nesting >= 0 and t.map]
    if len(tops) >= 2 and tops[-1] > tops[0]:
        return _line_offset(text, tops[-1]), False
    if tops and tokens[0].type in ("bullet_list_open", "ordered_list_open"):
        items = [t.map[0] for t in tokens if t.type == "list_item_open" and t.level == 1 and t.map]
        if len(items) >= 2 and items[-1] > items[0]:
            return _line_offset(text, items[-1]), True
    return None


def _line_offset(text: str, line: int) -> int:
    """Where line ``line`` (from 0) of ``text`` begins."""
    at = 0
    for _ in range(line):
        at = text.index("\n", at) + 1
    return at


@dataclass
class _Live:
    """The message streaming now, as far as it is not rendered yet, and its rows on the
    screen (the raw text, or, ``cropped``, a dim ``…`` over its last rows)."""

    size: tuple[int, int] | None
    """The terminal's size when it began (a resize rewraps the rows: not countable)."""
    erasable: bool
    """False once something else was written among it, or it did not start a row."""
    text: str = ""
    rows: Rows = field(default_factory=lambda: Rows(1))
    up: int = 0
    """How many rows above the cursor what the screen shows of it begins."""
    lead: int = 0
    """Blank rows over the raw text (the line between a rendered part and the next block)."""
    cropped: bool = False
    parted: bool = False
    """Whether a part of the message is already rendered (then no "Answer:" heading)."""
    joined: bool = False
    """Whether the last part ended inside a list (the next goes on without a blank line)."""

    def eraser(self, size: tuple[int, int] | None) -> str | None:
        """What takes the cursor back to where the screen's rows of it begin and clears
        all below; None when they cannot be reached or counted."""
        if not self.erasable or size is None or size != self.size or not self.rows.countable:
            return None
        if self.up >= size[1]:
            return None
        return "\r" + (f"\x1b[{self.up}A" if self.up else "") + ERASE_BELOW


CROPPED = "…"
"""The dim line over a block shown by its last rows while it is taller than the screen."""


class RichRenderer(TerminalRenderer):
    """``TerminalRenderer`` with Rich's styling; the events and the flow are the same."""

    def __init__(self, out: TextOut, size: TerminalSize = stdout_size) -> None:
        super().__init__(out, color=True)
        self.console = console_for(self.out)
        self._size = size
        self._live: _Live | None = None
        """The message streaming now (or ended, not yet replaced), as far as not rendered."""
        self._ended: str | None = None
        """The text of a message that ended, shown rendered at the next event (which tells
        whether it was the answer: the run ends, rather than a tool being called)."""
        self._shown: str | None = None
        """The last message's text on the screen, so that the summary does not repeat it."""

    def render(self, event: RunEvent) -> None:
        """Show one event; a message's streamed text is replaced once it has ended."""
        event = shown_event(event)
        if isinstance(event, TextDeltaEvent):
            self._clear_spinner()
            self._running = None
            self._thinking_since = None
            self.streamed += event.text
            self._stream(event.text)
            return
        if isinstance(event, AssistantEvent):
            self._clear_spinner()
            self._thinking_since = None
            self._ended = event.text
            return
        elif isinstance(event, RetryEvent):
            # Between a step and its reply; mid-message only when a continuation is retried,
            # and then the streamed text's rows can no longer be counted.
            self.others_wrote()
        elif not isinstance(event, UsageEvent | ToolProgressEvent | ThinkingEvent):
            self._settle(answer=isinstance(event, RunFinishedEvent))  # not while one runs
        super().render(event)

    def others_wrote(self) -> None:
        """Something else went to the terminal (Ctrl-C's notice): the rows of the streamed
        text can no longer be counted, so it stays."""
        if self._live is not None:
            self._live.erasable = False

    # --- a message as it streams -------------------------------------------------------------
    def _stream(self, piece: str) -> None:
        """A piece of the message: written as it came while the unrendered part fits on the
        screen; else its complete blocks are rendered first (or its end shown alone)."""
        live = self._live
        if live is None:
            size = self._size()
            live = _Live(size, not self._mid_line and size is not None)
            live.rows = Rows(size[0] if size is not None else 80)
            self._live = live
        line_began = live.text.endswith("\n")
        rows = live.rows.above
        live.text += piece
        live.rows.add(piece)
        same_row = not line_began and "\n" not in piece and live.rows.above == rows
        if live.cropped and live.erasable and same_row:  # its last row goes on: as it comes
            self._write_raw(piece)
            return
        look = not live.cropped or line_began or "\n" in piece
        tall = live.cropped or live.lead + live.rows.above >= self._room(live)
        if live.erasable and tall and self._relieve(live, look=look):
            return
        self._write_raw(piece)  # fits; or the screen lost track of its rows: as it comes
        if not live.cropped:
            live.up = live.lead + live.rows.above

    def _room(self, live: _Live) -> int:
        """How many rows the raw part may fill before it is rendered or cropped."""
        return (live.size[1] if live.size is not None else 24) - 2

    def _relieve(self, live: _Live, *, look: bool) -> bool:
        """Render the complete blocks of the part on the screen (when ``look``: a block can
        only have begun on a new line) and show the rest raw, or its last rows when it is
        still too tall; False when the screen's rows cannot be taken back."""
        room = self._room(live)
        eraser = live.eraser(self._size())
        if eraser is None or room < 4:
            live.erasable = False
            return False
        self.out.write(eraser)
        self._mid_line = False
        while look and live.lead + live.rows.above >= room:
            cut = settled(live.text)
            if cut is None:
                break
            at, joined = cut
            self._part(live, live.text[:at])
            live.joined = joined
            live.lead = 0 if joined else 1  # the blank line between blocks, over the rest
            live.text = live.text[at:]
            live.rows = Rows(live.rows.columns, live.text)
        self.out.write("\n" * live.lead)
        if live.lead + live.rows.above < room:
            live.cropped = False
            self._write_raw(live.text)
            live.up = live.lead + live.rows.above
            return True
        shown = room - 1 - live.lead
        tail = live.text[live.rows.starts[-shown] :]
        self.out.write(self._style(CROPPED, "2") + "\n")
        self._write_raw(tail)
        live.cropped = True
        live.up = live.lead + shown
        return True

    def _part(self, live: _Live, text: str) -> None:
        """Render a part of the message: after another part, a blank line between blocks
        and none inside a list, as the message rendered whole would show them."""
        with self.console.capture() as captured:
            self.console.print(Markdown(text, code_theme=CODE_THEME))
        rendered = captured.get()
        if live.parted:  # Rich opens a Markdown that starts with a list with a blank line
            rendered = ("" if live.joined else "\n") + rendered.lstrip("\n")
        live.parted = True
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        self.out.write(rendered)
        self.out.flush()

    def _write_raw(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()
            self._mid_line = not text.endswith("\n")

    def _settle(self, *, answer: bool) -> None:
        """Replace the ended message's streamed text with it rendered (``answer``: under
        the "Answer:" heading), or leave the streamed text when the screen lost its top."""
        live, text = self._live, self._ended
        self._live = self._ended = None
        if text is None or not text.strip():  # cut off (cancelled) or no text: as streamed
            if live is not None and live.cropped:  # only its end shows: all of it, as it came
                eraser = live.eraser(self._size())
                self.out.write(eraser + "\n" * live.lead if eraser else "")
                if self._mid_line and not eraser:
                    self.out.write("\n")
                self._mid_line = False
                self._write_raw(live.text)
            return
        self._shown = text
        if live is not None:
            eraser = live.eraser(self._size())
            if eraser is None and not live.cropped:
                return  # the screen's rows could not be counted: the streamed text stays
            self.out.write(eraser or "")
            self._mid_line = self._mid_line and eraser is None
            if live.parted:
                if live.text.strip():
                    self._part(live, live.text)
                return
        if answer:
            self._print(Text("Answer:", style="bold"))
        self._answer(text)

    def summary(self, result: dict[str, Any]) -> None:
        """The outcome, and the answer unless it is already on the screen."""
        result = shown_result(result)
        self._clear_spinner()
        self._thinking_since = None
        self._settle(answer=True)
        if not result.get("answer") or result["answer"] != self._shown:
            super().summary(result)
            return
        self._outcome(outcome_line(result), result["outcome"] == "done")

    def finish_turn(self, result: dict[str, Any], seconds: float) -> None:
        """A chat turn's end: the streamed answer rendered in its place, then the footer."""
        result = shown_result(result)
        self._clear_spinner()
        self._thinking_since = None
        self._settle(answer=False)
        answer = result.get("answer")
        if answer and answer != self._shown and answer.strip() not in self.streamed:
            self._answer(answer)
        self._shown = None
        self._footer(result, seconds)

    def _footer(self, result: dict[str, Any], seconds: float) -> None:
        self._print(
            Text(
                footer_line(result, seconds, self.usage), style="dim" if ok(result) else "bold red"
            )
        )

    def _print(self, renderable: RenderableType, *, one_line: bool = False) -> None:
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        self.console.print(renderable, soft_wrap=one_line)  # soft: the terminal wraps ids
        self.out.flush()

    def _tool_call(self, event: ToolCallEvent) -> None:
        line = Text("→ ", style="cyan")
        line.append(event.label or event.tool, style="bold cyan")
        line.append(" " + _arguments(event.arguments), style="cyan")
        self._print(line, one_line=True)

    def _tool_result(self, event: ToolResultEvent) -> None:
        first, *rest = shown_output(event.output)
        body = Text(first)
        for line in rest:
            body.append("\n" + line, style="dim")
        body.expand_tabs(TAB)  # measured as drawn: a tab left in is one cell wide, drawn as 8
        colour = "green" if event.ok else "red"
        title = Text(
            f"{'✓' if event.ok else '✗'} {event.label or event.tool}", style=f"bold {colour}"
        )
        self._print(Panel(body, title=title, title_align="left", border_style=colour, expand=False))

    def _retry(self, event: RetryEvent) -> None:
        self._print(Text(retry_text(event), style="dim"), one_line=True)

    def _answer(self, text: str) -> None:
        self._print(Markdown(text, code_theme=CODE_THEME))

    def _outcome(self, detail: str, done: bool) -> None:
        self._print(Text(detail, style="dim" if done else "bold red"), one_line=True)

    def diff_printer(self) -> DiffPrinter | None:
        """Approvals show their diffs highlighted."""
        return self.show_diff

    def show_diff(self, diff: str, uri: str) -> None:
        """An approval's diff, highlighted in the file's language."""
        self._print(highlighted_diff(diff, uri))
