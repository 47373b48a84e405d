"""LSP framing (``tether.framing``, both directions) and the stdio transport around it."""

from __future__ import annotations

import asyncio
import io
import json
import os
import threading
import time
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from tether.framing import (
    FrameDecoder,
    FrameError,
    FrameReader,
    Oversized,
    UnframeableStream,
    content_length,
    frame,
)
from tether.lsp.dispatch import MAX_ECHO, answer_oversized, clip, dispatch, recover_id
from tether.lsp.transport import FLUSH_BYTES, FLUSH_SECONDS, StdoutWriter

from ..waiting import wait_until


def test_frames_split_across_reads_and_headers_in_any_case() -> None:
    read_fd, write_fd = os.pipe()
    bodies = [b'{"a": 1}', '{"é": "🌍"}'.encode(), b"{}"]
    data = b"".join(
        b"content-length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n%s"
        % (len(body), body)
        for body in bodies
    )
    os.write(write_fd, data)
    os.close(write_fd)
    reader = FrameReader(read_fd)
    assert [reader.read_frame() for _ in range(4)] == [*bodies, None]
    os.close(read_fd)


def test_a_truncated_body_is_end_of_input() -> None:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"Content-Length: 10\r\n\r\n{}")
    os.close(write_fd)
    assert FrameReader(read_fd).read_frame() is None
    os.close(read_fd)


class Sink(io.BytesIO):
    """A stdout that records each write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.writes.append(bytes(data))
        return super().write(data)


async def test_frames_of_one_loop_turn_go_out_in_one_write_and_in_order() -> None:
    sink = Sink()
    writer = StdoutWriter(sink, asyncio.get_running_loop())
    bodies = [b'{"n": %d}' % n for n in range(100)]
    for body in bodies:
        writer.write(body)
    assert sink.writes == []  # held until the loop's turn ends
    await asyncio.sleep(0)  # models: the loop's turn ends (a yield, not a wait for time)
    assert sink.writes == [b"".join(frame(body) for body in bodies)]


async def test_a_long_burst_is_written_without_waiting_for_the_loop() -> None:
    sink = Sink()
    writer = StdoutWriter(sink, asyncio.get_running_loop())
    writer.write(b"{}")
    time.sleep(FLUSH_SECONDS * 2)  # models a loop turn kept busy (blocks, on purpose)
    writer.write(b"[]")
    assert sink.getvalue() == frame(b"{}") + frame(b"[]")
    writer.write(b"x" * FLUSH_BYTES)
    assert sink.getvalue().endswith(b"x" * FLUSH_BYTES)


async def test_frames_from_other_threads_reach_the_loop_and_close_flushes() -> None:
    sink = Sink()
    writer = StdoutWriter(sink, asyncio.get_running_loop())
    thread = threading.Thread(target=writer.write, args=(b"{}",))
    thread.start()
    thread.join()
    await wait_until(lambda: sink.getvalue() == frame(b"{}"), "the thread's frame on the sink")
    writer.write(b"[]")
    writer.close()
    assert sink.closed and sink.writes[-1] == frame(b"[]")
    writer.write(b"late")  # after close: dropped, not raised
    writer.flush()


def test_without_a_loop_every_frame_is_written_at_once() -> None:
    sink = Sink()
    writer = StdoutWriter(sink)
    body = '{"é": 1}'.encode()  # 8 characters, 9 bytes: the length counts bytes
    writer.write(body)
    assert sink.getvalue().startswith(b"Content-Length: 9\r\n")
    assert sink.getvalue().endswith(b"\r\n\r\n" + body)


def test_what_the_writer_sends_a_client_decodes_even_byte_by_byte() -> None:
    sink = Sink()
    writer = StdoutWriter(sink)
    bodies = [b'{"a": 1}', '{"é": "🌍"}'.encode(), b"{}", b"[" + b"1," * 5000 + b"1]"]
    for body in bodies:
        writer.write(body)
    decoder = FrameDecoder()
    received = []
    for byte in sink.getvalue():
        decoder.feed(bytes([byte]))
        received += list(decoder)
    assert received == bodies


def test_the_decoder_reads_headers_in_any_case_and_order() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"content-type: x\r\nCONTENT-LENGTH : 2\r\n\r\n{}Content-Length: 2\r\n\r\n[]")
    assert list(decoder) == [b"{}", b"[]"]
    assert list(decoder) == []


def test_a_header_block_is_read_as_the_server_reader_reads_it() -> None:
    # The last valid length wins (an earlier one is a header cut short), as in FrameReader.
    assert content_length(b"Content-Length: 5\r\nContent-Length: 7") == 7
    with pytest.raises(FrameError):
        content_length(b"Content-Length: -5\r\nContent-Type: x")
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length: ten\r\n\r\n{}")
    with pytest.raises(FrameError):
        list(decoder)


def test_the_decoder_refuses_an_endless_header() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length: 2" + b" " * 70_000)
    with pytest.raises(FrameError):
        list(decoder)


# --- hostile framing (issue 12, item 3) ---------------------------------------------------


def reader_of(data: bytes, **options: Any) -> tuple[FrameReader, int]:
    """A reader over a pipe that holds ``data`` and stays open (the client waits)."""
    read_fd, write_fd = os.pipe()
    os.write(write_fd, data)
    return FrameReader(read_fd, **options), write_fd


def read_all(data: bytes, **options: Any) -> list[Any]:
    """Every frame of ``data`` followed by end of input."""
    read_fd, write_fd = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_fd, data), os.close(write_fd)))
    writer.start()
    reader = FrameReader(read_fd, **options)
    frames: list[Any] = []
    while (item := reader.read_frame()) is not None:
        frames.append(bytes(item) if isinstance(item, bytearray) else item)
    writer.join()
    os.close(read_fd)
    return frames


GOOD = b'{"jsonrpc":"2.0","id":1,"method":"m"}'


@pytest.mark.parametrize(
    "broken",
    [
        b"Content-Length: 10\r\n\r\n" + GOOD,  # too short: the rest runs into the next header
        b"Content-Length: -5\r\n\r\n" + GOOD,
        b"Content-Length: 1e3\r\n\r\n" + GOOD,
        b"Content-Type: x\r\n\r\n" + GOOD,  # no length
        GOOD,  # no header at all
        b"X-Other: 1\r\n\r\n" + GOOD,  # not an LSP header
        b"\x00\xff\xfe" * 50_000 + b"\r\n",  # binary noise longer than a header line may be
    ],
)
def test_the_reader_resynchronises_on_the_next_header(broken: bytes) -> None:
    frames = read_all(broken + frame(b"{}"))
    assert frames[-1] == b"{}"
    assert all(isinstance(f, bytes) for f in frames)


def test_a_length_too_long_is_cut_where_the_next_frame_starts() -> None:
    data = b"Content-Length: %d\r\n\r\n" % (len(GOOD) + 100) + GOOD + frame(b"[1]")
    assert read_all(data) == [GOOD, b"[1]"]


@pytest.mark.parametrize("extra", range(1, 24))
def test_a_header_cut_anywhere_by_a_body_whose_length_was_too_long_loses_neither(
    extra: int,
) -> None:
    """The body took ``extra`` bytes of the next frame's header ("Content-Length: 3\\r\\n")."""
    data = b"Content-Length: %d\r\n\r\n" % (len(GOOD) + extra) + GOOD + frame(b"[2]")
    frames = read_all(data)
    assert frames == [GOOD, b"[2]"]


