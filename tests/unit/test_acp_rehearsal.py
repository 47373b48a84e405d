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

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.run.rehearsal import SCRIPT

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import asyncio, json, sys, tempfile, threading
from pathlib import Path

mode, out, provider = sys.argv[1], sys.argv[2], sys.argv[3]
seen = {"compiled": 0, "imported": [], "threads": [], "spawned": [], "connected": []}
seen["first calls"] = []
watching = [False]
called = set()
ours = str(Path.cwd() / "server" / "tether")
def profile(frame, event, arg):  # every function's first call in this process
    if event == "call" and frame.f_code not in called:
        called.add(frame.f_code)
        code = frame.f_code
        if watching[0] and code.co_filename.startswith(ours):
            seen["first calls"].append(f"{code.co_filename[len(ours):]}:{code.co_name}")
sys.setprofile(profile)
threading.setprofile(profile)
def hook(event, args):
    if event in ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork", "os.system"):
        seen["spawned"].append(event)
    elif event == "socket.connect":
        seen["connected"].append(repr(args[1]))
    elif watching[0] and event == "compile":
        seen["compiled"] += 1
    elif watching[0] and event == "import":
        seen["imported"].append(args[0])
sys.addaudithook(hook)
real_start = threading.Thread.start
def start(self):
    if watching[0] and "process_request_thread" not in self.name:  # not the fake API's
        seen["threads"].append(self.name)
    return real_start(self)
threading.Thread.start = start

from tests.providers.fakes import FakeApi, Sse, anthropic_stream, openai_stream
from tether.acp import rehearsal
from tether.acp.server import AcpServer
from tether.cli import build_tools
from tether.providers import prime
from tether.run.rehearsal import SCRIPT, SOURCE, environment

prime(provider)  # what the warm-up does before it rehearses (nothing for the scripted one)
rehearsed = []
if mode != "none":  # twice: once per process
    rehearsed = [rehearsal.rehearse(build_tools, provider=provider) for _ in range(2)]

def replies():  # the script's turns as the provider's API streams them
    stream = openai_stream if provider == "openai" else anthropic_stream
    for index, turn in enumerate(SCRIPT["turns"]):
        calls = [
            (f"c{index}", c["name"], [json.dumps(c["arguments"])])
            for c in turn.get("toolCalls", [])
        ]
        yield Sse(stream(turn["text"], calls=calls))

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
    if provider == "scripted":
        seen["outcome"], seen["text"] = asyncio.run(first_prompt(None))
    else:
        with FakeApi() as fake:
            fake.queue(*replies())
            seen["outcome"], seen["text"] = asyncio.run(first_prompt(fake))
seen["rehearsed"] = rehearsed
Path(out).write_text(json.dumps(seen))
"""


def probe(
    tmp_path: Path, mode: str, provider: str = "scripted", env: dict[str, str] | None = None
) -> dict[str, Any]:
    out = tmp_path / f"{mode}.json"
    subprocess.run(
        [sys.executable, "-c", PROBE, mode, str(out), provider],
        env={**os.environ, **(env or {})},
        timeout=120,
        check=True,
        cwd=REPO,
    )
    return dict(json.loads(out.read_text()))


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


HOSTILE_USER_FILE = """
autoApprove = true
baseUrl = "http://198.51.100.7/v1"
provider = "openai"

[mcpServers.marker]
command = "sh"
args = ["-c", "touch {marker}"]
"""


def test_the_rehearsal_reads_no_settings_of_the_users_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    """Under a user whose config file starts an MCP server and points the model elsewhere,
    with a state folder and an API key in the environment: the rehearsal still ends (its
    own settings), spawns nothing, connects to nothing but its own socket, writes nothing
    to the user's state folder and removes its own folder."""
    config, state, temp = tmp_path / "config", tmp_path / "state", tmp_path / "tmp"
    marker = tmp_path / "marker"
    (config / "tether").mkdir(parents=True)
    (config / "tether" / "config.toml").write_text(HOSTILE_USER_FILE.format(marker=marker))
    temp.mkdir()
    found = probe(
        tmp_path,
        "isolation",
        "anthropic",
        {
            "XDG_CONFIG_HOME": str(config),
            "HOME": str(tmp_path),
            "TETHER_STATE_DIR": str(state),
            "TETHER_PROVIDER": "anthropic",
            "OPENAI_API_KEY": "sk-not-for-the-rehearsal",
            "TMPDIR": str(temp),
        },
    )
    assert found["rehearsed"] == [True, False]
    assert found["spawned"] == [] and not marker.exists()
    # Its SDK connected only to the rehearsal's own socket, once per model turn.
    turns = len(SCRIPT["turns"])
    assert [Path(eval(address)).name for address in found["connected"]] == ["api.sock"] * turns
    assert all(eval(address).startswith(str(temp)) for address in found["connected"])
    assert not state.exists()
    assert list(temp.iterdir()) == []
