"""Recovery without HTTP: Retry-After parsing, backoff, the retry loop and tool-call JSON."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from email.utils import formatdate
from time import time

import pytest

from tether.errors import ProviderError
from tether.providers.base import RetryNotice, ToolCall
from tether.providers.retry import (
    Failure,
    RetryPolicy,
    StreamInterrupted,
    describe_api_error,
    parse_tool_call,
    retry_after_seconds,
    with_retries,
)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.2"}, 0.2),
        ({"retry-after-ms": "nonsense", "retry-after": "2"}, 2.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_seconds(headers) == seconds


def test_retry_after_as_an_http_date() -> None:
    wait = retry_after_seconds({"retry-after": formatdate(time() + 30, usegmt=True)})
    assert wait is not None and 28 <= wait <= 30


def test_backoff_doubles_with_jitter_and_a_ceiling() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=4.0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 4.0), (9, 4.0)]:
        waits = {policy.backoff(attempt) for _ in range(50)}
        assert all(ceiling / 2 <= w <= ceiling for w in waits)
        assert len(waits) > 1  # jittered


def flaky(failures: list[Exception], items: list[str]) -> tuple[list[int], object]:
    """A request that fails with ``failures`` in turn, then yields ``items``."""
    starts: list[int] = []

    async def start() -> AsyncGenerator[str, None]:
        starts.append(len(starts) + 1)
        if len(starts) <= len(failures):
            raise failures[len(starts) - 1]
        for item in items:
            yield item

    return starts, start


def classify(exc: Exception) -> Failure | None:
    if isinstance(exc, TimeoutError):
        return Failure("timed out", retryable=True)
    if isinstance(exc, PermissionError):
        return Failure("forbidden", retryable=False)
    if isinstance(exc, ConnectionError):
        return Failure("rate limited", retryable=True, retry_after=float(str(exc)))
    return None


FAST = RetryPolicy(base_delay=0.001, max_delay=0.002)


async def test_retries_until_success() -> None:
    starts, start = flaky([TimeoutError(), StreamInterrupted("cut")], ["a", "b"])
    items = [i async for i in with_retries(start, classify, FAST)]  # type: ignore[arg-type]
    notices = [i for i in items if isinstance(i, RetryNotice)]
    assert [i for i in items if not isinstance(i, RetryNotice)] == ["a", "b"]
    assert starts == [1, 2, 3]
    # One notice before each wait, numbered, with the reason and the delay waited.
    assert [(n.attempt, n.reason) for n in notices] == [(1, "timed out"), (2, "cut")]
    assert all(0 < n.delay_seconds <= FAST.max_delay for n in notices)
    assert items.index(notices[-1]) < items.index("a")


async def test_gives_up_after_the_last_attempt() -> None:
    starts, start = flaky([TimeoutError()] * 4, ["never"])
    with pytest.raises(ProviderError, match=r"^timed out \(gave up after 4 attempts\)$"):
        [i async for i in with_retries(start, classify, FAST)]  # type: ignore[arg-type]
    assert starts == [1, 2, 3, 4]


async def test_a_permanent_failure_is_not_retried() -> None:
    starts, start = flaky([PermissionError()], ["x"])
    with pytest.raises(ProviderError, match="^forbidden$"):
        [i async for i in with_retries(start, classify, FAST)]  # type: ignore[arg-type]
    assert starts == [1]


async def test_an_unclassified_exception_propagates_as_is() -> None:
    _, start = flaky([KeyError("bug")], ["x"])
    with pytest.raises(KeyError):
        [i async for i in with_retries(start, classify, FAST)]  # type: ignore[arg-type]


async def test_a_retry_after_beyond_the_limit_fails_at_once() -> None:
    starts, start = flaky([ConnectionError("120")], ["x"])
    policy = RetryPolicy(max_retry_after=60)
    with pytest.raises(ProviderError, match="retry after 120 s, longer than Tether waits"):
        [i async for i in with_retries(start, classify, policy)]  # type: ignore[arg-type]
    assert starts == [1]


async def test_no_retry_once_something_was_yielded() -> None:
    async def start() -> AsyncGenerator[str, None]:
        yield "shown"
        raise TimeoutError

    seen: list[str] = []
    with pytest.raises(ProviderError, match="^timed out after the reply had started streaming"):
        async for item in with_retries(start, classify, FAST):
            seen.append(item)
    assert seen == ["shown"]


@pytest.mark.parametrize(
    ("raw", "arguments", "error"),
    [
        ('{"path": "a.py"}', {"path": "a.py"}, None),
        ("", {}, None),
        ("  ", {}, None),
        ('{"path": a.py}', {}, "Expecting value at character 9 of '{\"path\": a.py}'"),
        ('"a.py"', {}, "expected a JSON object, got '\"a.py\"'"),
        ("x" * 300, {}, "Expecting value at character 0 of '" + "x" * 200 + "…'"),
    ],
)
def test_parse_tool_call(raw: str, arguments: dict[str, str], error: str | None) -> None:
    assert parse_tool_call("c", "read_file", raw) == ToolCall("c", "read_file", arguments, error)


def test_describe_api_error() -> None:
    assert describe_api_error({"error": {"message": "bad key"}}, "fallback") == "bad key"
    assert describe_api_error({"message": "flat"}, "fallback") == "flat"
    assert describe_api_error("text body", "fallback") == "fallback"
