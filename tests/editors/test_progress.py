"""A running command in the real editors: its call's line (Neovim) or a line of its own
(Emacs) says the seconds so far and the last line it printed, in the chat and the
transcript, until its result takes its place. The command waits on a FIFO that the editor
side opens only once it has shown a second gone by: nothing waits on a clock."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .conftest import Nvim, call, script
from .emacs_harness import STORIES, emacs_batch, story_env

COMMAND = "echo compiling part one; read word < gate; echo finished $word"
TURNS = script({"toolCalls": [call("bash", command=COMMAND)]}, {"text": "Built."})
SPINNER = "[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]"
STATUS = rf"{SPINNER} ([1-9]\d*) s · compiling part one"


def test_neovim_shows_the_running_command_on_its_line_then_the_result(nvim: Nvim) -> None:
    os.mkfifo(nvim.workspace / "gate")
    r = nvim.run("progress", script=TURNS, timeout=90)
    assert r["run"]["result"]["outcome"] == "done"
    chat, transcript = r["running"]["chat"], r["running"]["transcript"]
    assert any(re.fullmatch(rf"→ bash echo compiling part one; .*  {STATUS}", x) for x in chat)
    assert any(re.fullmatch(rf'→ bash \{{"command": .*}}  {STATUS}', x) for x in transcript)
    for done in (r["chat"], r["transcript"]):
        assert not any(re.search(STATUS, line) for line in done), done
        assert any(line.startswith("✓ bash ") for line in done), done
        assert "  finished go" in done


def test_emacs_shows_a_status_line_under_the_running_command_then_the_result(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    os.mkfifo(root / "gate")
    emacs_batch(STORIES / "progress-story.el", story_env(tmp_path, root, TURNS), "")
    report = json.loads((tmp_path / "result.json").read_text())
    assert report["outcome"] == "done"
    for view in ("chat", "transcript"):
        running = report["running"][view].splitlines()
        at = next(i for i, line in enumerate(running) if line.startswith("→ bash echo compiling"))
        under = [line for line in running[at + 1 :] if re.fullmatch(rf"  {STATUS}", line)]
        assert len(under) == 1, running  # one line, replaced as the time goes on
        done = report[view]
        assert not re.search(STATUS, done), done
        assert "  ✓ bash: exit code: 0\n" in done, done
