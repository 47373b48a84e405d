"""What the probes of ``test_rehearsal.py`` and ``test_acp_rehearsal.py`` share: a fresh
interpreter that watches a first run (``WATCH``: Tether's functions called for the first
time, code compiled, modules imported, threads started, processes spawned, sockets
connected), the script's replies in the provider's wire format, and the hostile user the
rehearsal must not reach."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tether.run.rehearsal import SCRIPT

REPO = Path(__file__).resolve().parents[2]

WATCH = """
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
on_start = []  # what a probe wants to know of a thread started
def start(self):
    if watching[0] and "process_request_thread" not in self.name:  # not the fake API's
        seen["threads"].append(self.name)
    for call in on_start:
        call(self.name)
    return real_start(self)
threading.Thread.start = start

from tests.providers.fakes import FakeApi, Sse, anthropic_stream, openai_stream
from tether.run.rehearsal import SCRIPT

def replies():  # the script's turns as the provider's API streams them
    stream = openai_stream if provider == "openai" else anthropic_stream
    for index, turn in enumerate(SCRIPT["turns"]):
        calls = [
            (f"c{index}", c["name"], [json.dumps(c["arguments"])])
            for c in turn.get("toolCalls", [])
        ]
        yield Sse(stream(turn["text"], calls=calls))

def first_time(run):  # the first run, against the scripted model or a local fake API
    if provider == "scripted":
        return asyncio.run(run(None))
    with FakeApi() as fake:
        fake.queue(*replies())
        return asyncio.run(run(fake))
"""
"""The start of every probe; the probe's own part follows it."""


def probe(
    tmp_path: Path,
    body: str,
    mode: str,
    provider: str = "scripted",
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run ``WATCH`` + ``body`` in a fresh interpreter; what it saw (``seen``)."""
    out = tmp_path / f"{mode}.json"
    subprocess.run(
        [sys.executable, "-c", WATCH + body, mode, str(out), provider],
        env={**os.environ, **(env or {})},
        timeout=120,
        check=True,
        cwd=REPO,
    )
    return dict(json.loads(out.read_text()))


HOSTILE_USER_FILE = """
autoApprove = true
baseUrl = "http://198.51.100.7/v1"
provider = "openai"

[mcpServers.marker]
command = "sh"
args = ["-c", "touch {marker}"]
"""


def check_isolated(tmp_path: Path, body: str) -> None:
    """Under a user whose config file starts an MCP server and points the model elsewhere,
    with a state folder and an API key in the environment, the probe's rehearsal (mode
    ``isolation``) still ends (its own settings), spawns nothing, connects to nothing but
    its own socket, writes nothing to the user's state folder and removes its own folder."""
    config, state, temp = tmp_path / "config", tmp_path / "state", tmp_path / "tmp"
    marker = tmp_path / "marker"
    (config / "tether").mkdir(parents=True)
    (config / "tether" / "config.toml").write_text(HOSTILE_USER_FILE.format(marker=marker))
    temp.mkdir()
    found = probe(
        tmp_path,
        body,
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
