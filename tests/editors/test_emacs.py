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
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "editors" / "emacs"
STORY = Path(__file__).parent / "emacs" / "story.el"
EGLOT_STORY = Path(__file__).parent / "emacs" / "eglot-story.el"
CANCEL_STORY = Path(__file__).parent / "emacs" / "cancel-story.el"
INSTALL = ["apt-get", "install", "-y", "--no-install-recommends", "emacs-nox", "elpa-eglot"]
ELPA = Path("/usr/share/emacs/site-lisp/elpa")


def require_emacs() -> str:
    """The ``emacs`` binary, installed with apt when missing and possible."""
    found = shutil.which("emacs")
    if (found is None or not eglot_dirs()) and shutil.which("apt-get") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=300)
        subprocess.run(INSTALL, env=env, capture_output=True, timeout=300)
        found = shutil.which("emacs")
    if found is None or not eglot_dirs():
        pytest.fail(
            "Emacs or Eglot is missing and could not be installed here: install Debian's "
            "emacs-nox and elpa-eglot (`sudo apt-get install emacs-nox elpa-eglot`, Emacs 28+, "
            "Eglot 1.9) to run the Emacs tests.",
            pytrace=False,
        )
    return found


def eglot_dirs() -> list[Path]:
    """Debian's elpa-eglot folders (``eglot-1.9``...)."""
    return sorted(ELPA.glob("eglot-*")) if ELPA.is_dir() else []


def emacs_batch(story: Path, env: dict[str, str], typed: str) -> None:
    """Run ``story`` in ``emacs --batch`` with ``typed`` as what the user types."""
    done = subprocess.run(
        [require_emacs(), "--batch", "-Q", "-l", str(story)],
        input=typed,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[:3000]


def story_env(tmp_path: Path, root: Path, turns: dict[str, Any]) -> dict[str, str]:
    """The environment a story reads: the package, the server, the script, the report."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(turns))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env.update(
        TETHER_EL_DIR=str(PACKAGE),
        TETHER_EGLOT_DIR=str(eglot_dirs()[-1]) if eglot_dirs() else "",
        TETHER_PYTHON=sys.executable,
        TETHER_ROOT=str(root),
        TETHER_SCRIPT_FILE=str(script),
        TETHER_RESULT=str(tmp_path / "result.json"),
        TETHER_STATE_DIR=str(tmp_path / "state"),
        HOME=str(tmp_path / "home"),
    )
    return env


def test_a_run_from_emacs_reads_unsaved_text_edits_the_buffer_and_creates_a_file(
    tmp_path: Path,
) -> None:
    require_emacs()
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    # A git repository, as users' projects are: project.el finds the root from src/.
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    edit = {"path": "src/app.py", "old_text": "UNSAVED = 1", "new_text": "RENAMED = 1"}
    write = {"path": "notes/new.txt", "content": "created\n"}
    turns = {
        "turns": [
            {"toolCalls": [{"name": "edit_file", "arguments": edit}]},
            {"toolCalls": [{"name": "write_file", "arguments": write}]},
            {"text": "Renamed it and wrote a note."},
        ]
    }
    env = story_env(tmp_path, root, turns)
    emacs_batch(STORY, env, "allow\nallow\n")  # the two approvals, typed in the minibuffer
    result = tmp_path / "result.json"
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


def test_plain_eglot_runs_with_a_string_and_sees_the_outcome(tmp_path: Path) -> None:
    require_emacs()
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    edit = {"path": "src/app.py", "old_text": "'hello '", "new_text": "'hi '"}
    turns = {
        "turns": [
            {"text": "Changing it.", "toolCalls": [{"name": "edit_file", "arguments": edit}]},
            {"text": "Now it says hi."},
        ]
    }
    emacs_batch(EGLOT_STORY, story_env(tmp_path, root, turns), "Allow\n")
    report = json.loads((tmp_path / "result.json").read_text())
    assert report["outcome"] == "done", report
    assert "return 'hi ' + name" in report["appBuffer"]  # Eglot applied the edit
    # Eglot 1.9 shows showMessage in the echo area and keeps logMessage in its events buffer.
    assert "Tether done · 2 steps · Now it says hi." in report["messages"]
    assert "Tether wants to: Edit src/app.py" in report["events"]  # the approval asked
    assert "[tether]   ✓ edit_file" in report["events"]


def test_tether_cancel_stops_the_run(tmp_path: Path) -> None:
    require_emacs()
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    turns = {"turns": [{"text": "slow"}], "delaySeconds": 30}
    emacs_batch(CANCEL_STORY, story_env(tmp_path, root, turns), "")
    report = json.loads((tmp_path / "result.json").read_text())
    assert report["outcome"] == "cancelled", report
    assert "■ cancelled" in report["transcript"]
    assert report["seconds"] < 10  # the model would have taken 30 s
