"""A real ``emacs -nw`` in tmux, driven by keys as a user types them, read from its screen.

tmux runs on a private socket in the test's folder, so it never meets the user's own tmux
server; ``close`` kills that server (and Emacs with it). Waiting means polling the screen
for what the user would wait to see, with a deadline, never a fixed sleep. Keys typed before
Emacs has set up its terminal are lost, so a story says when it is ready (``window-setup-hook``).
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import wait_until_sync

from .emacs_harness import NO_NATIVE_COMPILATION, require_emacs

WIDTH, HEIGHT = 100, 40


def require_tmux() -> str:
    """The ``tmux`` binary (Debian's ``tmux``, installed with Emacs when missing)."""
    require_emacs()
    found = shutil.which("tmux")
    if found is None:
        pytest.fail("tmux is missing: `sudo apt-get install tmux` to run this test", pytrace=False)
    return found


class EmacsInTmux:
    """``emacs -nw -Q -l story`` in a detached tmux session of WIDTH × HEIGHT; with
    ``command``, that command line instead (e.g. ``emacs -nw FILE``: the user's own init
    file), started in ``cwd``."""

    def __init__(
        self,
        folder: Path,
        story: Path | None,
        env: dict[str, str],
        *,
        command: str | None = None,
        cwd: Path | None = None,
    ) -> None:
        # Its own configuration: none of the user's, and a terminal type Emacs sets up
        # without querying it (keys typed during xterm's queries can be lost).
        config = folder / "tmux.conf"
        config.write_text('set -g default-terminal "screen-256color"\n')
        self._tmux = [require_tmux(), "-f", str(config), "-S", str(folder / "tmux.sock")]
        emacs = require_emacs()
        self._run(
            "new-session", "-d", "-x", str(WIDTH), "-y", str(HEIGHT), "-s", "user",
            *(["-c", str(cwd)] if cwd else []),
            command or shlex.join([emacs, "-nw", "-Q", *NO_NATIVE_COMPILATION, "-l", str(story)]),
            env=env,
        )  # fmt: skip

    def _run(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            [*self._tmux, *args], env=env, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, f"tmux {args[0]}: {done.stderr}"
        return done.stdout

    def keys(self, *keys: str) -> None:
        """Press keys by tmux name (``C-x``, ``M-x``, ``Enter``, ``a``)."""
        self._run("send-keys", "-t", "user", *keys)

    def type(self, text: str) -> None:
        """Type ``text`` literally."""
        self._run("send-keys", "-t", "user", "-l", text)

    def command(self, name: str) -> None:
        """``M-x name RET``, waiting for the prompt as a user looks at it."""
        self.keys("M-x")
        self.wait_for("M-x")
        self.type(name)
        self.keys("Enter")

    def screen(self) -> str:
        """What the terminal shows now."""
        return self._run("capture-pane", "-p", "-t", "user")

    def wait_until(self, ready: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        """The screen once ``ready(screen)``; fails with the last screen after ``timeout``."""
        seen = [""]

        def shown() -> str | None:
            seen[0] = self.screen()
            return seen[0] if ready(seen[0]) else None

        try:
            return wait_until_sync(shown, f"{what} on the screen", timeout)
        except AssertionError as failed:
            raise AssertionError(f"{failed}; the screen:\n{seen[0]}") from None

    def wait_for(self, text: str, timeout: float = 30) -> str:
        """The screen once it shows ``text``."""
        return self.wait_until(lambda screen: text in screen, repr(text), timeout)

    def close(self) -> None:
        """Kill the tmux server and the Emacs in it."""
        subprocess.run([*self._tmux, "kill-server"], capture_output=True, timeout=30)


def wait_for_report(path: Path, runs: int, timeout: float = 60) -> dict[str, Any]:
    """The story's report once it counts ``runs`` finished runs."""

    def report() -> dict[str, Any] | None:
        if not path.exists():
            return None
        found: dict[str, Any] = json.loads(path.read_text())
        return found if found["runs"] >= runs else None

    return wait_until_sync(report, f"a report of {runs} finished runs", timeout)
