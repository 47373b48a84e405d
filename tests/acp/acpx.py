"""acpx (npm ``acpx``, a command-line ACP client) for the tests: installed on first use into
a cache folder outside the repository and reused, as the VS Code suite's code-server is
(``editors/vscode/scripts/real-vscode.sh``); its ``--format json`` transcript checked
message by message against the ACP schema.

The cache is ``TETHER_ACPX_CACHE`` (default ``~/.cache/tether-acpx``), one version
(``ACPX_VERSION``) marked done once installed; xdist workers install one at a time (a lock
file), each looking again once it holds the lock. Without npm, or when the install fails,
the test fails saying how to install it.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .validation import AGENT_TO_CLIENT, CLIENT_TO_AGENT, Direction, SchemaChecker, Violation

ACPX_VERSION = "0.19.1"
INSTALL_SECONDS = 300
MARK = "TETHER_ACPX_TEST_MARK"
"""Set in every process a test starts, to find any left behind."""


def cache_folder() -> Path:
    return Path(os.environ.get("TETHER_ACPX_CACHE") or Path.home() / ".cache" / "tether-acpx")


def installed_acpx() -> Path:
    """The ``acpx`` command, installed with npm when it is not in the cache yet."""
    cache = cache_folder()
    binary = cache / "node_modules" / ".bin" / "acpx"
    done = cache / f".done-{ACPX_VERSION}"
    if binary.exists() and done.exists():
        return binary
    npm = shutil.which("npm")
    how = f"npm install --prefix {cache} acpx@{ACPX_VERSION}"
    assert npm is not None, f"acpx is not installed and there is no npm: {how}"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (binary.exists() and done.exists()):
            install = [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund"]
            out = subprocess.run(
                [*install, "--loglevel=error", f"acpx@{ACPX_VERSION}"],
                capture_output=True,
                text=True,
                timeout=INSTALL_SECONDS,
                check=False,
            )
            assert out.returncode == 0 and binary.exists(), f"{how} failed:\n{out.stderr}"
            done.touch()
    return binary


def marked_env(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with this test's mark (``left_behind`` finds its processes)."""
    return {**base, MARK: uuid.uuid4().hex}


def left_behind(env: Mapping[str, str]) -> list[int]:
    """Live processes started with ``env``'s mark, killed (so one failure leaks nothing)."""
    mark = f"{MARK}={env[MARK]}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if mark not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if state != "Z":
            found.append(int(entry.name))
    for pid in found:
        os.kill(pid, 9)
    return found


def run_acpx(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path, *, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    """``acpx ARGV`` to its end (no terminal: stdin is /dev/null)."""
    return subprocess.run(
        [str(installed_acpx()), *argv],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def transcript(stdout: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an ``acpx --format json`` run, in order."""
    messages = []
    for line in stdout.splitlines():
        if line.strip():
            message = json.loads(line)
            if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
                messages.append(message)
    return messages


def violations(messages: Sequence[dict[str, Any]]) -> list[Violation]:
    """Each message of a transcript checked against the schema, its direction read from its
    method (a request or notification) or from the pending request it answers."""
    checker = SchemaChecker()
    pending: dict[str, list[Direction]] = {}
    found: list[Violation] = []
    for message in messages:
        method = message.get("method")
        key = json.dumps(message.get("id"))
        direction: Direction
        if isinstance(method, str):
            direction = "to_agent" if method in CLIENT_TO_AGENT else "to_client"
            assert method in CLIENT_TO_AGENT or method in AGENT_TO_CLIENT, method
            if "id" in message:
                pending.setdefault(key, []).append(direction)
        else:
            asked = pending[key].pop()
            direction = "to_client" if asked == "to_agent" else "to_agent"
        found += checker.check(direction, message)
    return found + checker.unanswered_early()
