"""editors/emacs/tether.el in a real ``emacs --batch`` against the real ``tether serve``.

Emacs comes from Debian (``emacs-nox``); when it is missing and apt can install it (root,
a Debian-like system) the test installs it, as CI does on a fresh machine (about 20 s).
Otherwise the test fails saying how to install it: it is never skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "editors" / "emacs"
STORY = Path(__file__).parent / "emacs" / "story.el"
INSTALL = ["apt-get", "install", "-y", "--no-install-recommends", "emacs-nox"]


def require_emacs() -> str:
    """The ``emacs`` binary, installed with apt when missing and possible."""
    found = shutil.which("emacs")
    if found is None and shutil.which("apt-get") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=300)
        subprocess.run(INSTALL, env=env, capture_output=True, timeout=300)
        found = shutil.which("emacs")
    if found is None:
        pytest.fail(
            "Emacs is missing and could not be installed here: install Debian's emacs-nox "
            "(`sudo apt-get install emacs-nox`, Emacs 28+) to run the Emacs package's test.",
            pytrace=False,
        )
    return found


def test_a_run_from_emacs_reads_unsaved_text_edits_the_buffer_and_creates_a_file(
    tmp_path: Path,
) -> None:
    emacs = require_emacs()
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    # A git repository, as users' projects are: project.el finds the root from src/.
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    edit = {"path": "src/app.py", "old_text": "UNSAVED = 1", "new_text": "RENAMED = 1"}
    turns = {
        "turns": [
            {"toolCalls": [{"name": "edit_file", "arguments": edit}]},
            {
                "toolCalls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "notes/new.txt", "content": "created\n"},
                    }
                ]
            },
            {"text": "Renamed it and wrote a note."},
        ]
    }
    script = tmp_path / "script.json"
    script.write_text(json.dumps(turns))
    result = tmp_path / "result.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env.update(
        TETHER_EL_DIR=str(PACKAGE),
        TETHER_PYTHON=sys.executable,
        TETHER_ROOT=str(root),
        TETHER_SCRIPT_FILE=str(script),
        TETHER_RESULT=str(result),
        TETHER_STATE_DIR=str(tmp_path / "state"),
        HOME=str(tmp_path / "home"),
    )
    done = subprocess.run(
        [emacs, "--batch", "-Q", "-l", str(STORY)],
        input="allow\nallow\n",  # the two approvals, typed in the minibuffer
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(result.read_text())
    assert report["outcome"] == "done", report
    # The edit matched text that was only in the unsaved buffer, and landed in the buffer.
    assert "RENAMED = 1" in report["appBuffer"] and "UNSAVED" not in report["appBuffer"]
    assert (root / "src" / "app.py").read_text() == report["appBuffer"]  # saved on request
    assert (root / "notes" / "new.txt").read_text() == "created\n"
    transcript = report["transcript"]
    assert "✓ edit_file" in transcript and "✓ write_file" in transcript
    assert "■ done · 3 steps" in transcript
    assert "Tether done · 3 steps · Renamed it and wrote a note." in report["messages"]
    assert "allow: Edit src/app.py" in transcript
