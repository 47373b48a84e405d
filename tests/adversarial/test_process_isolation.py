"""Nothing Tether starts runs the workspace's code.

A cloned repository plants a shadow of every module Tether's processes import (generated:
what a server, the ACP front, the terminal client and the providers' SDKs really import, plus
Tether's own packages, ``sitecustomize``/``usercustomize``, ``encodings`` and ``.pth``
lookalikes). Each shadow, if it is ever imported, writes a mark naming the process. Every
kind of process is started in that workspace as a person or an editor starts it — ``tether
serve`` and ``tether acp`` (the console script editors run, and ``python -m tether``),
``tether run`` with and without the daemon, the chat on a terminal, ``tether demo``, a
sandboxed command's trampoline — and each must work and leave no mark.

One spelling cannot be wholly defended: ``python -m tether`` without ``-I``. The interpreter
puts the current folder first on the import path and imports, from there, ``tether`` itself
and what ``-m`` needs to run it (``runpy``'s imports: ``importlib``, ``contextlib``,
``functools``…) before any of Tether's code; Tether's ``__main__`` then takes the folder off
the path, so every other shadow is refused. That launcher is tested without those few
(generated: what ``import runpy`` imports). Editors start the console script, which puts its
own folder, not the current one, on the import path; Tether's own processes run ``-I``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.acp.client import AcpAgent
from tests.acp.recorder import NOTHING
from tests.acp.terminal_ui import PtyScreen
from tests.e2e.raw_client import RawServer
from tests.e2e.test_cli_chat import CONTROLLING, _at_prompt, ask
from tests.processes import daemons_listening_in
from tests.sandboxes import require_backend
from tests.waiting import wait_until_sync

pytestmark = pytest.mark.slow  # a real server, client or daemon per test

CONSOLE_SCRIPT = Path(sys.executable).parent / "tether"
"""The ``tether`` an editor or a person runs: the installation's console script."""
LAUNCHERS = {
    "console-script": [str(CONSOLE_SCRIPT)],
    "python-I-m": [sys.executable, "-I", "-m", "tether"],
    "python-m": [sys.executable, "-m", "tether"],
}
RUNPY = """
import sys
first = {m.partition(".")[0] for m in sys.modules}
import runpy
print("\\n".join(sorted({m.partition(".")[0] for m in sys.modules} - first)))
"""
"""What ``python -m`` imports to run a module, before the module's own code."""

ALWAYS_PLANTED = (
    "pygls",
    "lsprotocol",
    "anyio",
    "pydantic",
    "pydantic_core",
    "tether",
    "tether_protocol",
    "sitecustomize",
    "usercustomize",
    "encodings",
    "mcp",
    "httpx",
    "openai",
    "anthropic",
    "prompt_toolkit",
    "rich",
    "json",
    "argparse",
    "asyncio",
    "subprocess",
    "socket",
    "selectors",
)
"""Named in the issue, or imported only on some paths (an MCP server, a provider)."""
PACKAGES = frozenset({"pydantic", "tether", "tether_protocol", "encodings", "anyio", "pygls"})
"""Planted as a package (``name/__init__.py``); every other name as ``name.py``."""


