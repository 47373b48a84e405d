"""A buggy or hostile client on the raw pipe: the server answers, keeps serving, and never
crashes, hangs or echoes unbounded input (issue 12, items 2, 3, 4 and 13)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .raw_client import ANSWER_SECONDS, RawServer, encode, frame, rss_kib


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The workspace folder."""
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n")
    return folder


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    """A started server; at the end it must exit 0 on end of input, without a traceback."""
    raw = RawServer(tmp_path)
    try:
        yield raw
        assert raw.close() == 0
        assert "Traceback" not in raw.stderr()
    finally:
        raw.kill()


def assert_no_traceback(raw: RawServer) -> None:
    """Client mistakes are logged in a line, never with a traceback."""
    assert "Traceback" not in raw.stderr(), raw.stderr()[-3000:]


# --- item 2: deep nesting ---------------------------------------------------------------


@pytest.mark.parametrize("depth", [100_000, 990, 500])
@pytest.mark.parametrize("kind", ["request", "notification", "bare array"])
def test_deeply_nested_json_is_refused_and_the_server_keeps_serving(
    server: RawServer, root: Path, depth: int, kind: str
) -> None:
    server.initialize(root)
    nested = "[" * depth + "]" * depth
    if kind == "bare array":
        body = nested
    elif kind == "request":
        body = '{"jsonrpc":"2.0","id":2,"method":"agent/sessions","params":{"x":' + nested + "}}"
    else:
        body = '{"jsonrpc":"2.0","method":"textDocument/didOpen","params":' + nested + "}"
    server.send(frame(body.encode()))
    if kind == "request":
        error = server.answer(2)["error"]
        assert error["code"] in (-32700, -32600, -32602)
        assert "nested" in error["message"]
    elif kind == "bare array":
        assert server.answer(None)["error"]["code"] in (-32700, -32600)
    assert server.ping(3)["result"] == {"cancelled": False}
    assert_no_traceback(server)


# --- item 3: wrong framing ----------------------------------------------------------------

PING = encode({"id": 2, "method": "agent/cancel", "params": {"runId": "a"}})


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(b"Content-Length: 20\r\n\r\n" + PING, id="length too short"),
        pytest.param(b"Content-Length: -5\r\n\r\n" + PING, id="negative length"),
        pytest.param(b"Content-Length: ten\r\n\r\n" + PING, id="length not a number"),
        pytest.param(b"Content-Type: application/json\r\n\r\n" + PING, id="length missing"),
        pytest.param(PING, id="body without a header"),
        pytest.param(b"\x00\xff garbage\r\n\r\n" + PING + b"\n\n", id="garbage lines"),
        pytest.param(b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n" + PING, id="two lengths"),
    ],
)
def test_a_wrong_frame_is_skipped_and_the_next_one_is_answered(
    server: RawServer, root: Path, broken: bytes
) -> None:
    server.initialize(root)
    server.send(broken)
    assert server.ping(3)["result"] == {"cancelled": False}
    assert_no_traceback(server)


def test_a_length_too_long_followed_by_a_frame_loses_neither(server: RawServer, root: Path) -> None:
    server.initialize(root)
    server.send(b"Content-Length: %d\r\n\r\n" % (len(PING) + 500) + PING)
    server.ping(3)  # its header lands inside the first frame's declared body
    assert server.answer(2)["result"] == {"cancelled": False}
    assert_no_traceback(server)


def test_a_length_too_long_on_the_last_message_is_still_answered(
    server: RawServer, root: Path
) -> None:
    """The client waits for its answer and sends nothing more: no deadlock."""
    server.initialize(root)
    server.send(b"Content-Length: %d\r\n\r\n" % (len(PING) + 500) + PING)
    assert server.answer(2)["result"] == {"cancelled": False}
    assert server.ping(3)["result"] == {"cancelled": False}


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(PING, id="no header"),
        pytest.param(b"Content-Length: 9", id="header without its line end"),
        pytest.param(b"Content-Length: -1\r\n\r\n", id="negative length"),
    ],
)
def test_the_last_message_without_a_usable_header_is_still_answered(
    server: RawServer, root: Path, broken: bytes
) -> None:
    """The client waits for its answer and sends nothing more: no deadlock."""
    server.initialize(root)
    server.send(broken if broken == PING else broken + b"0" + PING)
    assert server.answer(2)["result"] == {"cancelled": False}
    assert server.ping(3)["result"] == {"cancelled": False}


