"""Shared test helpers.

The shared warm server (``tether daemon``) is on by default for ``tether run``: every test
and every process it starts runs with it off (``TETHER_DAEMON=0``), so the suite leaves no
daemon behind in the user's runtime folder. ``tests/e2e/test_daemon.py`` turns it on in a
runtime folder of its own and stops what it started.

A helper that builds an environment without the tester's ``TETHER_*`` variables drops that
switch too, so the session's end checks instead of trusting every helper: a ``tether daemon
serve`` still running with this suite's mark in its environment (a name outside
``TETHER_*``, which those helpers keep) is stopped and fails the session, naming it. Under
pytest-xdist the workers inherit the mark, and only the controller checks, once every
worker is done (a worker that finished early must not stop another's daemon mid-test).

Markers (registered in pyproject.toml): every test under ``tests/editors/`` is ``editors``
(a real Neovim or Emacs); ``slow`` marks the few tests that take minutes of CPU, so
``./dev test -m "not editors and not slow"`` is the fast set.
"""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from pathlib import Path

import pytest

from tests.processes import live_daemons

os.environ["TETHER_DAEMON"] = "0"
SUITE_MARK = "TESTS_SUITE_MARK"
os.environ.setdefault(SUITE_MARK, uuid.uuid4().hex)


def daemons_of_this_suite() -> list[int]:
    """Live ``tether daemon serve`` processes started under this suite (its mark)."""
    return [pid for pid, _ in live_daemons(f"{SUITE_MARK}={os.environ[SUITE_MARK]}".encode())]


EDITORS = Path(__file__).parent / "editors"


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(EDITORS):
            item.add_marker(pytest.mark.editors)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput"):  # an xdist worker: the controller checks
        return
    left = daemons_of_this_suite()
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = f"tests left {len(left)} tether daemon(s) running (pids {left}); stopped them"
        if reporter is not None:
            reporter.write_line(message, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
