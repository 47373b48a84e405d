"""``lsp.rehearsal``: a first run rehearsed on a private server, so that the first real run
of the process does no first-time work — and reaches nothing of the user's meanwhile.

Each check runs in a fresh interpreter (``probe``), where no run has been made yet: there
the first real run, on a new server as an editor's would be, is watched for Tether's
functions running for the first time in the process (each one a path not yet taken), code
generated (cattrs' converter functions are ``compile``d), modules imported and threads
started.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.lsp.rehearsal import (
    DEFAULT_CAPABILITIES,
    environment,
    rehearsal_capabilities,
    rehearse,
    rehearsed,
)

from . import rehearsal_probes as probes

PROBE = """
executor_started = []  # an asyncio.Event of the probe's loop
def executor(name):
    if name == "asyncio_0" and executor_started:
        executor_started[0].set()  # started on the loop's thread
on_start.append(executor)

from tether.cli import build_tools
from tether.lsp import rehearsal
from tether.lsp.handlers import create_server
from tether.lsp.server import warm_run
from tether.providers import prime

prime(provider)  # what the warm-up does before it rehearses (nothing for the scripted one)
warm_run()
rehearsed = []
if mode != "none":  # twice: once per process
    rehearsed = [rehearsal.rehearse(build_tools, provider=provider) for _ in range(2)]
    # What a server forked from a daemon that rehearsed does at its start: nothing new.
    watching[0] = True
    warm_run()
    watching[0] = False
    seen["warm_run compiled"], seen["compiled"] = seen["compiled"], 0

async def first_run(fake):
    # A new server, as an editor's: initialize, initialized, then the run is watched.
    folder = Path(tempfile.mkdtemp())
    root = folder / "workspace"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(rehearsal.SOURCE)
    keys = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    server = create_server(build_tools(), {**rehearsal.environment(folder), **keys})
    editor = rehearsal.RehearsalEditor(server.protocol, root)
    options = {"provider": "scripted", "script": SCRIPT}
    if fake is not None:
        url = fake.url + ("/v1" if provider == "openai" else "")
        options = {"provider": provider, "baseUrl": url}
    await editor.request("initialize", {
        "processId": None, "rootUri": root.as_uri(),
        "capabilities": rehearsal.DEFAULT_CAPABILITIES,
        "initializationOptions": options,
    })
    executor_started.append(asyncio.Event())
    editor.notify("initialized", {})
    # Its handler starts the run's worker threads, the loop's executor last (an editor's
    # first prompt comes after it).
    await asyncio.wait_for(executor_started[0].wait(), 30)
    watching[0] = True
    result = await editor.request("agent/run", {"prompt": "go"})
    watching[0] = False
    await server.close()
    return result["outcome"], (root / "src" / "app.py").read_text()

if mode != "isolation":
    seen["outcome"], seen["text"] = first_time(first_run)
