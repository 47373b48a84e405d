"""A background job's output ring (``tools/jobs.JobOutput``): whatever a job prints, in
whatever pieces, and whenever it is read, memory stays bounded and every read gives what
came since the last one — all of it when it still fits, else its start and its end with
the count of what fell out between, never a character twice, never one out of order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tether.tools.jobs import JobOutput

HEAD, TAIL = 8, 16

pieces = st.lists(st.tuples(st.text(alphabet="ab\né€\r", max_size=40), st.booleans()), max_size=30)


@given(pieces)
@settings(max_examples=300, deadline=None)
def test_reads_cover_the_stream_in_order_with_bounded_memory(steps: list[tuple[str, bool]]) -> None:
    ring = JobOutput(head=HEAD, tail=TAIL)
    stream = ""
    position = 0
    seen = 0  # characters given or counted as lost so far
    for text, read in steps:
        ring.feed(text.encode("utf-8"))
        stream += text
        assert ring.written == len(stream)
        assert len(ring._head) <= HEAD and len(ring._tail) <= 2 * TAIL + len(text)
        if read:
            got, lost = ring.since(position)
            new = stream[position:]
            if lost == 0:
                assert got == new
            else:
                # what is given: a start of what is new (the head's part), then its end
                assert len(got) + lost == len(new)
                assert any(
                    got[:h] == new[:h] and got[h:] == new[len(new) - (len(got) - h) :]
                    for h in range(len(got) + 1)
                ), (got, new)
            seen += len(got) + lost
            position = ring.written
    assert seen == position


def test_a_multibyte_character_split_between_reads_arrives_whole() -> None:
    ring = JobOutput(head=HEAD, tail=TAIL)
    data = "é".encode()
    ring.feed(data[:1])
    assert ring.since(0) == ("", 0)
    ring.feed(data[1:])
    assert ring.since(0) == ("é", 0)


def test_the_last_line_is_the_last_one_not_blank_as_a_terminal_shows_it() -> None:
    ring = JobOutput()
    ring.feed(b"building\n 10%\r 55%\r100%\n\n")
    assert ring.last_line() == "100%"
