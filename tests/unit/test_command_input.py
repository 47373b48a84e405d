"""The question a command's input asks the user (``tools/command_input.py``), as ``agent/ask``
sends it, whatever the command printed: within the protocol's length with the command's
question whole at its end, nothing a terminal would act on left raw."""

from __future__ import annotations

import os
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tether.lsp.ask import ask_params
from tether.tools.ask import Question
from tether.tools.command_input import command_question
from tether.tools.input_wait import PROMPT_CHARS, asked_line, open_input_terminal
from tether_protocol.ask import MAX_QUESTION

NASTY = st.sampled_from(["\x1b[2J", "\x1b]0;x\x07", "\u202e", "\u200b", "\r", "\x07", "\t"])
TEXT = st.lists(st.one_of(st.text(max_size=30), NASTY), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@example(command="\u202e" * 500, before=("\u202e" * 200 + "\n") * 9, prompt="\u202e" * 300)
@given(command=TEXT, before=TEXT, prompt=TEXT.filter(lambda p: p.strip() and "\n" not in p))
def test_the_question_fits_and_ends_with_what_the_command_asked(
    command: str, before: str, prompt: str
) -> None:
    recent = f"{before}\n{prompt}"
    asked = asked_line(recent)
    sent = ask_params(Question("r1", "call_1", command_question(command, recent), secret=True))
    assert len(sent.question) <= MAX_QUESTION
    assert sent.question.endswith("dismiss this to end the command.")  # never cut
    assert not asked or len(asked) <= PROMPT_CHARS
    raw = [c for c in sent.question if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf")]
    assert raw == [], raw
    assert sent.secret is True


def test_a_typed_answer_is_shown_once_where_it_was_typed() -> None:
    """The answer's echo goes to the output when it is typed; the terminal's own echo of it,
    read later (after what the command printed meanwhile), is left out, and what the
    command writes to its terminal after it is kept."""
    terminal = open_input_terminal()
    if terminal is None:
        pytest.skip("no /proc syscall view here: commands get /dev/null, nothing is typed")
    shown: list[bytes] = []
    try:
        assert terminal.type("yes\n", shown=shown.append)
        assert shown == [b"yes\n"]
        assert os.read(terminal.slave, 100) == b"yes\n"  # the command reads it (echoed by now)
        os.write(terminal.slave, b"next? ")  # and asks again on its terminal
        read = b""
        while not read.endswith(b"next? "):
            chunk = terminal.drain(10.0)
            assert chunk, f"the terminal went quiet after {read!r}"
            read += chunk
        assert read == b"next? "
        # A password's answer: the echo turned off first, nothing shown, nothing to leave out.
        assert terminal.type("s3cret\n", hidden=True, shown=shown.append)
        assert os.read(terminal.slave, 100) == b"s3cret\n"
        os.write(terminal.slave, b"done\n")
        assert terminal.drain(10.0) == b"done\n"
        assert shown == [b"yes\n"]
    finally:
        terminal.close()