def test_input_that_never_carries_a_frame_ends_the_server_non_zero(tmp_path: Path) -> None:
    """Past twice the message cap of garbage, the server says so in one line and exits 2."""
    raw = RawServer(tmp_path, {"TETHER_MAX_MESSAGE_BYTES": "65536"})
    try:
        with contextlib.suppress(BrokenPipeError):  # it may be gone before the last line
            for _ in range(20):
                raw.send(b"not a frame header " * 1000 + b"\n")  # 19 KB a line
        assert raw.proc.wait(ANSWER_SECONDS * 2) == 2
        stderr = raw.stderr()
        assert "not LSP-framed" in stderr and "Traceback" not in stderr
    finally:
        raw.kill()


# --- item 4: message size -------------------------------------------------------------------


def send_in_background(raw: RawServer, data: bytes) -> threading.Thread:
    """Write a large message from a thread (the pipe blocks until the server reads it)."""
    writer = threading.Thread(target=raw.send, args=(data,), daemon=True)
    writer.start()
    return writer


def test_a_message_over_the_cap_is_refused_without_being_buffered(
    server: RawServer, root: Path
) -> None:
    server.initialize(root)
    baseline = rss_kib(server.pid, "VmHWM")
    session_id = "x" * 100_000_000  # 100 MB: the default cap is 64 MiB
    body = encode({"id": 2, "method": "agent/history", "params": {"sessionId": session_id}})
    del session_id
    writer = send_in_background(server, frame(body))
    error = server.answer(2, timeout=60)["error"]
    writer.join(30)
    del body
    assert error["code"] == -32600 and "maxMessageBytes" in error["message"]
    assert len(error["message"]) < 300
    # skipped unread: the peak stays far below the message's size
    assert rss_kib(server.pid, "VmHWM") - baseline < 40_000
    assert server.ping(3)["result"] == {"cancelled": False}


def test_the_cap_is_configurable_and_an_id_at_the_end_is_found(tmp_path: Path, root: Path) -> None:
    raw = RawServer(tmp_path, {"TETHER_MAX_MESSAGE_BYTES": str(1024 * 1024)})
    try:
        raw.initialize(root)
        text = "y" * 2_000_000
        body = b'{"params":{"prompt":"%s"},"method":"agent/run","jsonrpc":"2.0","id":7}' % (
            text.encode()
        )
        send_in_background(raw, frame(body)).join(30)
        error = raw.answer(7)["error"]
        assert error["code"] == -32600 and "1048576" in error["message"]
        # a notification over the cap (no id to answer): skipped, logged, serving goes on
        raw.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": (root / "big.txt").as_uri(),
                    "languageId": "text",
                    "version": 1,
                    "text": text,
                }
            },
        )
        assert raw.ping(3)["result"] == {"cancelled": False}
        assert raw.close() == 0
        stderr = raw.stderr()
        assert "over the limit" in stderr and "Traceback" not in stderr
    finally:
        raw.kill()


def test_the_cap_from_initialization_options_applies_to_later_messages(
    server: RawServer, root: Path
) -> None:
    server.initialize(root, {"maxMessageBytes": 65536})
    server.request(2, "agent/sessions", {"limit": 1, "pad": "z" * 70_000})
    assert "65536" in server.answer(2)["error"]["message"]


def test_a_legitimate_ten_megabyte_buffer_is_read(server: RawServer, root: Path) -> None:
    server.initialize(root)
    text = "line of text é\n" * 700_000  # about 10 MB
    server.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": (root / "big.txt").as_uri(),
                "languageId": "text",
                "version": 1,
                "text": text,
            }
        },
    )
    assert server.ping(3)["result"] == {"cancelled": False}
    assert "over the limit" not in server.stderr()


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("agent/history", {"sessionId": "h" * 1_000_000}),
        ("agent/undo", {"runId": "u" * 1_000_000}),
        ("agent/run", {"prompt": "p", "k" * 1_000_000: 1}),
        ("agent/sessions", {"limit": "l" * 1_000_000}),
        ("m" * 1_000_000, {}),
    ],
    ids=["history id", "undo id", "unknown key", "wrong type", "method name"],
)
def test_errors_never_echo_unbounded_input(
    server: RawServer, root: Path, method: str, params: dict[str, Any]
) -> None:
    server.initialize(root)
    server.request(2, method, params)
    error = server.answer(2)["error"]
    assert error["code"] in (-32600, -32601, -32602)
    assert len(json.dumps(error)) < 1500
    assert_no_traceback(server)


def test_a_huge_request_id_is_refused_not_echoed(server: RawServer, root: Path) -> None:
    server.initialize(root)
    server.request("i" * 1_000_000, "agent/sessions", {})
    answer = server.answer(None)
    assert answer["error"]["code"] == -32600


# --- item 13: lifecycle and limits ------------------------------------------------------------