def test_a_header_split_across_reads_inside_a_long_body_is_found() -> None:
    read_fd, write_fd = os.pipe()
    reader = FrameReader(read_fd)
    os.write(write_fd, b"Content-Length: 1000\r\n\r\n" + GOOD + b"Content-Le")
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(reader.read_frame()))
    thread.start()
    os.write(write_fd, b"ngth: 2\r\n\r\n{}")
    thread.join(5)
    assert result == [bytearray(GOOD)]
    assert reader.read_frame() == b"{}"
    os.close(write_fd)
    os.close(read_fd)


def test_a_stalled_frame_that_holds_a_whole_message_is_delivered() -> None:
    reader, write_fd = reader_of(b"Content-Length: 500\r\n\r\n" + GOOD, stall_seconds=0.05)
    assert reader.read_frame() == GOOD
    os.write(write_fd, frame(b"{}"))  # later input is read as headers again
    assert reader.read_frame() == b"{}"
    os.close(write_fd)


def test_a_stalled_frame_that_is_not_yet_json_waits_for_the_rest() -> None:
    reader, write_fd = reader_of(b"Content-Length: 4\r\n\r\n[1", stall_seconds=0.05)
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(reader.read_frame()))
    thread.start()
    thread.join(0.3)
    assert thread.is_alive() and result == []  # a slow writer is not cut off
    os.write(write_fd, b"2]")
    thread.join(5)
    assert result == [b"[12]"]
    os.close(write_fd)


