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


STEPPED = (
    ": \u202e\x1b[2J; echo $$ > pid; printf 'out-%s\\n' one; "
    "while [ ! -e go ]; do sleep 0.02; done; printf 'out-%s\\n' two; exec sleep 300"
)
STEPPED_TURNS = {
    "turns": [
        {"toolCalls": [{"name": "bash", "arguments": {"command": STEPPED, "background": True}}]},
        {"text": "It runs."},
    ]
}


def test_tether_jobs_opens_a_buffer_following_the_job_and_k_stops_it(tmp_path: Path) -> None:
    """``M-x tether-jobs`` lists the chat's session's jobs; RET on one opens
    ``*tether-job job-1*``, which shows what the job prints as it prints it (``out-two``
    comes after the run ended, when the test lets the job go on); ``k`` there stops it."""
    with emacs_with_keys(tmp_path, STEPPED_TURNS) as (emacs, folder):
        emacs.command("tether-chat")
        emacs.wait_for("tether>")
        sent(emacs, "start it", "[Allow] [Allow always] [Deny]")
        emacs.keys("a")
        emacs.wait_for("■ done · 2 steps")
        pid = int((folder / "ws" / "pid").read_text())
        emacs.command("tether-jobs")
        emacs.wait_for("*tether-jobs*")
        listing = emacs.wait_for("job-1  running")
        emacs.keys("Enter")
        # The command is the model's text: shown escaped in the buffer's first line.
        header = emacs.wait_for("job-1 · running · : \\u202e\\x1b[2J; echo")
        assert "\u202e" not in header and "\x1b" not in header
        screen = emacs.wait_for("out-one")
        assert "out-two" not in screen, screen
        (folder / "ws" / "go").touch()
        emacs.wait_for("out-two")
        emacs.keys("k")
        emacs.wait_for("job-1 · stopped")
        assert gone(pid)
        assert ": \\u202e\\x1b[2J" in listing, listing
    views = requests(wire_of(folder), "agent/jobOutput")
    assert views and all(v["jobId"] == "job-1" and v["sessionId"] for v in views), views
    assert [v.get("since", 0) for v in views] == sorted(v.get("since", 0) for v in views)
    assert [p["jobId"] for p in requests(wire_of(folder), "agent/jobStop")] == ["job-1"]