@pytest.mark.parametrize("method", ["agent/run", "agent/sessions", "shutdown"])
def test_requests_before_initialize_are_refused_with_server_not_initialized(
    server: RawServer, root: Path, method: str
) -> None:
    server.notify("textDocument/didOpen", {"textDocument": {"uri": root.as_uri()}})  # dropped
    server.request(1, method, {"prompt": "hi"} if method == "agent/run" else None)
    assert server.answer(1)["error"]["code"] == -32002
    server.initialize(root)  # initialize still works afterwards
    assert server.ping(3)["result"] == {"cancelled": False}


def test_requests_after_shutdown_are_invalid_and_exit_still_works(
    tmp_path: Path, root: Path
) -> None:
    raw = RawServer(tmp_path)
    try:
        raw.initialize(root)
        raw.request(1, "shutdown")
        assert raw.answer(1)["result"] is None
        for msg_id, method in [(2, "agent/sessions"), (3, "agent/run"), (4, "shutdown")]:
            raw.request(msg_id, method, {"prompt": "late"} if method == "agent/run" else None)
            assert raw.answer(msg_id)["error"]["code"] == -32600
        raw.notify("exit")
        assert raw.proc.wait(ANSWER_SECONDS) == 0
        assert "Traceback" not in raw.stderr()
    finally:
        raw.kill()


def test_a_second_initialize_is_refused(server: RawServer, root: Path) -> None:
    server.initialize(root)
    server.request(2, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    assert server.answer(2)["error"]["code"] == -32600


@pytest.mark.parametrize(
    "method", ["textDocument/didOpen", "initialized", "exit", "$/cancelRequest"]
)
def test_a_notification_method_sent_with_an_id_is_answered(
    server: RawServer, root: Path, method: str
) -> None:
    server.initialize(root)
    params = {
        "textDocument/didOpen": {
            "textDocument": {
                "uri": (root / "a.txt").as_uri(),
                "languageId": "text",
                "version": 1,
                "text": "a",
            }
        },
        "$/cancelRequest": {"id": 1},
    }.get(method, {})
    server.request(2, method, params)
    error = server.answer(2)["error"]
    assert error["code"] == -32600 and "notification" in error["message"]
    assert server.ping(3)["result"] == {"cancelled": False}  # exit with an id did not exit


@pytest.mark.parametrize(
    "limits",
    [
        b'{"timeoutSeconds": NaN}',
        b'{"timeoutSeconds": Infinity}',
        b'{"timeoutSeconds": -Infinity}',
        b'{"timeoutSeconds": 1e400}',
        b'{"timeoutSeconds": 0}',
        b'{"maxSteps": 1000000000000000000000000000000}',
        b'{"maxSteps": 0}',
        b'{"maxCostUsd": NaN}',
    ],
)
def test_run_limits_must_be_finite_and_in_range(
    server: RawServer, root: Path, limits: bytes
) -> None:
    server.initialize(root)
    body = b'{"jsonrpc":"2.0","id":2,"method":"agent/run","params":{"prompt":"p","limits":%s}}'
    server.send(frame(body % limits))
    error = server.answer(2)["error"]
    assert error["code"] == -32602 and "limits" in error["message"]


@pytest.mark.parametrize("value", [b"NaN", b"Infinity", b"1e400", b"-1"])
def test_configured_timeout_must_be_finite_and_positive(
    server: RawServer, root: Path, value: bytes
) -> None:
    body = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,'
        b'"rootUri":null,"capabilities":{},"initializationOptions":{"timeoutSeconds":%s}}}'
    )
    server.send(frame(body % value))
    assert "result" in server.answer(1)  # the fixed answer: the settings refuse the runs
    server.request(2, "agent/run", {"prompt": "p"})
    error = server.answer(2)["error"]
    assert error["code"] == -32602 and "timeoutSeconds" in error["message"]


def test_a_request_sent_without_an_id_is_not_run(server: RawServer, root: Path) -> None:
    server.initialize(root)
    server.notify("agent/run", {"prompt": "nobody would see the result", "runId": "ghost"})
    server.request(2, "agent/sessions", {})
    assert server.answer(2)["result"] == {"sessions": []}
    assert "agent/run sent as a notification" in server.stderr()


def test_an_unusable_environment_variable_stops_the_server_in_one_line(tmp_path: Path) -> None:
    raw = RawServer(tmp_path, {"TETHER_MAX_MESSAGE_BYTES": "lots"})
    try:
        # ``initialize`` is answered before the settings are read (``lsp.lean``); then the
        # server says which variable it cannot use and exits.
        with contextlib.suppress(BrokenPipeError):
            raw.request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert raw.proc.wait(30) == 2
        stderr = raw.stderr()
        assert "TETHER_MAX_MESSAGE_BYTES" in stderr and "Traceback" not in stderr
    finally:
        raw.kill()
