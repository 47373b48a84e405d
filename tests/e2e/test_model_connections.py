"""A run's model calls, and the next run's, reuse one connection to the model API: each
new one costs a TCP and a TLS handshake (two round trips to a distant API) per call. It
is kept through the pause between two prompts of a conversation. One the API closed
meanwhile is replaced before the request goes, or, when the API closed it just as the
request went, the request is sent again at once: no retry notice, no backoff."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest

from tests.providers.fakes import Dropped, FakeApi

from ..waiting import wait_until
from .conftest import Editor, serving
from .test_providers_e2e import options, queue_read_then_answer

PROVIDERS = ("openai", "anthropic")
PAUSE_SECONDS = 6.0
"""A person's pause between two prompts, longer than the HTTP client's default keep-alive
(5 s). The time passing is what is tested, not a wait for something to happen."""


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_two_runs_of_two_calls_each_open_one_connection(
    tmp_path: Path, workspace: Path, provider: str
) -> None:
    with FakeApi(idle_seconds=60) as fake:  # no idle limit within the test
        async with serving(tmp_path / "state") as editor:
            await editor.open_session(workspace, options=options(fake, provider, "m"))
            for run_id in ("r1", "r2"):
                queue_read_then_answer(fake, provider)
                result = await editor.run(prompt="what does app.py do?", runId=run_id)
                assert result["outcome"] == "done" and result["steps"] == 2
            assert len(fake.requests) == 4
            assert fake.connections == 1


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_connection_the_api_closed_is_replaced_without_a_retry(
    tmp_path: Path, workspace: Path, provider: str
) -> None:
    with FakeApi(idle_seconds=0.2) as fake:  # the API closes an idle connection at once
        async with serving(tmp_path / "state") as editor:
            await editor.open_session(workspace, options=options(fake, provider, "m"))
            queue_read_then_answer(fake, provider)
            first = await editor.run(prompt="what does app.py do?", runId="r1")
            assert first["outcome"] == "done"
            opened = fake.connections
            await wait_until(lambda: fake.ended == opened, "the API closing the idle connection")
            queue_read_then_answer(fake, provider)
            second = await editor.run(prompt="and now?", runId="r2")
            assert second["outcome"] == "done" and second["steps"] == 2
            assert fake.connections > opened
            assert [e for e in editor.events_of("r2") if e.kind == "retry"] == []


async def two_prompts(
    tmp_path: Path, workspace: Path, provider: str, between: Callable[[FakeApi], Awaitable[None]]
) -> tuple[FakeApi, Editor]:
    """Two read-then-answer prompts of one session, ``between`` done between them; the fake
    API (no idle limit within the test) and the editor, both done with."""
    with FakeApi(idle_seconds=60) as fake:
        async with serving(tmp_path / "state") as editor:
            await editor.open_session(workspace, options=options(fake, provider, "m"))
            queue_read_then_answer(fake, provider)
            first = await editor.run(prompt="what does app.py do?", runId="r1")
            assert first["outcome"] == "done"
            await between(fake)
            queue_read_then_answer(fake, provider)
            second = await editor.run(prompt="and now?", runId="r2")
            assert second["outcome"] == "done" and second["steps"] == 2
    return fake, editor


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_connection_is_kept_through_a_pause_between_prompts(
    tmp_path: Path, workspace: Path, provider: str
) -> None:
    async def pause(fake: FakeApi) -> None:
        await anyio.sleep(PAUSE_SECONDS)

    fake, _ = await two_prompts(tmp_path, workspace, provider, pause)
    assert fake.connections == 1


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_request_dropped_unanswered_on_a_kept_connection_is_sent_again_at_once(
    tmp_path: Path, workspace: Path, provider: str
) -> None:
    async def drop(fake: FakeApi) -> None:
        fake.queue(Dropped())  # the API closed the kept connection as the request came

    fake, editor = await two_prompts(tmp_path, workspace, provider, drop)
    assert len(fake.requests) == 5 and fake.connections == 2
    assert [e for e in editor.events_of("r2") if e.kind == "retry"] == []
