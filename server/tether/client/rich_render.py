"""The terminal renderer on a colour terminal, with Rich: the answer as Markdown, tool
calls and results as cards, a styled outcome line, and diffs highlighted in the file's
language. Imported only when the output is such a terminal (Rich costs ~40 ms to load).

Each assistant message streams as raw text, then, when it ends, that text is erased and
the message shown once more rendered, in its place: the answer is on the screen once. A
message taller than the screen cannot be taken back; its streamed text stays as it is."""

from __future__ import annotations

import shutil
from typing import Any

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
from .streamed_text import TAB, StreamedText, TerminalSize, stdout_size
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


class RichRenderer(TerminalRenderer):
    """``TerminalRenderer`` with Rich's styling; the events and the flow are the same."""

    def __init__(self, out: TextOut, size: TerminalSize = stdout_size) -> None:
        super().__init__(out, color=True)
        self.console = console_for(self.out)
        self._size = size
        self._streamed: StreamedText | None = None
        """The raw text of the message streaming now (or ended, not yet replaced)."""
        self._ended: str | None = None
        """The text of a message that ended, shown rendered at the next event (which tells
        whether it was the answer: the run ends, rather than a tool being called)."""
        self._shown: str | None = None
        """The last message's text on the screen, so that the summary does not repeat it."""

    def render(self, event: RunEvent) -> None:
        """Show one event; a message's streamed text is replaced once it has ended."""
        event = shown_event(event)
        if isinstance(event, TextDeltaEvent):
            if self._streamed is None:
                self._streamed = StreamedText(not self._mid_line, self._size())
            self._streamed.add(event.text)
        elif isinstance(event, AssistantEvent):
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
        if self._streamed is not None:
            self._streamed.erasable = False

    def _settle(self, *, answer: bool) -> None:
        """Replace the ended message's streamed text with it rendered (``answer``: under
        the "Answer:" heading), or leave the streamed text when the screen lost its top."""
        streamed, text = self._streamed, self._ended
        self._streamed = self._ended = None
        if text is None or not text.strip():  # cut off (cancelled) or no text: as streamed
            return
        self._shown = text
        if streamed is not None:
            eraser = streamed.eraser(self._size())
            if eraser is None:
                return  # taller than the screen: the streamed text is its one copy
            self.out.write(eraser)
            self._mid_line = False
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
