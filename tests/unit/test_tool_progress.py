"""What a running command shows of itself (``tools/progress.py``): its last line as a
terminal leaves it, the end of its output, both shown as text from outside is."""

from __future__ import annotations

from tether.tools.progress import LAST_LINE_CHARS, TAIL_CHARS, TAIL_LINES, OutputWatch


def watched(*chunks: bytes) -> OutputWatch:
    watch = OutputWatch()
    for chunk in chunks:
        watch.feed(chunk)
    return watch


def test_the_last_line_that_is_not_blank_even_before_its_line_end() -> None:
    assert watched(b"one\ntwo\n\n  \n").last_line() == "two"
    assert watched(b"one\ntw", b"o and a half").last_line() == "two and a half"
    assert watched().last_line() == "" and watched().tail() == ""


def test_a_progress_bar_reads_as_the_terminal_leaves_it() -> None:
    watch = watched(b"downloading\n 10%\r 55%\r", b" 90%\r")
    assert watch.last_line() == " 90%"
    assert watch.tail() == "downloading\n 90%\n"


def test_a_character_split_between_reads_is_whole() -> None:
    euro = "€".encode()
    assert watched(b"price ", euro[:1], euro[1:], b"\n").last_line() == "price €"


def test_foreign_controls_are_shown_escaped_never_raw() -> None:
    watch = watched(b"\x1b[2Jcleared \xe2\x80\xaeevil\x07\n")
    assert watch.last_line() == "\\x1b[2Jcleared \\u202eevil\\x07"
    assert "\x1b" not in watch.tail() and "\u202e" not in watch.tail()


def test_long_lines_and_long_outputs_are_capped() -> None:
    watch = watched(b"x" * 5000)
    assert len(watch.last_line()) == LAST_LINE_CHARS and watch.last_line().endswith("…")
    many = watched(b"".join(b"line %d\n" % n for n in range(1000)))
    assert many.tail().splitlines() == [f"line {n}" for n in range(1000 - TAIL_LINES, 1000)]
    wide = watched(b"".join(b"%04d " % n + b"y" * 300 + b"\n" for n in range(30)))
    tail = wide.tail()
    assert len(tail) <= TAIL_CHARS + 1
    assert tail.splitlines() == [f"{n:04d} " + "y" * 300 for n in range(24, 30)]  # whole lines
    assert wide.last_line().startswith("0029 ")
