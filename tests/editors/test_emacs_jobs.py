"""Background jobs from an editor: in ``*tether-chat*`` in a real ``emacs -nw`` (in tmux),
a command the model started in the background (allowed inline) is listed by ``/jobs`` and
stopped by ``/jobs stop job-1`` — the server's session command, through
``agent/command`` — and its process is gone."""

from __future__ import annotations

import os
from pathlib import Path

from .test_emacs_commands import requests, sent
from .test_emacs_keys import emacs_with_keys, wire_of

SERVE = "echo $$ > pid; echo 'ready on :8000'; exec sleep 300"
TURNS = {
    "turns": [
        {"toolCalls": [{"name": "bash", "arguments": {"command": SERVE, "background": True}}]},
        {"text": "It runs."},
    ]
}


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def test_the_chat_lists_and_stops_a_background_job(tmp_path: Path) -> None:
    with emacs_with_keys(tmp_path, TURNS) as (emacs, folder):
        emacs.command("tether-chat")
        emacs.wait_for("tether>")
        sent(emacs, "start the server", "[Allow] [Allow always] [Deny]")
        emacs.keys("a")
        emacs.wait_for("■ done · 2 steps")
        pid = int((folder / "ws" / "pid").read_text())
        assert not gone(pid)
        sent(emacs, "/jobs", "job-1 · running")
        emacs.wait_for("ready on :8000")
        sent(emacs, "/jobs stop job-1", "stopped job-1 · stopped")
        assert gone(pid)  # agent/jobStop answers once the job's processes are gone
    commands = [(p["name"], p.get("argument")) for p in requests(wire_of(folder), "agent/command")]
    assert commands == [("jobs", None), ("jobs", "stop job-1")]
