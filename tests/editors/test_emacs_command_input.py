"""``commandInput = "ask"`` answered by tether.el in a real Emacs: a command's password
prompt (``agent/ask``'s ``secret``) read with ``read-passwd``, a plain question in the
minibuffer, and a ``[Y/n]`` answered with RET alone (its default: ``enterAlone``); each answer
typed into the command."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from .emacs_harness import PROXY, STORIES, emacs_batch, require_emacs, story_env, tool_results

STORY = STORIES / "command-input-story.el"
SECRET = "hunter2-s3cr3t-Zq"
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()  # the command holds no secret
PROGRAM = (
    "import getpass, hashlib; "
    "typed = hashlib.sha256(getpass.getpass('Password: ').encode()).hexdigest(); "
    f"print('matched' if typed == {DIGEST!r} else 'wrong'); "
    "print('got=' + input('Continue? '))"
)
INSTALL = 'read -p "Install? [Y/n] " x; echo "install=[${x:-Y}]"'


def test_a_password_is_read_unseen_and_a_question_answered(tmp_path: Path) -> None:
    require_emacs()
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    bash = {"name": "bash", "arguments": {"command": f'python3 -c "{PROGRAM}"'}}
    install = {"name": "bash", "arguments": {"command": INSTALL}}
    turns = [{"toolCalls": [bash]}, {"toolCalls": [install]}, {"text": "done"}]
    env = story_env(tmp_path, root, {"turns": turns})
    wire_log = tmp_path / "wire.jsonl"
    env.update(TETHER_PROXY=str(PROXY), TETHER_PROXY_LOG=str(wire_log), TETHER_SECRET_ANSWER=SECRET)
    emacs_batch(STORY, env, "yes\n\n")  # typed at the plain question, then RET alone
    report = json.loads((tmp_path / "result.json").read_text())
    assert report["outcome"] == "done", report
    [secret_prompt] = report["secrets"]
    assert "Password: " in secret_prompt
    wire = [json.loads(line) for line in wire_log.read_text().splitlines()]
    output, installed = [r["output"] for r in tool_results(wire)]
    assert "matched" in output and "got=yes" in output, output
    assert "install=[Y]" in installed, installed
    asks = [e["message"]["params"] for e in wire if e["message"].get("method") == "agent/ask"]
    [asked] = [a for a in asks if "Install? [Y/n]" in a["question"]]
    assert asked["enterAlone"] is True
