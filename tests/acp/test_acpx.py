"""``tether acp`` driven by acpx 0.19.1, a real ACP client from npm (installed on first use,
cached: ``acpx.py``): a prompt whose edit is allowed and written through the client's
``fs/write_text_file``, every message of acpx's JSON transcript checked against the ACP
schema; a permission asked on a terminal and answered with a key (allowed, then refused);
the session listed by acpx's ``sessions list`` (ACP ``session/list``). No process is left."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from .acpx import installed_acpx, left_behind, marked_env, run_acpx, transcript, violations
from .tether import TETHER_ACP, tether_env, turns
from .ui_clients import acpx_command, acpx_turn

pytestmark = pytest.mark.slow  # a real client and agent each, and npm once

WRITE = {"name": "write_file", "arguments": {"path": "app.py", "content": 'print("hi")\n'}}
ASK = {"name": "ask_user", "arguments": {"question": "Which greeting?", "choices": ["hi", "yo"]}}


def _setup(tmp_path: Path, *script_turns: dict[str, object]) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "work"
    root.mkdir()
    (root / "app.py").write_text('print("x")\n')
    env = marked_env(tether_env(tmp_path, turns(*script_turns)))
    return root, env


def test_a_prompt_a_permission_and_the_session_list(tmp_path: Path) -> None:
    root, env = _setup(
        tmp_path, {"toolCalls": [ASK]}, {"toolCalls": [WRITE]}, {"text": "it says hi now"}
    )
    agent = ["--agent", shlex.join(TETHER_ACP), "--cwd", str(root)]
    ran = run_acpx(
        [*agent, "--approve-all", "--format", "json", "exec", "make it say hi"], env, root
    )
    assert ran.returncode == 0, ran.stderr
    messages = transcript(ran.stdout)
    assert violations(messages) == []  # every message, both ways, as the schema says
    methods = [m.get("method") for m in messages]
    assert "session/request_permission" in methods  # asked, and acpx allowed it
    [write] = [m for m in messages if m.get("method") == "fs/write_text_file"]
    assert write["params"]["content"] == 'print("hi")\n'  # through the client
    [answer] = [m["result"] for m in messages if "stopReason" in (m.get("result") or {})]
    assert answer == {"stopReason": "end_turn"}
    assert "elicitation/create" not in methods  # acpx declares no elicitation
    updates = [m["params"]["update"] for m in messages if m.get("method") == "session/update"]
    outputs = [u["rawOutput"]["output"] for u in updates if "rawOutput" in u]
    assert outputs[0].startswith("No one to ask")  # ask_user told so at once
    said = "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert said == "it says hi now"
    session = next(
        m["result"]["sessionId"] for m in messages if "sessionId" in (m.get("result") or {})
    )

    listed = run_acpx([*agent, "--format", "json", "sessions", "list"], env, root)
    assert listed.returncode == 0, listed.stderr
    sessions = json.loads(listed.stdout.splitlines()[-1])["sessions"]
    assert [(s["sessionId"], s["title"], s["cwd"]) for s in sessions] == [
        (session, "make it say hi", str(root))
    ]
    assert left_behind(env) == []


async def test_a_permission_answered_with_a_key_on_a_terminal(tmp_path: Path) -> None:
    root, env = _setup(tmp_path, {"toolCalls": [WRITE]}, {"text": "it says hi now"})
    acpx = installed_acpx()
    agent = [sys.executable, "-m", "tether", "acp"]
    command = acpx_command(acpx, agent, root, "make it say hi", permissions="approve-reads")
    refused = await acpx_turn(command, env=env, cwd=root, answer="n", until=r"it says hi now")
    assert refused.asked and refused.asked[0].endswith("app.py")
    assert (root / "app.py").read_text() == 'print("x")\n'  # refused: nothing written
    allowed = await acpx_turn(command, env=env, cwd=root, answer="y", until=r"it says hi now")
    assert allowed.exit_status == 0, allowed.screen
    assert (root / "app.py").read_text() == 'print("hi")\n'
    assert left_behind(env) == []