seen["rehearsed"] = rehearsed
Path(out).write_text(json.dumps(seen))
"""


def probe(
    tmp_path: Path, mode: str, provider: str = "scripted", env: dict[str, str] | None = None
) -> dict[str, Any]:
    return probes.probe(tmp_path, PROBE, mode, provider, env)


@pytest.mark.parametrize("provider", ["scripted", "anthropic", "openai"])
def test_after_the_rehearsal_a_first_run_generates_imports_and_starts_nothing(
    tmp_path: Path, provider: str
) -> None:
    """An SDK provider's run is rehearsed through its SDK (answered by the rehearsal's
    socket); the first real run then talks to a real local API."""
    found = probe(tmp_path, "rehearse", provider)
    assert found["rehearsed"] == [True, False]  # once per process
    assert found["outcome"] == "done" and "'hi '" in found["text"]
    assert found["first calls"] == []
    assert found["compiled"] == 0
    assert found["imported"] == []
    assert found["threads"] == []
    # Nor does a warm-up after it (a daemon's forks): the converter's cache stayed whole.
    assert found["warm_run compiled"] == 0


def test_without_it_the_first_run_does_that_work(tmp_path: Path) -> None:
    """The other side of the check above: what the rehearsal takes off the first run."""
    found = probe(tmp_path, "none")
    assert found["outcome"] == "done"
    assert found["compiled"] > 0
    assert len(found["first calls"]) > 100  # 346 here with anthropic, on 2026-12-05
    assert "/lsp/handlers.py:run_agent" in found["first calls"]


def test_the_rehearsal_reads_no_settings_of_the_users_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    probes.check_isolated(tmp_path, PROBE)


def test_the_rehearsal_environment_holds_its_own_folders_only(tmp_path: Path) -> None:
    assert environment(tmp_path) == {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TETHER_STATE_DIR": str(tmp_path / "state"),
    }


def test_the_editors_capabilities_are_rehearsed_without_its_diagnostics() -> None:
    editor = {"experimental": {"tether": {"events": True, "diagnostics": True}}}
    assert rehearsal_capabilities(editor) == {
        "experimental": {"tether": {"events": True, "diagnostics": False}}
    }
    assert editor["experimental"]["tether"]["diagnostics"] is True  # a copy was changed
    assert rehearsal_capabilities(None)["experimental"]["tether"]["diagnostics"] is False
    assert DEFAULT_CAPABILITIES["experimental"]["tether"].get("diagnostics") is None


def test_no_rehearsal_once_a_run_was_asked() -> None:
    assert rehearse(lambda: pytest.fail("no server is made"), None, lambda: False) is False
    assert not rehearsed()  # a later call, wanted, would still rehearse


EXITING = """
import atexit, logging, sys, threading
from pathlib import Path

out = Path(sys.argv[1])
ended = []
warm = []

def report():  # runs last (atexit: first registered), after the rehearsal's own hook
    warm[0].join(10)  # a rehearsal cancelled ends at once; one cut off never returns
    out.write_text(repr(ended))

atexit.register(report)
logging.basicConfig(level="WARNING", stream=sys.stderr)  # tether serve's

from tether.cli import build_tools
from tether.lsp import rehearsal
from tether.run import rehearsal as shared

shared.SCRIPT = {**shared.SCRIPT, "delaySeconds": 60}  # a model that takes its time
started = threading.Event()
notify = rehearsal.RehearsalEditor.notify
def noting(self, method, params):
    notify(self, method, params)
    started.set()  # initialized sent: the run comes next
rehearsal.RehearsalEditor.notify = noting

def warm_up():
    ended.append(rehearsal.rehearse(build_tools))
warm.append(threading.Thread(target=warm_up, daemon=True))  # as tether serve's warm-up
warm[0].start()
assert started.wait(60)
sys.exit(0)  # the editor went away: the server exits with the rehearsal under way
"""


def test_a_rehearsal_under_way_at_exit_is_cancelled_and_leaves_nothing(tmp_path: Path) -> None:
    """``tether serve`` exits (its input ended) while the rehearsal's model is still
    answering: the rehearsal is cancelled and ends (it does not hold the exit up for its
    60 s), says nothing in the server's log, and its folder is gone."""
    temp, out = tmp_path / "tmp", tmp_path / "ended.txt"
    temp.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", EXITING, str(out)],
        env={**os.environ, "TMPDIR": str(temp)},
        capture_output=True,
        text=True,
        timeout=30,
        cwd=probes.REPO,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "[False]"  # rehearse() returned: cancelled, not cut off
    assert done.stderr == ""
    assert list(temp.iterdir()) == []


FAILING_EDITOR = """
import logging, sys
logging.basicConfig(level="WARNING", stream=sys.stderr)  # tether serve's
from tether.cli import build_tools
from tether.lsp import rehearsal

def apply(self, edit):
    raise RuntimeError("the folder went away")
rehearsal.RehearsalEditor._apply = apply
print(rehearsal.rehearse(build_tools))
"""


def test_a_rehearsal_whose_editor_fails_ends_quietly(tmp_path: Path) -> None:
    """What goes wrong in the rehearsal's editor ends the rehearsal, never reaches the
    server's writer (pygls would log it with a traceback) and leaves the log empty."""
    done = subprocess.run(
        [sys.executable, "-c", FAILING_EDITOR],
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=probes.REPO,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "False\n", "")
    assert list(tmp_path.iterdir()) == []
