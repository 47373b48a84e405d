"""The chat's input line, with prompt_toolkit: history kept per folder, multi-line input
(Alt-Enter or Esc-Enter inserts a newline; a paste keeps its newlines), Tab completion of
``/commands`` and ``@paths``, Ctrl-R search. Imported only by the chat (it costs ~60 ms)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from ..writes.private import private_folder, touch_private

HISTORY_FOLDER = "chat-history"
MAX_COMPLETIONS = 200


def history_file(state_dir: Path, folder: Path) -> Path:
    """Where the chat keeps what was typed in ``folder`` (one file per folder)."""
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    return state_dir / HISTORY_FOLDER / f"{digest}.txt"


class ChatCompleter(Completer):
    """``/`` at the start completes a command's name; a word starting with ``@`` completes
    a path under the folder (hidden entries only when the typed name starts with a dot)."""

    def __init__(self, root: Path, commands: Callable[[], Sequence[tuple[str, str]]]) -> None:
        self.root = root
        self.commands = commands
        """The commands' names (without ``/``) and one-line help, asked at each completion
        (the server's list arrives after the chat starts)."""

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            for name, help_text in self.commands():
                if name.startswith(text[1:]):
                    yield Completion("/" + name, -len(text), display_meta=help_text)
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            yield from self._paths(word)

    def _paths(self, word: str) -> Iterable[Completion]:
        typed = word[1:]
        folder, _, start = typed.rpartition("/")
        base = (self.root / folder).resolve()
        if not base.is_relative_to(self.root) or not base.is_dir():
            return
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            if not entry.name.startswith(start):
                continue
            if entry.name.startswith(".") and not start.startswith("."):
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            path = f"{folder}/{entry.name}" if folder else entry.name
            yield Completion("@" + path + ("/" if is_dir else ""), -len(word))
            shown += 1
            if shown >= MAX_COMPLETIONS:
                return


def _bindings() -> KeyBindings:
    keys = KeyBindings()

    @keys.add("escape", "enter")  # Alt-Enter sends the same: ESC then CR
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return keys


class ChatInput:
    """Reads one message at a time; ``EOFError`` on Ctrl-D at an empty prompt,
    ``KeyboardInterrupt`` on Ctrl-C."""

    def __init__(
        self,
        root: Path,
        state_dir: Path,
        commands: Callable[[], Sequence[tuple[str, str]]],
        color: bool,
    ) -> None:
        path = history_file(state_dir, root)
        try:  # what was typed is the user's alone: made 0600 (FileHistory only appends)
            touch_private(private_folder(path.parent) / path.name)
            history: FileHistory | None = FileHistory(str(path))
        except OSError:  # no writable state folder: a chat without memory
            history = None
        self.color = color
        self.session: PromptSession[str] = PromptSession(
            history=history,
            completer=ChatCompleter(root, commands),
            complete_while_typing=False,
            key_bindings=_bindings(),
            multiline=False,
            enable_history_search=False,  # Up walks the history; Ctrl-R searches it
            prompt_continuation=lambda width, line, wrap: "… ".rjust(width),
        )

    async def read(self) -> str:
        """The next message as typed."""
        mark = "\x1b[1;36m›\x1b[0m " if self.color else "› "
        return await self.session.prompt_async(ANSI(mark))
