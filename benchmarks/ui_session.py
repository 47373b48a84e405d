"""One turn through a real ACP client UI in a pseudo-terminal, captured as text.

    python -m benchmarks.ui_session [--agent codex-acp] [--answer y|n]

acpx (installed with the peers, see ``benchmarks/agents.py``) runs the agent against the
fake model on the read → write → answer task; the driver (``tests/acp/ui_clients.py``)
answers the permission question with a key and prints the screen. Toad needs
Python ≥ 3.14 and is not driven here (see ``tests/acp/README.md``).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from tests.acp.terminal_ui import stamp
from tests.acp.ui_clients import acpx_command, acpx_turn

from .agents import AGENTS, INSTALL, PEERS_DIR, agent
from .task_model import ANSWER, PROMPT, TaskModel, make_workspace, task_done


async def session(name: str, answer: str) -> int:
    spec = agent(name)
    acpx = PEERS_DIR / "node_modules" / ".bin" / "acpx"
    if not acpx.exists() or not spec.available():
        print(f"acpx or {name}: not installed ({INSTALL})", file=sys.stderr)
        return 1
    scratch = Path(tempfile.mkdtemp(prefix="ui-", dir=PEERS_DIR))
    try:
        root = make_workspace(scratch / "work")
        with TaskModel(spec.dialect, root) as model:
            argv, env = spec.command(model.base_url, scratch / "home")
            command = acpx_command(acpx, argv, root, PROMPT)
            until = ANSWER if answer == "y" else r"\[done\]|rejected|denied|cancel"
            turn = await acpx_turn(command, env=env, cwd=root, answer=answer, until=until)
        print(f"$ acpx --agent '{name} …' --cwd {root.name} exec {PROMPT!r}   # {stamp()}")
        print(turn.screen)
        print(
            f"\n[driver] asked: {turn.asked}; answered {answer!r}; acpx exited {turn.exit_status};"
        )
        print(f"[driver] the file on disk was {'changed' if task_done(root) else 'not changed'}")
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ui_session", description=__doc__)
    parser.add_argument("--agent", default="codex-acp", choices=[spec.name for spec in AGENTS])
    parser.add_argument("--answer", default="y", help="the key pressed at the permission question")
    args = parser.parse_args(argv)
    return asyncio.run(session(args.agent, args.answer))


if __name__ == "__main__":
    sys.exit(main())