def test_a_message_without_a_header_is_read_when_the_stream_stalls_after_it() -> None:
    reader, write_fd = reader_of(b"junk {" + GOOD, stall_seconds=0.05)
    assert reader.read_frame() == GOOD
    os.write(write_fd, frame(b"{}"))
    assert reader.read_frame() == b"{}"
    os.close(write_fd)


def test_input_without_any_frame_beyond_the_cap_is_given_up() -> None:
    with pytest.raises(UnframeableStream):
        read_all(b"no header here\n" * 20_000, max_bytes=65536)


# --- message cap (item 4) ----------------------------------------------------------------


def test_a_body_over_the_cap_is_skipped_keeping_only_its_ends() -> None:
    body = b'{"jsonrpc":"2.0","id":9,"method":"m","params":"' + b"x" * 300_000 + b'"}'
    frames = read_all(frame(body) + frame(b"{}"), max_bytes=100_000)
    skipped, after = frames
    assert isinstance(skipped, Oversized) and skipped.length == len(body)
    assert len(skipped.head) + len(skipped.tail) <= 2 * 65536
    assert recover_id(skipped.head, skipped.tail) == 9
    assert after == b"{}"


def test_an_oversized_body_that_stalls_is_reported_and_its_rest_still_skipped() -> None:
    body = b'{"jsonrpc":"2.0","id":4,"method":"m","params":"' + b"y" * 300_000 + b'"}'
    # the first part fits the pipe's buffer (64 KiB): the writer then pauses
    reader, write_fd = reader_of(frame(body)[:60_000], max_bytes=65536, stall_seconds=0.05)
    skipped = reader.read_frame()  # the writer paused mid-body: answered without waiting
    assert isinstance(skipped, Oversized) and recover_id(skipped.head, skipped.tail) == 4
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(reader.read_frame()))
    thread.start()
    # the rest is dropped as part of that body, not read as garbage (past the garbage limit)
    os.write(write_fd, frame(body)[60_000:] + frame(b"{}"))
    thread.join(5)
    assert result == [b"{}"]
    os.close(write_fd)


def test_a_lying_oversized_length_stops_at_the_next_header_even_split_across_reads() -> None:
    read_fd, write_fd = os.pipe()
    reader = FrameReader(read_fd, max_bytes=65536)
    os.write(write_fd, b"Content-Length: 999999999\r\n\r\n" + GOOD + b"Content-Len")
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(reader.read_frame()))
    thread.start()
    os.write(write_fd, b"gth: 2\r\n\r\n{}")
    thread.join(5)
    assert isinstance(result[0], Oversized)
    assert reader.read_frame() == b"{}"
    os.close(write_fd)
    os.close(read_fd)


def test_the_cap_is_read_for_every_frame() -> None:
    cap = [1000]
    data = frame(b"[" + b"1," * 600 + b"1]") * 2
    read_fd, write_fd = os.pipe()
    os.write(write_fd, data)
    os.close(write_fd)
    reader = FrameReader(read_fd, max_bytes=lambda: cap[0])
    assert isinstance(reader.read_frame(), Oversized)
    cap[0] = 2000
    assert isinstance(reader.read_frame(), bytearray)
    os.close(read_fd)


@pytest.mark.parametrize(
    ("head", "tail", "found"),
    [
        (b'{"jsonrpc":"2.0","id":"a\\"b","method":"x","params":{"id":3', b"", 'a"b'),
        (b'{"method":"x","jsonrpc":"2.0","id":12,"params":', b"", 12),
        (b'{"params":{"id":3,', b'"x"}},"jsonrpc":"2.0","id":-4}', -4),
        (b'{"params":{"id":3,', b'"x"}},"id":5,"jsonrpc":"2.0"}', None),
        (b'{"params":{"id":3}', b"", None),
    ],
)
def test_the_id_of_a_skipped_body_is_recovered_only_at_the_top_level(
    head: bytes, tail: bytes, found: Any
) -> None:
    assert recover_id(head, tail) == found


# --- dispatch: one parse, bounded errors (items 2 and 4) -----------------------------------


