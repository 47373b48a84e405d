"""LSP framing read from a file descriptor."""

from __future__ import annotations

import asyncio
import io
import os
import threading
import time

from tether.lsp.transport import FLUSH_BYTES, FLUSH_SECONDS, FrameReader, StdoutWriter, frame

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
    frames = [frame(b'{"n": %d}' % n) for n in range(100)]
    for data in frames:
        writer.write(data)
    assert sink.writes == []  # held until the loop's turn ends
    await asyncio.sleep(0)  # models: the loop's turn ends (a yield, not a wait for time)
    assert sink.writes == [b"".join(frames)]


async def test_a_long_burst_is_written_without_waiting_for_the_loop() -> None:
    sink = Sink()
    writer = StdoutWriter(sink, asyncio.get_running_loop())
    writer.write(frame(b"{}"))
    time.sleep(FLUSH_SECONDS * 2)  # models a loop turn kept busy (blocks, on purpose)
    writer.write(frame(b"[]"))
    assert sink.getvalue() == frame(b"{}") + frame(b"[]")
    writer.write(frame(b"x" * FLUSH_BYTES))
    assert sink.getvalue().endswith(b"x" * FLUSH_BYTES)


async def test_frames_from_other_threads_reach_the_loop_and_close_flushes() -> None:
    sink = Sink()
    writer = StdoutWriter(sink, asyncio.get_running_loop())
    thread = threading.Thread(target=writer.write, args=(frame(b"{}"),))
    thread.start()
    thread.join()
    await wait_until(lambda: sink.getvalue() == frame(b"{}"), "the thread's frame on the sink")
    writer.write(frame(b"[]"))
    writer.close()
    assert sink.closed and sink.writes[-1] == frame(b"[]")
    writer.write(frame(b"late"))  # after close: dropped, not raised
    writer.flush()


def test_without_a_loop_every_frame_is_written_at_once() -> None:
    sink = Sink()
    writer = StdoutWriter(sink)
    body = '{"é": 1}'.encode()  # 8 characters, 9 bytes: the length counts bytes
    writer.write(frame(body))
    assert sink.getvalue().startswith(b"Content-Length: 9\r\n")
    assert sink.getvalue().endswith(b"\r\n\r\n" + body)
