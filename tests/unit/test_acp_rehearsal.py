"""``acp.rehearsal``: a first prompt rehearsed on a private ACP server, so that the first
real prompt of ``tether acp`` does no first-time work — and reaches nothing of the user's
meanwhile.

Each check runs in a fresh interpreter (``probe``), where no prompt has been made yet:
there the first real prompt, on a new server as a client's would be, is watched for
Tether's functions running for the first time in the process (each one a path not yet
taken: a cache to fill, a first call the interpreter has not specialized), code generated,
modules imported and threads started.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import rehearsal_probes as probes

PROBE = """
from tether.acp import rehearsal
from tether.acp.server import AcpServer
from tether.cli import build_tools
from tether.providers import prime
from tether.run.rehearsal import SOURCE, environment

prime(provider)  # what the warm-up does before it rehearses (nothing for the scripted one)
rehearsed = []
if mode != "none":  # twice: once per process
    rehearsed = [rehearsal.rehearse(build_tools, provider=provider) for _ in range(2)]

async def first_prompt(fake):
    # A new server, as a client's: initialize, session/new, then the prompt is watched.
    folder = Path(tempfile.mkdtemp())
    root = folder / "workspace"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(SOURCE)
    model = {"TETHER_PROVIDER": "scripted", "TETHER_SCRIPT": json.dumps(SCRIPT)}
    if fake is not None:
        url = fake.url + ("/v1" if provider == "openai" else "")
        model = {"TETHER_PROVIDER": provider, "TETHER_BASE_URL": url, "TETHER_MODEL": "m"}
    keys = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    server = AcpServer(build_tools(), {**environment(folder), **keys, **model})
    client = rehearsal.RehearsalClient(server.handlers(), server.notifications(), root)
    server.connection = client
    await client.call("initialize", {
        "protocolVersion": 1, "clientCapabilities": rehearsal.DEFAULT_CAPABILITIES,
    })
    opened = await client.call("session/new", {"cwd": str(root), "mcpServers": []})
    # The first session starts the worker threads (a client's first prompt comes after).
    await asyncio.wait_for(server.workers, 30)
    watching[0] = True
    answer = await client.call("session/prompt", {
        "sessionId": opened["sessionId"], "prompt": [{"type": "text", "text": "go"}],
    })
    watching[0] = False
    await server.close()
    return answer["stopReason"], (root / "src" / "app.py").read_text()

if mode != "isolation":
    seen["outcome"], seen["text"] = first_time(first_prompt)
seen["rehearsed"] = rehearsed
Path(out).write_text(json.dumps(seen))
"""


def probe(tmp_path: Path, mode: str, provider: str = "scripted") -> dict[str, Any]:
    return probes.probe(tmp_path, PROBE, mode, provider)


@pytest.mark.parametrize("provider", ["scripted", "anthropic", "openai"])
def test_after_the_rehearsal_a_first_prompt_generates_imports_and_starts_nothing(
    tmp_path: Path, provider: str
) -> None:
    """An SDK provider's prompt is rehearsed through its SDK (answered by the rehearsal's
    socket); the first real prompt then talks to a real local API."""
    found = probe(tmp_path, "rehearse", provider)
    assert found["rehearsed"] == [True, False]  # once per process
    assert found["outcome"] == "end_turn" and "'hi '" in found["text"]
    assert found["first calls"] == []
    assert found["imported"] == []
    assert found["compiled"] == 0
    assert found["threads"] == []


def test_without_it_the_first_prompt_does_that_work(tmp_path: Path) -> None:
    """The other side of the check above: what the rehearsal takes off the first prompt."""
    found = probe(tmp_path, "none", "anthropic")
    assert found["outcome"] == "end_turn"
    assert len(found["first calls"]) > 100  # 302 here, on 2026-12-05
    assert "/acp/server.py:_run" in found["first calls"]


def test_the_rehearsal_reads_no_settings_of_the_users_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    probes.check_isolated(tmp_path, PROBE)
