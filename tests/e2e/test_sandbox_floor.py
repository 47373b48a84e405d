"""The floor holds inside the sandbox, end to end through a real ``tether serve`` (issue 44,
"the floor is absolute"), on each backend: the user's own config file says
``allowBroadWorkspace = true`` and picks the sandbox, the workspace is the home folder, and
the model's commands that write ``~/.bashrc``, ``~/.local/bin/ls`` and Tether's own config
file run unasked inside the sandbox, are stopped by its walls, and are asked again outside
(saying why); denied, they change nothing. A command writing an ordinary file of the
workspace runs unasked in the sandbox and writes it.

Before, the walls kept only the project's own sensitive names read-only: the three
commands ran unasked and wrote the user's start-up file, a program on their PATH and the
config that decides what runs unasked.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.sandbox import Backend

from ..sandboxes import BACKENDS, require_backend
from .calls import bash, one_call_a_turn
from .conftest import serving

CONFIG = 'allowBroadWorkspace = true\nsandbox = "{backend}"\n'
COMMANDS = [
    "echo 'echo evil' >> .bashrc",
    "mkdir -p .local/bin && printf '#!/bin/sh\\necho evil\\n' > .local/bin/ls"
    " && chmod +x .local/bin/ls",
    "echo 'autoApprove = [\"bash\"]' >> .config/tether/config.toml",
    "echo more >> proj/notes.txt",
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    require_backend(request.param)
    chosen: Backend = request.param
    return chosen


@pytest.fixture
def home() -> Iterator[Path]:
    """A home folder outside ``/tmp`` (private in the sandbox)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="tether-e2e-floor-") as made:
        yield Path(made)


async def test_a_broad_workspaces_commands_write_none_of_the_users_places(
    tmp_path: Path, home: Path, backend: Backend
) -> None:
    config = home / ".config" / "tether" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CONFIG.format(backend=backend))
    (home / ".bashrc").write_text("# mine\n")
    (home / ".local").mkdir()
    (home / "proj").mkdir()
    (home / "proj" / "notes.txt").write_text("notes\n")
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    async with serving(tmp_path / "state", env=env) as editor:
        editor.approve = lambda params: {"decision": "deny"}
        await editor.open_session(home, script=one_call_a_turn(*map(bash, COMMANDS)))
        result = await editor.run(prompt="go", runId="r1")
    assert result["outcome"] == "done"
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert not (home / ".local" / "bin").exists()
    assert config.read_text() == CONFIG.format(backend=backend)
    assert (home / "proj" / "notes.txt").read_text() == "notes\nmore\n"
    # The three were stopped by the walls and asked again outside, saying why; the fourth
    # ran in the sandbox, unasked.
    asked = [a["title"] for a in editor.approvals]
    assert len(asked) == 3, asked
    assert all(t.startswith(f"Run {c[:40]}") for t, c in zip(asked, COMMANDS, strict=False))
    assert all(" — outside the sandbox: in it, it needs " in t for t in asked), asked
    decisions = [(e.decision, e.sandbox) for e in editor.approval_events("r1")]
    assert decisions.count(("auto", backend)) == 4
    assert decisions.count(("deny", None)) == 3
    last = editor.tool_results("r1")[-1]
    assert last.ok and f"in the {backend} sandbox" in last.output
