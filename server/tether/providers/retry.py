"""Recovery shared by the SDK providers: retries, continuing cut-off replies, bad tool JSON.

One model call may take several API requests. Each request is retried on transient failures
(429, 5xx, timeouts, dropped connections) with exponential backoff and jitter, honouring
``Retry-After`` — but only while it has streamed nothing but reasoning: once text has
reached the user a retry would repeat it, so the call fails with a clear ``ProviderError``
instead. A reply cut off at the output limit is continued: the limit is raised once (for
the rest of the run), then the model is asked to go on where it stopped, at most
``MAX_CONTINUATIONS`` times. Tool-call arguments that are not a JSON object become a
``ToolCall`` with ``arguments_error``, which the loop turns into a tool error the model
reads.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import random
import ssl
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime
from functools import partial
from time import time
from typing import TypeVar

import anyio

from ..errors import ContextTooLongError, ProviderError
from ..prompt.system import CONTINUE_PROMPT
from .base import (
    AssistantMessage,
    Message,
    ModelDelta,
    ModelRequest,
    RetryNotice,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallReady,
    UserMessage,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_CONTINUATIONS = 3
"""Requests asking the model to go on after its reply hit the output limit."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard to try: attempts per request and the backoff between them."""

    attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 20.0
    max_retry_after: float = 60.0
    """A server asking for a longer wait than this is not waited for: the call fails."""

    def backoff(self, attempt: int) -> float:
        """Seconds before retry number ``attempt`` (1-based): exponential, jittered."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        # Jitter spreads retries of concurrent runs so they do not hit the API in step.
        return random.uniform(ceiling / 2, ceiling)


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed request, as the retry loop needs to see it."""

    reason: str
    retryable: bool
    retry_after: float | None = None
    too_long: bool = False
    """The prompt does not fit the model's context: the loop compacts and tries again."""
    at_once: bool = False
    """The connection ended before any answer came (``Unanswered``): the first retry goes
    at once, with no notice — most often a kept connection the API closed just as the
    request went on it, which a new connection mends."""


TOO_LONG_HINTS = (
    "context_length_exceeded",
    "maximum context length",
    "prompt is too long",
    "context window",
    "too many tokens",
)


def is_too_long(status: int, detail: str) -> bool:
    """A 400/413 answer that says the prompt is too long for the model."""
    text = detail.lower()
    return status in (400, 413) and any(hint in text for hint in TOO_LONG_HINTS)


class StreamInterrupted(Exception):
    """The response stream ended before the reply was complete (retryable)."""


class Unanswered(Exception):
    """The connection of a request ended before any answer came: the server closed or
    reset it once the request was (being) sent — not a refused connection, not a timeout,
    not a stream cut after it began. Raised by ``answered`` from the SDK's error."""


async def answered(request: Awaitable[T]) -> T:
    """``request`` awaited: an SDK call that returns once the response has begun. Its
    connection ending before that is raised as ``Unanswered`` from the SDK's error."""
    import httpx2  # the SDKs' HTTP client

    try:
        return await request
    except Exception as exc:
        if isinstance(
            exc.__cause__, (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)
        ):
            raise Unanswered(str(exc)) from exc
        raise


@dataclass(frozen=True, slots=True)
class ReplyEnd:
    """The last item of one API request: whether the reply stopped at the output limit."""

    truncated: bool


PartStream = AsyncGenerator[ModelDelta | ReplyEnd, None]
Classifier = Callable[[Exception], Failure | None]
"""Maps an exception to a ``Failure``; ``None`` lets it propagate (a bug, not the API)."""


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The wait a response asks for: ``retry-after-ms``, or ``retry-after`` (seconds or date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time())
    except (TypeError, ValueError):
        return None


async def with_retries(
    start: Callable[[], AsyncGenerator[T, None]], classify: Classifier, policy: RetryPolicy
) -> AsyncGenerator[T | RetryNotice, None]:
    """Items of ``start()``, restarted on retryable failures while none has been yielded;
    a ``RetryNotice`` comes before each wait, so the user sees why nothing is arriving."""
    for attempt in range(1, policy.attempts + 1):
        yielded = False
        try:
            async with aclosing(start()) as items:
                async for item in items:
                    # Reasoning is not the answer: a cut in the middle of it is retried
                    # (the thinking shown starts again after the retry notice).
                    yielded = yielded or not isinstance(item, ThinkingDelta)
                    yield item
            return
        except Exception as exc:
            failure = _classify(exc, classify)
            if failure is None:
                raise
            if failure.too_long:
                raise ContextTooLongError(failure.reason) from exc
            if not failure.retryable:
                raise ProviderError(failure.reason) from exc
            if yielded:
                raise ProviderError(
                    f"{failure.reason} after the reply had started streaming; not retried, "
                    "so that the text already shown is not repeated"
                ) from exc
            if attempt == policy.attempts:
                raise ProviderError(f"{failure.reason} (gave up after {attempt} attempts)") from exc
            if failure.at_once and attempt == 1:
                log.info("%s; sent again at once", failure.reason)
                continue
            delay = policy.backoff(attempt)
            if failure.retry_after is not None:
                if failure.retry_after > policy.max_retry_after:
                    raise ProviderError(
                        f"{failure.reason}; the server asks to retry after "
                        f"{failure.retry_after:.0f} s, longer than Tether waits "
                        f"({policy.max_retry_after:.0f} s)"
                    ) from exc
                delay = failure.retry_after
            # Logged for the server's log; terminals and editors get the notice as an event.
            log.info("%s; retry %d in %.2f s", failure.reason, attempt, delay)
        yield RetryNotice(attempt, delay, failure.reason)
        await anyio.sleep(delay)


