"""``tether demo``: a real scripted run on a bundled sample project, offline, no key."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..client.approver import TerminalApprover
from ..client.render import TerminalRenderer
from ..client.session import connect

HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "workspace"
SCRIPT = HERE / "script.json"

PROMPT = "The tests of this project fail. Find out why and fix it."


def copy_sample(target: Path) -> Path:
    """Copy the sample project to ``target/inventory-demo`` and return that folder."""
    root = target / "inventory-demo"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


async def run_demo(
    renderer: TerminalRenderer, keep: Path | None = None, interactive: bool = False
) -> dict[str, Any]:
    """Run the demo session (edits and commands auto-approved unless ``interactive``)."""
    with tempfile.TemporaryDirectory(prefix="tether-demo-") as scratch:
        base = keep or Path(scratch)
        root = copy_sample(base)
        options = {
            "provider": "scripted",
            "script": str(SCRIPT),
            "stateDir": str(Path(scratch) / "state"),
        }
        renderer._line(renderer._style(f"Sample project copied to {root}", "2"))
        approver = TerminalApprover(
            yes=not interactive,
            out=renderer.out,
            color=renderer.color,
            yes_reason="auto-approved for the demo; --interactive to decide yourself",
        )
        async with connect(root, options, approver=approver) as client:
            client.on_event = renderer
            result = await client.run(PROMPT)
        renderer.summary(result)
        return result
