"""Lifecycle, capabilities and malformed input, as an editor sees them."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tether.framing import frame

from ..waiting import alive, pid_written, wait_until_sync
from .conftest import SERVE, Editor, script, server_env
from .raw_client import read_body


async def test_capabilities_follow_the_contract(editor: Editor, workspace: Path) -> None:
    result = await editor.open_session(workspace, profile="vscode")
    caps = result.capabilities
    assert caps.text_document_sync.open_close is True
    assert caps.text_document_sync.change == 2  # incremental
    assert caps.text_document_sync.save is not None and caps.text_document_sync.save is not False
    assert {"tether.run", "tether.cancel"} <= set(caps.execute_command_provider.commands)
    tether = caps.experimental["tether"]
    assert tether["protocolVersion"] == 2
    assert set(tether["tools"]) >= {"read_file", "list_files", "search"}
    assert "scripted" in tether["providers"]


def read_message(stream) -> dict:  # type: ignore[no-untyped-def]
    body = read_body(stream)
    assert body is not None, "the server's output ended"
    return json.loads(body)


def read_response(stream, msg_id) -> dict:  # type: ignore[no-untyped-def]
    while True:
        message = read_message(stream)
        if message.get("id") == msg_id and "method" not in message:
            return message


def start_raw(tmp_path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        SERVE,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=server_env(tmp_path / "state"),
        cwd=tmp_path,
    )


def request(proc: subprocess.Popen[bytes], msg_id: object, method: str, params: object) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    assert proc.stdin is not None
    proc.stdin.write(frame(body.encode()))
    proc.stdin.flush()


def test_malformed_json_and_unknown_methods_keep_the_server_serving(tmp_path: Path) -> None:
    proc = start_raw(tmp_path)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        request(proc, 1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert "result" in read_response(proc.stdout, 1)
        proc.stdin.write(frame(b'{"jsonrpc": "2.0", "id": 2, "method": '))
        proc.stdin.flush()
        parse_error = read_message(proc.stdout)
        assert parse_error["error"]["code"] == -32700 and parse_error["id"] is None
        proc.stdin.write(frame(b"[1, 2, 3]"))
        proc.stdin.flush()
        assert read_message(proc.stdout)["error"]["code"] == -32600
        request(proc, 3, "agent/nonsense", {})
        assert read_response(proc.stdout, 3)["error"]["code"] == -32601
        # a typed LSP request with params of the wrong shape is answered, not dropped
        request(proc, 4, "workspace/executeCommand", {"command": 5})
        assert read_response(proc.stdout, 4)["error"]["code"] == -32602
        request(proc, 5, "agent/run", {"prompt": ""})
        error = read_response(proc.stdout, 5)["error"]
        assert error["code"] == -32602 and "prompt" in error["message"]
        request(proc, 6, "agent/cancel", {"runId": "nope"})
        assert read_response(proc.stdout, 6)["result"] == {"cancelled": False}
    finally:
        proc.kill()
        proc.wait(5)


@pytest.mark.parametrize("how", ["stdin closed", "SIGTERM"])
def test_ending_the_server_mid_command_stops_everything_within_two_seconds(
    tmp_path: Path, how: str
) -> None:
    """What an editor does when it quits or force-stops: the run ends, the command's whole
    process group is killed, the log gets its last event, the process exits 0."""
    root = tmp_path / "ws"
    root.mkdir()
    command = "sleep 300 & echo $! > child.pid; sleep 300"
    proc = start_raw(tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    request(
        proc,
        1,
        "initialize",
        {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": {},
            "initializationOptions": {
                "provider": "scripted",
                "autoApprove": ["bash"],
                "script": script(
                    {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}
                ),
            },
        },
    )
    read_response(proc.stdout, 1)
    request(proc, 2, "agent/run", {"prompt": "wait", "runId": "long"})
    pid_file = root / "child.pid"
    grandchild = wait_until_sync(lambda: pid_written(pid_file), "the command to write child.pid")
    if how == "SIGTERM":
        proc.send_signal(signal.SIGTERM)
    else:
        proc.stdin.close()
    # The contract says 2 s (the real number is benchmarks' "exit" scenario); a server that
    # waited for the 300 s command fails here, and no load comes near the bound.
    assert proc.wait(60) == 0
    # SIGKILL is sent before the exit; the child leaving /proc may lag a moment under load
    wait_until_sync(lambda: not alive(grandchild), f"the background child {grandchild} to die")
    sessions = tmp_path / "state" / "sessions"
    lines = [json.loads(x) for f in sessions.glob("*.jsonl") for x in f.read_text().splitlines()]
    events = [x for x in lines if "record" not in x]
    assert events[-1]["kind"] == "run-finished" and events[-1]["outcome"] == "cancelled"


async def test_shutdown_and_exit(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace)
    await editor.client.shutdown_async(None)
    editor.client.exit(None)
    server = editor.client._server
    assert server is not None
    assert await asyncio.wait_for(server.wait(), 5) == 0
    editor.init_result = None  # already shut down


@pytest.mark.parametrize("bad", [{"provider": 5}, {"maxSteps": "ten"}, {"bogus": True}])
def test_invalid_initialization_options_name_the_field(tmp_path: Path, bad: dict) -> None:  # type: ignore[type-arg]
    proc = start_raw(tmp_path)
    try:
        assert proc.stdout is not None
        request(
            proc,
            1,
            "initialize",
            {"processId": None, "rootUri": None, "capabilities": {}, "initializationOptions": bad},
        )
        # The fixed answer (``lsp.lean``); the setting refuses the runs, naming the field.
        assert "result" in read_response(proc.stdout, 1)
        request(proc, 2, "agent/run", {"prompt": "hi"})
        error = read_response(proc.stdout, 2)["error"]
        assert error["code"] == -32602
        assert next(iter(bad)) in error["message"]
    finally:
        proc.kill()
        proc.wait(5)


def test_python_dash_m_tether_reports_its_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tether", "--version"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ},
    )
    assert out.returncode == 0 and out.stdout.startswith("tether ")