def _classify(exc: Exception, classify: Classifier) -> Failure | None:
    if isinstance(exc, StreamInterrupted):
        return Failure(str(exc) or "the response stream ended early", retryable=True)
    if isinstance(exc, Unanswered) and isinstance(exc.__cause__, Exception):
        failure = classify(exc.__cause__)
        return None if failure is None else replace(failure, at_once=failure.retryable)
    return classify(exc)


class OutputLimit:
    """The output-token limit of a provider's requests, raised once when a reply is cut off."""

    def __init__(self, initial: int | None, raised: int | None) -> None:
        self.current = initial
        self._raised = raised

    def raise_once(self) -> None:
        """Use the raised limit from now on (no-op when there is none, or already raised)."""
        if self._raised is not None:
            self.current = self._raised


async def stream_reply(
    request: ModelRequest,
    attempt: Callable[[ModelRequest, int | None], PartStream],
    *,
    limit: OutputLimit,
    policy: RetryPolicy,
    classify: Classifier,
) -> AsyncGenerator[ModelDelta, None]:
    """One model call: the deltas of ``attempt`` (retried), continued past the output limit.

    ``attempt(request, max_tokens)`` makes one API request and ends with a ``ReplyEnd``. The
    text of the continuations is streamed on, so the caller sees one stitched reply.
    """
    text = ""
    current = request
    for part in range(MAX_CONTINUATIONS + 1):
        truncated = has_calls = False
        start = partial(attempt, current, limit.current)
        async with aclosing(with_retries(start, classify, policy)) as items:
            async for item in items:
                if isinstance(item, ReplyEnd):
                    truncated = item.truncated
                    continue
                if isinstance(item, TextDelta):
                    text += item.text
                elif isinstance(item, ToolCallReady):
                    has_calls = True
                yield item
        if not truncated:
            return
        limit.raise_once()
        # A cut-off tool call comes back as an arguments error; the model redoes it next step.
        if has_calls or part == MAX_CONTINUATIONS:
            log.warning("reply cut off at the output limit (%s tokens)", limit.current)
            return
        # With no text yet (e.g. all spent on reasoning) the same request is simply re-sent.
        tail: list[Message] = [AssistantMessage(text), UserMessage(CONTINUE_PROMPT)] if text else []
        current = replace(request, messages=[*request.messages, *tail])


@dataclass(slots=True)
class PendingCall:
    """A tool call whose name and JSON arguments are still arriving, in pieces."""

    call_id: str
    name: str = ""
    arguments: str = ""

    def add(self, name: str | None, arguments: str | None) -> None:
        """Fold in one streamed piece (the name comes once; arguments are concatenated)."""
        if name and not self.name:
            self.name = name
        if arguments:
            self.arguments += arguments

    def finish(self, truncated: bool) -> ToolCall:
        """The complete call; unusable arguments become its ``arguments_error``."""
        return parse_tool_call(self.call_id, self.name, self.arguments, truncated=truncated)


def parse_tool_call(call_id: str, name: str, raw: str, *, truncated: bool = False) -> ToolCall:
    """A ``ToolCall`` from streamed JSON text (empty means no arguments)."""
    try:
        value = json.loads(raw.strip() or "{}")
    except json.JSONDecodeError as exc:
        if truncated:
            error = "the reply was cut off at the output limit before they were complete"
        else:
            error = f"{exc.msg} at character {exc.pos} of {_preview(raw)}"
        return ToolCall(call_id, name, {}, error)
    if not isinstance(value, dict):
        return ToolCall(call_id, name, {}, f"expected a JSON object, got {_preview(raw)}")
    return ToolCall(call_id, name, value)


def _preview(raw: str, limit: int = 200) -> str:
    return repr(raw if len(raw) <= limit else raw[:limit] + "…")


def describe_api_error(body: object, fallback: str) -> str:
    """The human part of an API error body (``{"error": {"message": ...}}`` or similar)."""
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else fallback


def underlying_error(exc: BaseException) -> str:
    """What an SDK's generic "Connection error." wraps (``RemoteProtocolError: …``)."""
    cause = exc.__cause__
    return f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)


TRUST_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")
"""What the SDKs' HTTP client reads for the certificates it trusts."""


def shared_ssl_context() -> ssl.SSLContext:
    """One TLS context for every SDK client of the process that trusts the same
    certificates (``TRUST_VARIABLES`` as the environment says now: a run forked from the
    daemon trusts what its own environment names, not what was loaded before it).

    Each SDK client would otherwise build its own and load the CA bundle again (about
    25 ms). Made once even when the warm-up's prime and a first run ask at the same time.
    """
    trusted = tuple(os.environ.get(name) for name in TRUST_VARIABLES)
    with _SSL_CONTEXT_MADE:
        return _ssl_context(*trusted)


_SSL_CONTEXT_MADE = threading.Lock()


@functools.cache
def _ssl_context(*trusted: str | None) -> ssl.SSLContext:
    import httpx2  # the SDKs' HTTP client; the same trust settings as its default

    return httpx2.create_ssl_context()  # reads the environment that ``trusted`` is