class FakeProtocol:
    """Records what the dispatcher sends and hands on."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.handled: list[Any] = []
        self._request_futures: dict[Any, Any] = {}
        self._result_types: dict[Any, Any] = {}

    def _send_data(self, data: dict[str, Any]) -> None:
        self.sent.append(data)

    def structure_message(self, data: dict[str, Any]) -> Any:
        if data.get("method") == "typed":
            raise JsonRpcInvalidParams("wrong shape " + "w" * 10_000)
        return data

    def handle_message(self, message: Any) -> None:
        self.handled.append(message)


@pytest.mark.parametrize(
    ("body", "code", "msg_id"),
    [
        (b"[" * 100_000 + b"]" * 100_000, -32600, None),
        (b'{"jsonrpc":"2.0","id":4,"method":"m","params":' + b"[" * 50_000, -32600, 4),
        (
            b'{"jsonrpc":"2.0","id":4,"method":"m","params":' + b"[" * 300 + b"]" * 300 + b"}",
            -32600,
            4,
        ),
        (b'{"jsonrpc":"2.0","id":4,"method":', -32700, None),
        (b"\xff\xfe", -32700, None),
        (b"[1]", -32600, None),
        (b'{"jsonrpc":"2.0","id":[1],"method":"m"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"m"}', -32600, None),
        (b'{"jsonrpc":"1.0","id":5,"method":"m"}', -32600, 5),
        (b'{"jsonrpc":"2.0","id":5,"method":7}', -32600, 5),
        (b'{"jsonrpc":"2.0","id":5,"method":"typed"}', -32602, 5),
        (b'{"jsonrpc":"2.0","id":5,"method":"m","params":{"t":"a\\ud800"}}', -32600, 5),
        (b'{"jsonrpc":"2.0","id":5,"method":"m","params":{"\\udfff":1}}', -32600, 5),
        (b'{"jsonrpc":"2.0","id":5,"method":"m","params":["\xed\xa0\x80"]}', -32600, 5),
    ],
)
def test_bad_messages_are_answered_without_reaching_the_protocol(
    body: bytes, code: int, msg_id: Any
) -> None:
    protocol = FakeProtocol()
    dispatch(protocol, bytearray(body))  # type: ignore[arg-type]
    assert protocol.handled == []
    [answer] = protocol.sent
    assert answer["id"] == msg_id and answer["error"]["code"] == code
    assert len(answer["error"]["message"]) < 400


def test_an_unreadable_answer_fails_the_request_waiting_for_it() -> None:
    protocol = FakeProtocol()
    waiting: asyncio.Future[Any] = asyncio.new_event_loop().create_future()
    protocol._request_futures["srv-1"] = waiting
    dispatch(protocol, b'{"jsonrpc":"2.0","id":"srv-1","method":"typed"}')  # type: ignore[arg-type]
    # a request with that id is answered; an answer (no method) fails the waiting request
    protocol.sent.clear()
    protocol.structure_message = lambda data: (_ for _ in ()).throw(ValueError("bad"))  # type: ignore[method-assign]
    dispatch(protocol, b'{"jsonrpc":"2.0","id":"srv-1","result":"Allow"}')  # type: ignore[arg-type]
    assert waiting.done() and isinstance(waiting.exception(), JsonRpcException)
    assert protocol.sent == []


def test_an_oversized_request_is_refused_and_an_oversized_answer_fails_its_request() -> None:
    protocol = FakeProtocol()
    answer_oversized(protocol, Oversized(10**8, b'{"jsonrpc":"2.0","id":3,"method":"m"', b""), 99)  # type: ignore[arg-type]
    [refusal] = protocol.sent
    assert refusal["id"] == 3 and "maxMessageBytes" in refusal["error"]["message"]
    waiting: asyncio.Future[Any] = asyncio.new_event_loop().create_future()
    protocol._request_futures["srv-2"] = waiting
    protocol._result_types["srv-2"] = None
    answer_oversized(
        protocol, Oversized(10**8, b'{"jsonrpc":"2.0","id":"srv-2","result":', b""), 99
    )  # type: ignore[arg-type]
    assert isinstance(waiting.exception(), JsonRpcException) and len(protocol.sent) == 1
    answer_oversized(protocol, Oversized(10**8, b'{"params":', b"}"), 99)  # type: ignore[arg-type]
    assert len(protocol.sent) == 1  # no id to answer: a log line only


@pytest.mark.parametrize(
    "body",
    [
        GOOD,
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"\\ud83c\\udf0d \xed\x95\x9c"}}',
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":' + b"[" * 120 + b"]" * 120 + b"}",
    ],
    ids=["plain", "emoji pair and hangul", "nested 120 deep"],
)
def test_a_well_formed_message_is_handed_on_once(body: bytes) -> None:
    protocol = FakeProtocol()
    dispatch(protocol, bytearray(body))  # type: ignore[arg-type]
    assert protocol.handled == [json.loads(body)] and protocol.sent == []


def test_clip_says_how_long_the_value_was() -> None:
    assert clip("short") == "short"
    clipped = clip("z" * 10_000)
    assert len(clipped) < MAX_ECHO + 40 and "10000 characters" in clipped
