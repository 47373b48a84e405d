"""LSP framing read from a file descriptor."""

from __future__ import annotations

import os

from tether.lsp.transport import FrameReader


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
