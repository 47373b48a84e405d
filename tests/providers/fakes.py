"""Fake model APIs on 127.0.0.1 that speak the real streaming wire formats.

``FakeApi`` is an HTTP/1.1 server in a thread: each POST is recorded and answered with the
next queued reply — a server-sent-event stream (optionally cut off mid-way, the way a
dropped connection looks) or a plain status with a JSON body. The builders below produce
OpenAI ``chat.completion.chunk`` streams and Anthropic Messages event streams.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Sse:
    """A ``text/event-stream`` reply; ``drop_after`` frames, then the connection is cut.

    ``end_after`` frames, then the server closes the connection cleanly: a body delimited
    by the close (no chunked encoding), so the client sees a well-formed but short stream.
    ``delay`` seconds pass before each frame (a slow model).
    """

    frames: list[str]
    drop_after: int | None = None
    end_after: int | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class Status:
    """A non-streaming reply (an error, typically)."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Dropped:
    """No reply: the connection is closed once the request is read, as by an API that
    closed an idle kept connection just as the request went on it."""


Reply = Sse | Status | Dropped


@dataclass(frozen=True)
class Recorded:
    """One request the fake received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # so server_close() joins every handler thread
    api: FakeApi

    def process_request(self, request: Any, client_address: Any) -> None:
        self.api.opened(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        self.api.closed(request)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """As the APIs' servers do (nginx's ``tcp_nodelay``, Go's and asyncio's defaults): with
    Nagle's algorithm on, a response's first frame waits on a kept connection for the
    client's delayed ACK of its headers, ~40 ms per response."""
    server: _Server

    @property  # type: ignore[override]
    def timeout(self) -> float:
        """How long a kept connection may stay idle before the fake closes it."""
        return self.server.api.idle_seconds

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        api = self.server.api
        reply = api.record(
            Recorded(
                self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic()
            )
        )
        if isinstance(reply, Dropped):
            self.close_connection = True
            return
        if isinstance(reply, Status):
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            for name, value in {"Content-Type": "application/json", **reply.headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        if reply.end_after is not None:
            self._send_until_close(reply.frames[: reply.end_after])
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for index, frame in enumerate(reply.frames):
            if reply.drop_after is not None and index >= reply.drop_after:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)  # mid-body: no final chunk
                self.close_connection = True
                return
            time.sleep(reply.delay)  # models the API's latency between frames
            data = frame.encode()
            try:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            except OSError:  # the client went away (a cancelled run closes its stream)
                api.hang_ups.append(time.monotonic())
                self.close_connection = True
                return
        self.wfile.write(b"0\r\n\r\n")

    def _send_until_close(self, frames: list[str]) -> None:
        """A body that ends where the server closes the connection (no length, no chunks)."""
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write("".join(frames).encode())
        self.wfile.flush()
        self.close_connection = True


class FakeApi:
    """A scripted model API; use as a context manager (it stops and joins its threads).

    ``idle_seconds``: a kept-alive connection idle this long is closed by the fake, as an
    API closes its clients' idle connections (after longer than the 5 s a client keeps
    one, by default, as the real APIs do). Its clients' connections end at the exit."""

    def __init__(self, idle_seconds: float = 30.0) -> None:
        self.idle_seconds = idle_seconds
        self.connections = 0
        """Connections the clients opened so far."""
        self.ended = 0
        """Connections ended so far, by either side (the fake's idle limit among them)."""
        self._open: set[socket.socket] = set()
        self.requests: list[Recorded] = []
        self.hang_ups: list[float] = []
        """When a client closed a stream while the fake was still sending it."""
        self.refused_signatures: set[str] = set()
        """Thinking-block signatures the fake refuses as Anthropic does (``record``)."""
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.api = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def serving(self) -> bool:
        """Whether the server thread still runs."""
        return self._thread.is_alive()

    def queue(self, *replies: Reply) -> None:
        """Answer the next requests with these, in order."""
        with self._lock:
            self._replies.extend(replies)

    def record(self, request: Recorded) -> Reply:
        """Keep the request; the reply queued for it (a 500 when none is left). A request
        carrying a thinking block whose signature is in ``refused_signatures`` is answered
        Anthropic's 400 for it instead, the queue untouched."""
        with self._lock:
            self.requests.append(request)
            refused = refused_thinking(request.body, self.refused_signatures)
            if refused is not None:
                return refused
            if self._replies:
                return self._replies.popleft()
        return Status(500, {"error": {"message": "the fake has no reply queued"}})

    def opened(self, connection: socket.socket) -> None:
        with self._lock:
            self.connections += 1
            self._open.add(connection)

    def closed(self, connection: socket.socket) -> None:
        with self._lock:
            self.ended += 1
            self._open.discard(connection)

    def __enter__(self) -> FakeApi:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        with self._lock:  # a client's kept connections: their threads end now, not when idle
            for connection in self._open:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        self._thread.join(timeout=5)


# --- OpenAI Chat Completions --------------------------------------------------------------


def _chunk(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> str:
    data = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_760_000_000,
        "model": "gpt-test",
        "system_fingerprint": "fp_1",
        "choices": choices,
        "usage": usage,
    }
    return f"data: {json.dumps(data)}\n\n"


def openai_delta(delta: dict[str, Any], finish: str | None = None) -> str:
    """One chunk with a delta for choice 0."""
    return _chunk([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}])


