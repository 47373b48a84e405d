"""`tether run` with the sandbox on, in a pseudo-terminal through a real server, on each
backend: a command run unasked inside the walls says so on its approval line, and one the
walls stopped is asked again under the server's title saying why."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.client.approver import ASKED
from tether.sandbox import Backend

from ..sandboxes import BACKENDS, require_backend
from .test_cli_terminal import Terminal, assert_nothing_left, scripted

SGR = re.compile(r"\x1b\[[0-9;]*m")


def bash(command: str) -> dict[str, object]:
    return {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    require_backend(request.param)
    chosen: Backend = request.param
    return chosen


@pytest.fixture
def outside() -> Iterator[Path]:
    """A path in a folder the sandbox shows read-only (removed if a broken wall let it be)."""
    path = Path("/var/tmp") / f"tether-cli-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


def test_a_sandboxed_run_says_so_and_a_stopped_command_is_asked_with_why(
    tmp_path: Path, backend: Backend, outside: Path
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    script = {"turns": [bash("echo made > made.txt"), bash(f"echo x > {outside}"), {"text": "ok"}]}
    env = scripted(tmp_path, script) | {"TETHER_SANDBOX": backend, "TERM": "xterm-256color"}
    term = Terminal(["run", "go"], env, root)
    term.expect(ASKED.strip())  # only the command the walls stopped is asked
    term.send("n")
    term.expect("why? (Enter skips)")
    term.send("\r")
    status = term.wait(timeout=60)
    shown = SGR.sub("", term.text).replace("\r\n", "\n")
    assert status == 0, shown
    assert f"approval: auto (in the {backend} sandbox)\n" in shown, shown
    # Tried in the sandbox first; then the question: the server's title saying why the
    # walls stopped it, the command, then the choices.
    asked = shown.split(f'→ bash {{"command": "echo x > {outside}"}}', 1)[1]
    lines = asked.split("\n")
    at = next(n for n, line in enumerate(lines) if line.startswith("Run echo x"))
    assert lines[at - 2] == f"  approval: auto (in the {backend} sandbox)", asked
    title, command, folder, prompt = lines[at : at + 4]
    assert title.startswith(f"Run echo x > {outside} — outside the sandbox: in it, "), asked
    assert command == f"  $ echo x > {outside}" and folder == f"  (in {root})", asked
    assert prompt.startswith("[y] allow") and prompt.endswith(ASKED + "n"), asked
    assert "approval: deny" in asked and "was not allowed" in asked, asked
    assert (root / "made.txt").read_text() == "made\n" and not outside.exists()
    assert_nothing_left(env)
