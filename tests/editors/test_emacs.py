"""editors/emacs/tether.el in a real ``emacs --batch`` against the real ``tether serve``.

Emacs comes from Debian (``emacs-nox``); when it is missing and apt can install it (root,
a Debian-like system) the test installs it, as CI does on a fresh machine (about 20 s).
Otherwise the test fails saying how to install it: it is never skipped.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import termios
import threading
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "editors" / "emacs"
STORY = Path(__file__).parent / "emacs" / "story.el"
EGLOT_STORY = Path(__file__).parent / "emacs" / "eglot-story.el"
CANCEL_STORY = Path(__file__).parent / "emacs" / "cancel-story.el"
WITHDRAW_STORY = Path(__file__).parent / "emacs" / "withdraw-story.el"
DIAGNOSTICS_STORY = Path(__file__).parent / "emacs" / "diagnostics-story.el"
PROXY = Path(__file__).parent / "lsp_proxy.py"
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


def emacs_on_a_terminal(story: Path, env: dict[str, str]) -> None:
    """Run ``story`` in an interactive ``emacs -nw`` on a pseudo-terminal (nothing typed)."""
    main, side = os.openpty()
    with subprocess.Popen(
        [require_emacs(), "-nw", "-Q", "-l", str(story)],
        stdin=side,
        stdout=side,
        stderr=side,
        env={**env, "TERM": "xterm"},
        start_new_session=True,
        preexec_fn=own_terminal,  # Emacs opens /dev/tty: the pty must be its terminal
    ) as emacs:
        os.close(side)
        screen = bytearray()
        # Emacs blocks when no one reads its terminal: drain it until it exits.
        drain = threading.Thread(target=read_all, args=(main, screen), daemon=True)
        drain.start()
        try:
            code = emacs.wait(timeout=120)
        finally:
            if emacs.poll() is None:
                emacs.kill()
                emacs.wait(timeout=10)
            drain.join(timeout=10)
            os.close(main)
    assert code == 0, bytes(screen[-3000:]).decode(errors="replace")


def own_terminal() -> None:
    """In the child, after ``setsid``: make its stdin (the pty) the controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def read_all(fd: int, into: bytearray) -> None:
    """Append what ``fd`` gives to ``into`` until it ends (the terminal closes)."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        into.extend(chunk)


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


EDIT = {"path": "src/app.py", "old_text": "'hello '", "new_text": "'hi '"}
WRITE = {"path": "notes/after.txt", "content": "later\n"}


def proxied_story(
    tmp_path: Path,
    story: Path,
    turns: dict[str, Any],
    extra: dict[str, str],
    *,
    app: str = "def greet(name):\n    return 'hello ' + name\n",
    terminal: bool = False,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run ``story`` with the server behind the wire recorder (in ``emacs -nw`` when
    ``terminal``); its report and the wire."""
    require_emacs()
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(app)
    (root / "README.md").write_text("# demo\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    env = story_env(tmp_path, root, turns)
    wire_log = tmp_path / "wire.jsonl"
    env.update(TETHER_PROXY=str(PROXY), TETHER_PROXY_LOG=str(wire_log), **extra)
    if terminal:
        emacs_on_a_terminal(story, env)
    else:
        emacs_batch(story, env, "")  # the user types nothing in the minibuffer
    report = json.loads((tmp_path / "result.json").read_text())
    wire = [json.loads(line) for line in wire_log.read_text().splitlines()]
    return report, wire


def withdrawn_story(
    tmp_path: Path, how: str, turns: dict[str, Any], *, terminal: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run withdraw-story.el (``how``: timeout or cancel; in ``emacs -nw`` with the
    minibuffer prompt open when ``terminal``); its report and the wire."""
    extra = {"TETHER_WITHDRAW": how, **({"TETHER_READ": "1"} if terminal else {})}
    return proxied_story(tmp_path, WITHDRAW_STORY, turns, extra, terminal=terminal)


def approvals_asked(wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``agent/approve`` requests the server sent."""
    return [
        entry["message"]
        for entry in wire
        if entry["from"] == "server" and entry["message"].get("method") == "agent/approve"
    ]


def withdrawn_ids(wire: list[dict[str, Any]]) -> list[Any]:
    """The ids of the server's ``$/cancelRequest`` notifications."""
    return [
        entry["message"]["params"]["id"]
        for entry in wire
        if entry["from"] == "server" and entry["message"].get("method") == "$/cancelRequest"
    ]


def answers(wire: list[dict[str, Any]], request_id: Any) -> list[dict[str, Any]]:
    """The editor's responses to the server's request ``request_id``."""
    return [
        entry["message"]
        for entry in wire
        if entry["from"] == "editor"
        and "method" not in entry["message"]
        and entry["message"].get("id") == request_id
    ]


def tool_results(wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run's ``tool-result`` events."""
    return [
        entry["message"]["params"]
        for entry in wire
        if entry["from"] == "server"
        and entry["message"].get("method") == "agent/event"
        and entry["message"]["params"].get("kind") == "tool-result"
    ]


TIMEOUT_TURNS = {
    "turns": [
        {"toolCalls": [{"name": "edit_file", "arguments": EDIT}]},
        {"toolCalls": [{"name": "write_file", "arguments": WRITE}]},
        {"text": "Wrote the note instead."},
    ]
}


@pytest.mark.parametrize("terminal", [False, True], ids=["batch", "minibuffer-open"])
def test_an_approval_that_times_out_closes_unanswered_and_the_next_one_works(
    tmp_path: Path, terminal: bool
) -> None:
    report, wire = withdrawn_story(tmp_path, "timeout", TIMEOUT_TURNS, terminal=terminal)
    first, second = approvals_asked(wire)
    assert answers(wire, first["id"]) == []  # Emacs never answered the withdrawn request
    assert "error" not in report, report
    assert report["firstShown"] is True and report["toldWithdrawn"] is True, report
    # The withdrawn prompt is gone (the next approval may already be shown in its place).
    assert "'hi '" not in (report["shownAfterWithdraw"] or ""), report
    assert "Edit src/app.py" not in report["pendingAfterWithdraw"], report
    assert "Tether: approval withdrawn" in report["messages"]
    assert first["params"]["title"] == "Edit src/app.py"
    assert withdrawn_ids(wire) == [first["id"]]
    [answer] = answers(wire, second["id"])
    assert answer["result"]["decision"] == "allow"
    denied, written = tool_results(wire)
    assert denied["ok"] is False and "No one answered the approval" in denied["output"], denied
    assert written["ok"] is True
    assert report["outcome"] == "done", report
    assert (tmp_path / "ws" / "notes" / "after.txt").read_text() == "later\n"
    assert (tmp_path / "ws" / "src" / "app.py").read_text().count("'hello '") == 1
    if terminal:  # the open `M-x tether-approve' prompt was closed by the withdrawal
        assert (report["readFrom"], report["readClosed"]) == (0, 0), report


def test_cancelling_the_run_closes_its_approval_unanswered(tmp_path: Path) -> None:
    turns = {"turns": [{"toolCalls": [{"name": "edit_file", "arguments": EDIT}]}]}
    report, wire = withdrawn_story(tmp_path, "cancel", turns)
    # The approval buffer's keys are Tether's, not diff-mode's (`A' ediff, `q' quit-window).
    assert report["keys"] == [
        "tether-approval-allow",
        "tether-approval-allow-always",
        "tether-approval-deny",
        "tether-approval-deny",
    ], report
    [asked] = approvals_asked(wire)
    # Not even the `a' pressed after the run ended answers it.
    assert answers(wire, asked["id"]) == []
    assert "error" not in report, report
    assert report["firstShown"] is True and report["toldWithdrawn"] is True, report
    assert report["shownAfterWithdraw"] is False and report["pendingAfterWithdraw"] == []
    assert report["outcome"] == "cancelled", report
    assert withdrawn_ids(wire) == [asked["id"]]
    assert "Tether: no approval is waiting" in report["messages"]
    assert (tmp_path / "ws" / "src" / "app.py").read_text().count("'hello '") == 1


def test_the_agent_reads_flymakes_problems(tmp_path: Path) -> None:
    app = "def greet(name):\n    # TODO: polite\n    return 'hello ' + nme\n"
    turns = {
        "turns": [
            {"toolCalls": [{"name": "diagnostics", "arguments": {"path": "src/app.py"}}]},
            {"toolCalls": [{"name": "diagnostics", "arguments": {}}]},
            {"toolCalls": [{"name": "diagnostics", "arguments": {"path": "README.md"}}]},
            {"text": "One error, one warning."},
        ]
    }
    report, wire = proxied_story(tmp_path, DIAGNOSTICS_STORY, turns, {}, app=app)
    assert report == {"outcome": "done", "flymake": 2}, report
    one_file, every_file, clean = (r["output"] for r in tool_results(wire)[:3])
    expected = [
        "src/app.py:3: error [story-flymake] undefined name 'nme'",
        "src/app.py:2: warning [story-flymake] a TODO is left",
    ]
    for output in (one_file, every_file):  # README.md has no Flymake: it is not listed
        assert output.splitlines()[1:] == expected, output
    assert clean == "The editor reports no problems in README.md."
    [initialize] = [
        e["message"]
        for e in wire
        if e["from"] == "editor" and e["message"].get("method") == "initialize"
    ]
    assert initialize["params"]["capabilities"]["experimental"]["tether"]["diagnostics"] is True
    # The request itself, as Emacs answered it: LSP ranges in characters.
    asked = [
        e["message"]["id"]
        for e in wire
        if e["from"] == "server" and e["message"].get("method") == "agent/diagnostics"
    ]
    [first] = answers(wire, asked[0])
    [item] = first["result"]["items"]
    error = next(d for d in item["diagnostics"] if d["severity"] == 1)
    assert error["range"] == {
        "start": {"line": 2, "character": 22},
        "end": {"line": 2, "character": 25},
    }


def test_eglots_diagnostics_from_a_real_language_server_reach_the_agent(tmp_path: Path) -> None:
    server = Path(sys.executable).parent / "basedpyright-langserver"
    if not server.exists():
        pytest.fail(f"{server} is missing: install the test extra (basedpyright)", pytrace=False)
    app = "def greet(name):\n    return 'héllo ' + nme\n"
    turns = {
        "turns": [
            {"toolCalls": [{"name": "diagnostics", "arguments": {"path": "src/app.py"}}]},
            {"text": "One error."},
        ]
    }
    extra = {"TETHER_LSP": str(server)}
    report, wire = proxied_story(tmp_path, DIAGNOSTICS_STORY, turns, extra, app=app)
    assert report["outcome"] == "done", report
    [result] = tool_results(wire)
    # Eglot's Flymake text is "basedpyright [reportUndefinedVariable]: …": the server's own
    # message, source and code are sent instead, so the model reads them once.
    # (basedpyright also warns about the missing annotations: errors come first.)
    lines = result["output"].splitlines()
    assert lines[1] == 'src/app.py:2: error [basedpyright] "nme" is not defined', lines
    [asked] = [
        e["message"]["id"]
        for e in wire
        if e["from"] == "server" and e["message"].get("method") == "agent/diagnostics"
    ]
    [answer] = answers(wire, asked)
    [item] = answer["result"]["items"]
    [typo] = [d for d in item["diagnostics"] if d["severity"] == 1]
    column = "    return 'héllo ' + ".__len__()  # Emacs characters: utf-32, as negotiated
    assert typo == {
        "range": {
            "start": {"line": 1, "character": column},
            "end": {"line": 1, "character": column + 3},
        },
        "severity": 1,
        "message": '"nme" is not defined',
        "source": "basedpyright",
        "code": "reportUndefinedVariable",
    }
