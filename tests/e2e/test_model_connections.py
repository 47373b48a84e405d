"""A run's model calls, and the next run's, reuse one connection to the model API: each
new one costs a TCP and a TLS handshake (two round trips to a distant API) per call. One
the API closed meanwhile is replaced before the request goes, with no retry."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.providers.fakes import FakeApi

from ..waiting import wait_until
from .conftest import serving
from .test_providers_e2e import options, queue_read_then_answer

PROVIDERS = ("openai", "anthropic")


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