def openai_usage(prompt: int, completion: int, cached: int = 0) -> str:
    """The final usage chunk of ``stream_options.include_usage`` (no choices)."""
    return _chunk(
        [],
        {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
    )


DONE = "data: [DONE]\n\n"


def system_text(body: dict[str, Any]) -> str:
    """The one system (or developer) message of a recorded OpenAI chat request, as text."""
    [system] = [m for m in body["messages"] if m["role"] in ("system", "developer")]
    content = system["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


def openai_stream(
    *texts: str,
    calls: Sequence[tuple[str, str, list[str]]] = (),
    finish: str | None = None,
    usage: tuple[int, int] = (100, 20),
    cached: int = 0,
) -> list[str]:
    """A whole reply: role, text pieces, tool calls (id, name, argument pieces), finish, usage."""
    frames = [openai_delta({"role": "assistant", "content": "", "refusal": None})]
    frames += [openai_delta({"content": text}) for text in texts]
    for index, (call_id, name, pieces) in enumerate(calls):
        head = {"index": index, "id": call_id, "type": "function"}
        frames.append(
            openai_delta({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]})
        )
        frames += [
            openai_delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in pieces
        ]
    frames.append(openai_delta({}, finish or ("tool_calls" if calls else "stop")))
    frames.append(openai_usage(*usage, cached=cached))
    frames.append(DONE)
    return frames


# --- Anthropic Messages --------------------------------------------------------------------


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"


def anthropic_stream(
    *texts: str,
    calls: Sequence[tuple[str, str, list[str]]] = (),
    stop: str | None = None,
    usage: tuple[int, int] = (100, 20),
    cache_read: int = 0,
    cache_write: int = 0,
    thinking: str | Sequence[str] | None = None,
    signature: str = "sig-1",
    redacted: str | None = None,
) -> list[str]:
    """A whole message: start, (thinking: its pieces, then its signature), (a redacted
    thinking block of opaque ``redacted`` data), a text block, tool_use blocks, delta, stop."""
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage[0],
            "output_tokens": 1,
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
        },
    }
    frames = [_event("message_start", {"message": message}), _event("ping", {})]
    index = 0
    if thinking is not None:
        pieces = [thinking] if isinstance(thinking, str) else list(thinking)
        block = {"type": "thinking", "thinking": "", "signature": ""}
        frames.append(_event("content_block_start", {"index": index, "content_block": block}))
        frames += [_delta(index, {"type": "thinking_delta", "thinking": p}) for p in pieces]
        frames.append(_delta(index, {"type": "signature_delta", "signature": signature}))
        frames.append(_event("content_block_stop", {"index": index}))
        index += 1
    if redacted is not None:
        block = {"type": "redacted_thinking", "data": redacted}
        frames.append(_event("content_block_start", {"index": index, "content_block": block}))
        frames.append(_event("content_block_stop", {"index": index}))
        index += 1
    if texts:
        block = {"type": "text", "text": ""}
        frames.append(_event("content_block_start", {"index": index, "content_block": block}))
        frames += [_delta(index, {"type": "text_delta", "text": text}) for text in texts]
        frames.append(_event("content_block_stop", {"index": index}))
        index += 1
    for call_id, name, pieces in calls:
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        frames.append(_event("content_block_start", {"index": index, "content_block": block}))
        frames += [_delta(index, {"type": "input_json_delta", "partial_json": p}) for p in pieces]
        frames.append(_event("content_block_stop", {"index": index}))
        index += 1
    delta = {"stop_reason": stop or ("tool_use" if calls else "end_turn"), "stop_sequence": None}
    frames.append(_event("message_delta", {"delta": delta, "usage": {"output_tokens": usage[1]}}))
    frames.append(_event("message_stop", {}))
    return frames


def refused_thinking(body: dict[str, Any], signatures: set[str]) -> Status | None:
    """Anthropic's answer to a thinking block whose signature it does not accept (a 400
    naming the first such block), or None when ``body`` sends none of ``signatures``. With
    ``signatures`` given, the fake also holds the API's rule that, thinking on, the reply
    whose tool loop goes on starts with a thinking block."""
    for m, message in enumerate(body.get("messages") or ()):
        content = message.get("content")
        for c, block in enumerate(content if isinstance(content, list) else ()):
            if block.get("type") == "thinking" and block.get("signature") in signatures:
                where = f"messages.{m}.content.{c}"
                return _invalid_request(f"{where}: Invalid `signature` in `thinking` block")
    messages = body.get("messages") or []
    if signatures and body.get("thinking") and len(messages) >= 2:
        # With thinking on, the reply whose tool loop goes on must start with its thinking.
        last, reply = messages[-1]["content"], messages[-2]["content"]
        in_loop = isinstance(last, list) and any(b["type"] == "tool_result" for b in last)
        first = reply[0]["type"] if isinstance(reply, list) and reply else "text"
        if in_loop and first not in ("thinking", "redacted_thinking"):
            return _invalid_request(
                f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
                f"`redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final "
                "`assistant` message must start with a thinking block (preceeding the lastmost "
                "set of `tool_use` and `tool_result` blocks). We recommend you include thinking "
                "blocks from previous turns. To avoid this requirement, disable `thinking`. "
                "Please consult our documentation at "
                "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
            )
    return None


def _invalid_request(message: str) -> Status:
    """Anthropic's 400: an ``invalid_request_error`` with its request id."""
    error = {"type": "invalid_request_error", "message": message}
    request_id = "req_011CWkB65DcNzK2MiofhXx8b"
    return Status(
        400, {"type": "error", "error": error, "request_id": request_id}, {"request-id": request_id}
    )


def _delta(index: int, delta: dict[str, Any]) -> str:
    return _event("content_block_delta", {"index": index, "delta": delta})


def anthropic_error_event(kind: str, message: str) -> str:
    """An ``error`` event inside a 200 stream (e.g. ``overloaded_error``)."""
    return _event("error", {"error": {"type": kind, "message": message}})
