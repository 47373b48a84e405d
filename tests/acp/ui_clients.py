"""Real ACP client UIs, driven in a pseudo-terminal (``terminal_ui.PtyScreen``).

**acpx** (npm ``acpx``, a command-line ACP client) takes any agent as a command line,
``acpx --agent '<command>' exec '<prompt>'``, and on a terminal asks each permission it
does not auto-approve as ``[permission] Allow <title> [<kind>]? (y/N)`` (the default
policy ``--approve-reads`` approves reads and asks for writes and commands). Its state
goes to ``~/.acpx``: give it its own ``HOME``.

**Toad** (PyPI ``batrachian-toad``, a Textual UI) takes a custom agent as
``toad acp '<command>' [PROJECT_DIR]`` (``toad/cli.py``: the command becomes an agent
entry ``run_command."*"``, as in the TOML files of its built-in agents under
``toad/data/agents/``). It needs Python ≥ 3.14, which this machine does not have.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .terminal_ui import PtyScreen

ACPX_PERMISSION = (
    r"\[permission\] Allow (?P<title>.+?) \[(?P<kind>\w+)\]\? \(y/N\)"
    r"|\[permission\] Allow (?P<write>write to [^?\[]+)\?[^\[]*?Allow write\? \(y/N\)"
)
"""The agent's ``session/request_permission``, and acpx's own question before it serves an
``fs/write_text_file`` (an agent that writes through the client is asked twice)."""


def acpx_command(
    acpx: Path | str,
    agent: Sequence[str],
    cwd: Path,
    prompt: str,
    *,
    permissions: str = "approve-reads",
) -> list[str]:
    """One ``acpx exec`` turn with ``agent`` as a raw ACP command."""
    return [str(acpx), "--agent", shlex.join(agent), "--cwd", str(cwd), f"--{permissions}"] + [
        "exec",
        prompt,
    ]


def toad_command(toad: Path | str, agent: Sequence[str], project: Path) -> list[str]:
    """Toad on ``agent`` as a custom ACP command."""
    return [str(toad), "acp", shlex.join(agent), str(project)]


@dataclass(frozen=True)
class UiTurn:
    """What a person saw: the permission asked, the key pressed, the final screen."""

    asked: list[str]
    screen: str
    exit_status: int


async def acpx_turn(
    command: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    answer: str = "y",
    until: str,
    within: float = 90.0,
) -> UiTurn:
    """Run ``command`` (see ``acpx_command``) on a terminal; answer every permission
    question by typing ``answer`` and Enter, until ``until`` (a regular expression) is on
    the screen and acpx has exited."""
    asked: list[str] = []
    async with PtyScreen.spawn(command, env=env, cwd=cwd, columns=160, rows=50) as ui:

        def questions() -> list[str]:
            found = re.finditer(ACPX_PERMISSION, ui.text(), re.DOTALL)
            # a path longer than the screen is wide wraps: its rows joined again
            return [m.group("title") or m.group("write").replace("\n", "") for m in found]

        def next_step() -> bool:
            return len(questions()) > len(asked) or re.search(until, ui.text()) is not None

        while True:
            await ui.wait_until(next_step, f"a permission question or {until!r}", within)
            if len(questions()) == len(asked):
                break
            asked.append(questions()[len(asked)])
            ui.press(answer, "enter")
        status = await ui.wait_for_exit(within)
        return UiTurn(asked, ui.text(), status)