def imported_by(code: str) -> list[str]:
    """The top-level module names ``code`` prints, run in an isolated interpreter."""
    out = subprocess.run(
        [sys.executable, "-I", "-c", code],
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [line for line in out.stdout.split() if line.isidentifier()]


IMPORTED = """
import sys
first = {m.partition(".")[0] for m in sys.modules}
from tether.cli import daemon, demo, run, serve, sessions
daemon.preload()
import tether.acp.server, tether.client.chat, tether.client.headless, tether.demo
from tether.providers import prime
prime("openai"); prime("anthropic")
later = {m.partition(".")[0] for m in sys.modules} - first
print("\\n".join(sorted(later)))
"""
"""The top-level modules a server, the ACP front, the terminal client and both SDKs import
after the interpreter's start (what a shadow in the current folder could replace)."""


@pytest.fixture(scope="module")
def planted_names() -> list[str]:
    """Every name a shadow is planted for: generated from a real import, and the fixed ones."""
    generated = imported_by(IMPORTED)
    assert len(generated) > 30 and "pygls" in generated, generated  # the import is real
    return sorted({*generated, *ALWAYS_PLANTED} - {"__main__"})


@pytest.fixture(scope="module")
def before_tether_under_m() -> frozenset[str]:
    """The shadows ``python -m tether`` imports before Tether's code runs (module text)."""
    names = frozenset({"tether", *imported_by(RUNPY)})
    assert "importlib" in names, names
    return names


def mark_code(name: str, marks: Path) -> str:
    """Python that leaves a mark for ``name`` in ``marks``: the importing process's argv."""
    return (
        "import os as _o, sys as _s\n"
        f"_f = _o.path.join({str(marks)!r}, {name!r} + '-' + str(_o.getpid()))\n"
        "with open(_f, 'w') as _h:\n"
        "    _h.write(repr(getattr(_s, 'orig_argv', _s.argv)))\n"
    )


def plant(folder: Path, marks: Path, names: list[str]) -> None:
    """A shadow for each of ``names`` in ``folder``, ``.pth`` lookalikes and an ``rg``."""
    for name in names:
        if name in PACKAGES:
            (folder / name).mkdir(exist_ok=True)
            (folder / name / "__init__.py").write_text(mark_code(name, marks))
        else:
            (folder / f"{name}.py").write_text(mark_code(name, marks))
    for lookalike in ("zzz.pth", "tether.pth", "distutils-precedence.pth"):
        (folder / lookalike).write_text(f"import sys; exec({mark_code(lookalike, marks)!r})\n")
    (folder / "site-packages").mkdir(exist_ok=True)
    (folder / "site-packages" / "evil.pth").write_text(
        f"import sys; exec({mark_code('site-packages-pth', marks)!r})\n"
    )
    # A program Tether looks up itself, where a relative PATH entry would find it.
    (folder / "node_modules" / ".bin").mkdir(parents=True, exist_ok=True)
    rg = folder / "node_modules" / ".bin" / "rg"
    rg.write_text(f'#!/bin/sh\necho "rg $*" > {marks}/rg-$$\nexit 2\n')
    rg.chmod(0o755)
    (folder / "notes.txt").write_text("the needle is here\n")


def marks_left(marks: Path) -> dict[str, str]:
    """The marks written: shadow-pid → the argv of the process that imported it."""
    return {p.name: p.read_text() for p in sorted(marks.iterdir())}


class Clone:
    """A hostile clone with every shadow planted, a home, and the user's environment."""

    def __init__(self, base: Path, names: list[str]) -> None:
        self.base = base
        self.root = base / "clone"
        self.marks = base / "marks"
        self.home = base / "home"
        for folder in (self.root, self.marks, self.home):
            folder.mkdir()
        plant(self.root, self.marks, names)
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("TETHER_", "XDG_", "PYTHON"))
            and k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
        }
        self.env |= {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "TETHER_STATE_DIR": str(base / "state"),
            "TETHER_DAEMON": "0",
            "TETHER_PROVIDER": "scripted",
            "TETHER_SCRIPT": json.dumps(READING),
            # A relative entry first, as some users keep ./node_modules/.bin on their PATH.
            "PATH": os.pathsep.join(["node_modules/.bin", os.environ["PATH"]]),
        }

    def assert_no_mark(self) -> None:
        left = marks_left(self.marks)
        assert left == {}, f"the workspace's code ran in: {left}"


READING = {
    "turns": [
        {"toolCalls": [{"name": "search", "arguments": {"pattern": "needle"}}]},
        {"toolCalls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"toolCalls": [{"name": "list_files", "arguments": {}}]},
        {"text": "all read"},
    ]
}
"""A run that uses the tools a run imports lazily (search, its engine, reads, listings)."""


@pytest.fixture
def clone(tmp_path: Path, planted_names: list[str]) -> Clone:
    return Clone(tmp_path, planted_names)


Launched = Callable[[str], list[str]]


@pytest.fixture
def launched(clone: Clone, before_tether_under_m: frozenset[str]) -> Launched:
    """The command line of a launcher; for ``python -m``, the shadows it imports before
    Tether's code runs are taken out of the clone first (see the module's text)."""

    def launcher(name: str) -> list[str]:
        if name == "python-m":
            for shadow in before_tether_under_m:
                (clone.root / shadow / "__init__.py").unlink(missing_ok=True)
                (clone.root / f"{shadow}.py").unlink(missing_ok=True)
        return LAUNCHERS[name]

    return launcher


def cli(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_tether_serve_started_in_the_clone_runs_none_of_its_code(
    clone: Clone, launched: Launched, launcher: str
) -> None:
    # RawServer starts the server in the folder it is given, as an editor does.
    server = RawServer(clone.root, clone.env, [*launched(launcher), "serve"], name=".editor")
    try:
        server.initialize(clone.root, {"script": READING})
        server.request("run", "agent/run", {"prompt": "read the notes"})
        answer = server.answer("run", timeout=60)
        assert answer.get("result", {}).get("outcome") == "done", (answer, server.stderr())
        assert server.close() == 0, server.stderr()
    finally:
        server.kill()
    clone.assert_no_mark()


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
async def test_tether_acp_started_in_the_clone_runs_none_of_its_code(
    clone: Clone, launched: Launched, launcher: str
) -> None:
    argv = [*launched(launcher), "acp"]
    async with AcpAgent.spawn(argv, cwd=clone.root, env=clone.env, capabilities=NOTHING) as agent:
        await agent.initialize()
        session = await agent.new_session(clone.root)
        answer = await agent.prompt(session, "read the notes", within=60)
        assert answer["stopReason"] == "end_turn", answer
        assert "all read" in agent.text(session)
    clone.assert_no_mark()


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_tether_run_in_the_clone_runs_none_of_its_code(
    clone: Clone, launched: Launched, launcher: str
) -> None:
    out = cli([*launched(launcher), "run", "--yes", "read the notes"], clone.root, clone.env)
    assert out.returncode == 0 and "all read" in out.stdout, out.stderr
    clone.assert_no_mark()


def test_tether_run_through_the_daemon_in_the_clone_runs_none_of_its_code(clone: Clone) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="tpi-", dir="/tmp"))  # short: a socket's path
    runtime.chmod(0o700)
    env = clone.env | {"TETHER_DAEMON": "1", "XDG_RUNTIME_DIR": str(runtime)}
    tether = [str(CONSOLE_SCRIPT)]
    try:
        first = cli([*tether, "run", "--yes", "read the notes"], clone.root, env)
        assert first.returncode == 0 and "all read" in first.stdout, first.stderr
        # The first run found no daemon: it ran in-process and left one starting, from here.
        started = cli([*tether, "daemon", "start"], clone.root, env)
        assert started.returncode == 0, started.stderr
        second = cli([*tether, "run", "--yes", "read the notes"], clone.root, env)
        assert second.returncode == 0 and "all read" in second.stdout, second.stderr
        status = cli([*tether, "daemon", "status"], clone.root, env)
        assert "1 served" in status.stdout, (status.stdout, second.stderr)
    finally:
        stop_daemons_in(runtime)
    clone.assert_no_mark()


