"""Shared test helpers.

The shared warm server (``tether daemon``) is on by default for ``tether run``: every test
and every process it starts runs with it off (``TETHER_DAEMON=0``), so the suite leaves no
daemon behind in the user's runtime folder. ``tests/e2e/test_daemon.py`` turns it on in a
runtime folder of its own and stops what it started.

A helper that builds an environment without the tester's ``TETHER_*`` variables drops that
switch too, so the session's end checks instead of trusting every helper: a ``tether daemon
serve`` still running that this suite started is stopped and fails the session, naming it.
A daemon's environment is its own (allow-listed: not its starter's), so it is known by where
it listens: the suite sets ``XDG_RUNTIME_DIR`` to a folder of its own (which also keeps its
daemons out of the tester's), and a daemon with this suite's mark in its environment counts
too. Under pytest-xdist the workers inherit both, and only the controller checks, once every
worker is done (a worker that finished early must not stop another's daemon mid-test).

Markers (registered in pyproject.toml): every test under ``tests/editors/`` is ``editors``
(a real Neovim or Emacs); ``slow`` is every test under ``tests/e2e/`` (a real server or CLI
process each: three quarters of the suite's CPU) and the few others marked by hand (the
benchmark smoke run, two long property runs). ``./dev test -m "not editors and not slow"``
is the fast set: a minute and a half on two cores.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import forkserver
from tests.processes import daemons_listening_in, live_daemons

os.environ["TETHER_DAEMON"] = "0"
SUITE_MARK = "TESTS_SUITE_MARK"
os.environ.setdefault(SUITE_MARK, uuid.uuid4().hex)
RUNTIME = Path(tempfile.gettempdir()) / f"tether-tests-{os.environ[SUITE_MARK][:12]}"
"""The suite's runtime folder: where a daemon a test starts listens (short: a socket path)."""
RUNTIME.mkdir(mode=0o700, exist_ok=True)
os.environ["XDG_RUNTIME_DIR"] = str(RUNTIME)

# pytest-xdist's workers start with COLUMNS=80 and LINES=24 in their environment: a CLI a
# test starts on a 100-column pseudo-terminal inherited them and wrapped its cards at 80.
# The controller (which imports this first) notes which of the two it had; a worker drops
# the others.
TERMINAL_SIZE = ("COLUMNS", "LINES")
SIZE_SET = "TESTS_TERMINAL_SIZE_SET"
if "PYTEST_XDIST_WORKER" in os.environ:
    for name in set(TERMINAL_SIZE) - set(os.environ.get(SIZE_SET, "").split(",")):
        os.environ.pop(name, None)
else:
    os.environ[SIZE_SET] = ",".join(name for name in TERMINAL_SIZE if name in os.environ)


def daemons_of_this_suite() -> list[int]:
    """Live ``tether daemon serve`` processes started under this suite (listening in its
    runtime folder, or with its mark)."""
    marked = {pid for pid, _ in live_daemons(f"{SUITE_MARK}={os.environ[SUITE_MARK]}".encode())}
    return sorted(marked | set(daemons_listening_in(RUNTIME)))


TESTS = Path(__file__).parent
MARKED_FOLDERS = {TESTS / "editors": pytest.mark.editors, TESTS / "e2e": pytest.mark.slow}


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for folder, mark in MARKED_FOLDERS.items():
            if item.path.is_relative_to(folder):
                item.add_marker(mark)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput"):  # an xdist worker: the controller checks
        return
    left = daemons_of_this_suite()
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    shutil.rmtree(RUNTIME, ignore_errors=True)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = f"tests left {len(left)} tether daemon(s) running (pids {left}); stopped them"
        if reporter is not None:
            reporter.write_line(message, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session", autouse=True)
def fork_server() -> Iterator[None]:
    """This worker's fork server (``forkserver.py``): the servers of the e2e and ACP tests
    (and of the others that use their helpers) are forked from it. Ended with the worker."""
    process = forkserver.start()
    try:
        yield
    finally:
        forkserver.stop(process)
