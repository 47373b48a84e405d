"""``providers.prime``: a rehearsed request makes the first real one do no first-time work.

The warm-up of ``tether serve`` and the daemon prime the configured provider, so that an
editor's first prompt finds the SDK loaded *and used once*: its lazily imported modules
in, its request transformation worked out, its stream events' validators built. Each
check runs in a fresh interpreter, where nothing of the SDK has been used yet.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import asyncio, json, socket, sys
from pydantic._internal import _generate_schema
from tests.providers.fake_responses import responses_stream
from tests.providers.fakes import FakeApi, Sse, anthropic_stream, openai_stream
from tether.providers import prime
from tether.providers.base import ModelRequest, UserMessage

name = sys.argv[1]
connects = []
real_connect = socket.socket.connect
def connect(self, address):
    connects.append(address)
    return real_connect(self, address)
socket.socket.connect = connect
schemas = []
real_generate = _generate_schema.GenerateSchema.generate_schema
def generate(self, obj):
    schemas.append(repr(obj)[:80])
    return real_generate(self, obj)
_generate_schema.GenerateSchema.generate_schema = generate

if sys.argv[2] == "prime":
    prime(name)
    prime(name)  # once per process: the second call does nothing
primed = {"connects": list(connects), "schemas": len(schemas)}
if name == "anthropic":
    from tether.providers.anthropic import AnthropicProvider as Provider
elif name == "openai":
    from tether.providers.openai import OpenAIProvider as Provider
else:
    from tether.providers.openai_responses import OpenAIResponsesProvider as Provider
streams = {"anthropic": anthropic_stream, "openai": openai_stream}
stream = streams.get(name, responses_stream)
with FakeApi() as fake:
    fake.queue(Sse(stream("hi", calls=[("c1", "read_file", ['{"path": "a"}'])])))
    url = fake.url + ("" if name == "anthropic" else "/v1")
    provider = Provider(model="m", api_key="k", base_url=url)
    modules, schemas[:] = set(sys.modules), []
    request = ModelRequest(system="s", messages=[UserMessage("hi")], tools=[])
    async def once():
        return [type(d).__name__ async for d in provider.stream(request)]
    deltas = asyncio.run(once())
    print(json.dumps({
        "primed": primed,
        "imported": sorted(set(sys.modules) - modules),
        "schemas": schemas,
        "deltas": deltas,
        "requests": len(fake.requests),
    }))
"""


def probe(provider: str, mode: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, provider, mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=REPO,
    )
    return dict(json.loads(out.stdout))


PRIMED = ["anthropic", "openai", "openai-responses"]


@pytest.mark.parametrize("provider", PRIMED)
def test_after_prime_the_first_request_imports_and_builds_nothing(provider: str) -> None:
    found = probe(provider, "prime")
    assert found["primed"]["connects"] == []  # type: ignore[index]  # nothing left the process
    assert found["imported"] == []
    assert found["schemas"] == []
    # The real request went out through the real transport and its reply came back whole.
    assert found["requests"] == 1
    assert found["deltas"] == ["TextDelta", "ToolCallReady", "UsageDelta"]


@pytest.mark.parametrize("provider", PRIMED)
def test_without_prime_the_first_request_does_that_work(provider: str) -> None:
    """The other side of the check above: what prime takes off the first request."""
    found = probe(provider, "none")
    assert found["imported"] and found["schemas"] and found["requests"] == 1