def stop_daemons_in(runtime: Path) -> None:
    """End the daemons listening in ``runtime`` (and wait until they are gone)."""
    for pid in daemons_listening_in(runtime):
        os.kill(pid, signal.SIGTERM)
    wait_until_sync(lambda: not daemons_listening_in(runtime), "the daemons to exit", 30)
    shutil.rmtree(runtime, ignore_errors=True)


async def test_the_chat_in_the_clone_runs_none_of_its_code(clone: Clone) -> None:
    env = clone.env | {"PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1"}
    # `tether` alone on a terminal (the helper that makes the terminal its own runs -I).
    program = [sys.executable, "-I", "-c", CONTROLLING, str(CONSOLE_SCRIPT)]
    async with PtyScreen.spawn(program, env=env, cwd=clone.root, columns=100) as ui:
        await ask(ui, "read the notes")
        await ui.wait_for("all read")
        await ui.wait_until(lambda: _at_prompt(ui), "the prompt")
        ui.press("ctrl-d")
        assert await ui.wait_for_exit() == 0, ui.text()
    clone.assert_no_mark()


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_tether_demo_started_in_the_clone_runs_none_of_its_code(
    clone: Clone, launched: Launched, launcher: str
) -> None:
    out = cli([*launched(launcher), "demo"], clone.root, clone.env)
    assert out.returncode == 0, out.stdout + out.stderr
    clone.assert_no_mark()


@pytest.mark.parametrize("sandbox", ["off", "landlock"])
def test_a_command_in_the_clone_runs_through_a_trampoline_that_runs_none_of_its_code(
    clone: Clone, sandbox: str
) -> None:
    if sandbox != "off":
        require_backend("landlock")
    script = {
        "turns": [
            {"toolCalls": [{"name": "bash", "arguments": {"command": "cat notes.txt"}}]},
            {"text": "all read"},
        ]
    }
    env = clone.env | {"TETHER_SANDBOX": sandbox, "TETHER_SCRIPT": json.dumps(script)}
    out = cli([str(CONSOLE_SCRIPT), "run", "--yes", "show the notes"], clone.root, env)
    assert out.returncode == 0 and "the needle is here" in out.stdout, out.stdout + out.stderr
    clone.assert_no_mark()


def test_a_relative_state_folder_names_the_same_folder_for_the_run_and_its_server(
    tmp_path: Path,
) -> None:
    """The server starts in the neutral folder: a relative ``TETHER_STATE_DIR`` still names
    the folder under the one the run was started in, where ``tether sessions`` looks."""
    clone = Clone(tmp_path, [])
    root, env = clone.root, clone.env | {"TETHER_STATE_DIR": "kept-here"}
    out = cli([str(CONSOLE_SCRIPT), "run", "--yes", "read the notes"], root, env)
    assert out.returncode == 0, out.stderr
    assert list((root / "kept-here" / "sessions").glob("*.jsonl")), out.stderr
    listed = cli([str(CONSOLE_SCRIPT), "sessions"], root, env)
    assert listed.returncode == 0 and "read the notes" in listed.stdout, listed
