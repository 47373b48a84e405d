"""editors/emacs/tether.el, and plain Eglot, in a real ``emacs --batch`` against the real
``tether serve``: a run with approvals, edits and a new file; ``tether.run`` from Eglot;
``M-x tether-cancel``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .emacs_harness import PACKAGE, STORIES, emacs_batch, require_emacs, story_env

STORY = STORIES / "story.el"
EGLOT_STORY = STORIES / "eglot-story.el"
CANCEL_STORY = STORIES / "cancel-story.el"


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
    # A model that would take 10 minutes: a cancel that waited for it never ends the test.
    turns = {"turns": [{"text": "slow"}], "delaySeconds": 600}
    emacs_batch(CANCEL_STORY, story_env(tmp_path, root, turns), "")
    report = json.loads((tmp_path / "result.json").read_text())
    assert report["outcome"] == "cancelled", report
    assert "■ cancelled" in report["transcript"]


def test_the_package_byte_compiles_without_warnings(tmp_path: Path) -> None:
    emacs = require_emacs()
    for source in PACKAGE.glob("*.el"):
        (tmp_path / source.name).write_text(source.read_text())
    done = subprocess.run(
        [emacs, "--batch", "-Q", "-L", str(tmp_path), "--eval",
         "(setq byte-compile-error-on-warn t)", "-f", "batch-byte-compile",
         *sorted(str(p) for p in tmp_path.glob("*.el"))],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
