"""``tether serve --log-level info`` logs the model traffic of runs, and nothing of the
warm-up's canned request (answered in-process: it is no traffic, and a line naming
``api.anthropic.com`` or a placeholder address would read as if it were)."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path

import pytest

from tests.providers.fakes import FakeApi, Sse, anthropic_stream, openai_stream
from tether.providers.unlogged import unlogged

from ..e2e.raw_client import RawServer

MODELS = {"openai": "gpt-5.4", "anthropic": "claude-sonnet-5-5"}


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_info_logs_show_a_runs_requests_and_not_the_warm_ups(tmp_path: Path, provider: str) -> None:
    stream = openai_stream if provider == "openai" else anthropic_stream
    with FakeApi() as fake:
        fake.queue(Sse(stream("Hello.")))
        base_url = fake.url + "/v1" if provider == "openai" else fake.url
        env = {
            "TETHER_PROVIDER": provider,  # the provider the warm-up primes at start
            "TETHER_BASE_URL": base_url,
            "TETHER_MODEL": MODELS[provider],
            "OPENAI_API_KEY": "sk-test",
            "ANTHROPIC_API_KEY": "sk-ant-test",
        }
        argv = [sys.executable, "-m", "tether", "--log-level", "info", "serve"]
        server = RawServer(tmp_path, env, argv=argv)
        try:
            workspace = tmp_path / "project"
            workspace.mkdir()
            options = {"provider": provider, "baseUrl": base_url, "model": MODELS[provider]}
            server.initialize(workspace, options)
            server.request("run", "agent/run", {"prompt": "say hello", "runId": "r1"})
            answer = server.answer("run", timeout=120)
            assert answer.get("result", {}).get("outcome") == "done", answer
            server.request("bye", "shutdown")
            server.answer("bye", timeout=30)
            server.notify("exit")
            assert server.close(timeout=30) == 0
        finally:
            server.kill()
        assert len(fake.requests) == 1
    logged = server.stderr().splitlines()
    requests = [line for line in logged if "HTTP Request:" in line]
    assert requests, "\n".join(logged)  # a run's requests are logged at info
    for line in requests:  # and only theirs: every one went to the fake
        assert fake.url in line, line
    assert len(requests) == len(fake.requests), requests


def test_only_the_priming_thread_goes_unlogged(caplog: pytest.LogCaptureFixture) -> None:
    sdk = logging.getLogger("httpx2")
    with caplog.at_level(logging.INFO):
        with unlogged():
            sdk.info("canned")
            logging.getLogger("tether.anything").info("also the warm-up's")
            real = threading.Thread(target=sdk.info, args=("a run's request",))
            real.start()
            real.join()
        sdk.info("after")
    assert [r.getMessage() for r in caplog.records] == ["a run's request", "after"]
