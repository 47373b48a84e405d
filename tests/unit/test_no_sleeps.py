"""No test sleeps to synchronise: a sleep in tests/ needs an entry saying why.

A fixed sleep hoping that something happened meanwhile makes a test slow on an idle machine
and wrong on a loaded one; tests wait for the event itself (``tests/waiting.py``). Sleeps
that *model* behaviour (a fake API's latency, a tool that runs long) are legitimate, and
each is listed here with its reason, so a new one is a conscious decision.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

# (file under tests/, how many sleep calls it holds, why they are not synchronisation)
ALLOWED: list[tuple[str, int, str]] = [
    ("waiting.py", 2, "the bounded poll itself: it sleeps between looks at the condition"),
    ("providers/fakes.py", 1, "models the fake API's latency between streamed frames"),
    ("unit/test_loop.py", 1, "models a tool that runs long, so that a timeout cuts it"),
    ("mcp/notes_server.py", 1, "models an MCP tool that hangs (a timeout or cancel cuts it)"),
    (
        "adversarial/test_config_e2e.py",
        1,
        "models a person reading a command for a second before answering: a project's short "
        "approval timeout must not deny it",
    ),
    (
        "unit/test_runs.py",
        1,
        "models a slow disk under the session log writer: the answer must wait for the log",
    ),
    (
        "e2e/test_model_connections.py",
        1,
        "models a person's pause between two prompts: the connection is kept through it",
    ),
    (
        "unit/test_transport.py",
        2,
        "models the event loop: sleep(0) ends its turn; a blocking sleep keeps it busy",
    ),
]


def sleep_calls(source: str) -> list[int]:
    """The line numbers of sleep calls: ``x.sleep(...)`` (time, asyncio, anyio, trio) or a
    bare ``sleep(...)`` imported by name."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr == "sleep") or (
                isinstance(func, ast.Name) and func.id == "sleep"
            ):
                lines.append(node.lineno)
    return sorted(lines)


def sleeps_in_tests() -> dict[str, list[int]]:
    """Every Python file under tests/ that calls sleep, with the lines."""
    found = {}
    for path in sorted(TESTS.rglob("*.py")):
        if "node_modules" in path.parts:
            continue
        calls = sleep_calls(path.read_text(encoding="utf-8"))
        if calls:
            found[path.relative_to(TESTS).as_posix()] = calls
    return found


def test_the_detector_sees_every_spelling_of_a_sleep() -> None:
    source = (
        "import time, asyncio, anyio\nfrom time import sleep\n"
        "time.sleep(1)\nawait_me = asyncio.sleep(0.2)\nanyio.sleep(0)\nsleep(3)\n"
        "'time.sleep(1) in a string'\n# time.sleep(1) in a comment\n"
    )
    assert sleep_calls(source) == [3, 4, 5, 6]


def test_no_sleep_in_tests_outside_the_allow_list() -> None:
    found = sleeps_in_tests()
    assert "waiting.py" in found  # the scan really reads tests/
    allowed = {path: count for path, count, _reason in ALLOWED}
    unexpected = {path: lines for path, lines in found.items() if len(lines) > allowed.get(path, 0)}
    assert unexpected == {}, (
        "sleep used in tests (wait for the condition with tests/waiting.py instead, or, if it "
        f"models behaviour, add an entry with its reason to ALLOWED): {unexpected}"
    )


def test_the_allow_list_has_no_stale_entries() -> None:
    found = sleeps_in_tests()
    stale = [
        (path, count, len(found.get(path, [])))
        for path, count, _reason in ALLOWED
        if len(found.get(path, [])) != count
    ]
    assert stale == [], f"allow-list entries (file, allowed, found) to update: {stale}"
