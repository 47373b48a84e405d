"""Running editors/emacs/tether.el in a real Emacs against the real ``tether serve``.

Emacs comes from Debian (``emacs-nox``); when it is missing and apt can install it (root,
a Debian-like system) the tests install it, as CI does on a fresh machine (about 20 s).
Otherwise they fail saying how to install it: they are never skipped. A story
(``emacs/*.el``) runs in ``emacs --batch`` (what the user types comes on stdin) or, to have
a real minibuffer, in ``emacs -nw`` on a pseudo-terminal; it writes a JSON report. With
``proxied_story`` the server runs behind ``lsp_proxy.py``, which records the wire.
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

from ..apt import apt_install

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "editors" / "emacs"
STORIES = Path(__file__).parent / "emacs"
PROXY = Path(__file__).parent / "lsp_proxy.py"
PACKAGES = ["emacs-nox", "elpa-eglot", "elpa-markdown-mode", "tmux"]
NO_NATIVE_COMPILATION = ["--eval", "(setq native-comp-deferred-compilation nil)"]
"""Before a story: no native compilation of the libraries it loads into the test's
throw-away home (background compilers competing with the test for the CPU)."""
ELPA = Path("/usr/share/emacs/site-lisp/elpa")


def require_emacs() -> str:
    """The ``emacs`` binary, installed with apt when missing and possible."""
    if emacs_missing():  # one worker installs at a time (tests/apt.py)
        apt_install(PACKAGES, emacs_missing)
    found = shutil.which("emacs")
    if found is None or not eglot_dirs():
        pytest.fail(
            "Emacs or Eglot is missing and could not be installed here: install Debian's "
            "emacs-nox, elpa-eglot, elpa-markdown-mode and tmux (`sudo apt-get install "
            "emacs-nox elpa-eglot elpa-markdown-mode tmux`, Emacs 28+, Eglot 1.9) to run the "
            "Emacs tests.",
            pytrace=False,
        )
    return found


def emacs_missing() -> bool:
    """Emacs, Eglot, markdown-mode or tmux is not installed."""
    return (
        shutil.which("emacs") is None
        or not eglot_dirs()
        or not markdown_dirs()
        or not shutil.which("tmux")
    )


def eglot_dirs() -> list[Path]:
    """Debian's elpa-eglot folders (``eglot-1.9``...)."""
    return sorted(ELPA.glob("eglot-*")) if ELPA.is_dir() else []


def markdown_dirs() -> list[Path]:
    """Debian's elpa-markdown-mode folders (``markdown-mode-2.5``...)."""
    return sorted(ELPA.glob("markdown-mode-*")) if ELPA.is_dir() else []


def emacs_batch(story: Path, env: dict[str, str], typed: str) -> None:
    """Run ``story`` in ``emacs --batch`` with ``typed`` as what the user types."""
    done = subprocess.run(
        [require_emacs(), "--batch", "-Q", *NO_NATIVE_COMPILATION, "-l", str(story)],
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
        [require_emacs(), "-nw", "-Q", *NO_NATIVE_COMPILATION, "-l", str(story)],
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
