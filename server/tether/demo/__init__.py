"""``tether demo``: a real scripted run on a bundled sample project, offline, no key."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from ..client.terminal_run import EXIT_NOT_DONE, EXIT_OK, EXIT_USAGE, TerminalRun, run_in_terminal

HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "workspace"
SCRIPT = HERE / "script.json"

PROMPT = "The tests of this project fail. Find out why and fix it."
BUGGY_LINE = "total += count + price"
"""The bug the script fixes; still there after the run means the fix was denied."""


class DemoFolderTaken(Exception):
    """``--keep DIR`` names a folder that already holds a demo project."""


def copy_sample(target: Path) -> Path:
    """Copy the sample project to ``target/inventory-demo`` and return that folder."""
    root = target / "inventory-demo"
    if root.exists():
        raise DemoFolderTaken(
            f"{root} already exists (from an earlier demo?); remove it or pass another --keep"
        )
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def fix_applied(root: Path) -> bool:
    """Whether the project's bug is fixed on disk (the user may have denied the edit)."""
    return BUGGY_LINE not in (root / "inventory" / "stock.py").read_text(encoding="utf-8")


async def run_demo(keep: Path | None = None, interactive: bool = False) -> int:
    """Run the demo session (edits and commands auto-approved unless ``interactive``).

    The exit status is 0 only when the run ended ``done`` and the fix is really on disk:
    the scripted model does not adapt to a denial, so the demo checks the outcome itself.
    """
    with tempfile.TemporaryDirectory(prefix="tether-demo-") as scratch:
        try:
            root = copy_sample(keep or Path(scratch))
        except (DemoFolderTaken, OSError) as exc:
            print(f"tether: {exc}", file=sys.stderr)
            return EXIT_USAGE
        state = Path(scratch) / "state"
        job = TerminalRun(
            root=root,
            prompt=PROMPT,
            options={"provider": "scripted", "script": str(SCRIPT), "stateDir": str(state)},
            state_dir=state,
            yes=not interactive,
            yes_reason="auto-approved for the demo; --interactive to decide yourself",
            intro=f"Sample project copied to {root}",
        )
        status = await run_in_terminal(job)
        if status == EXIT_OK and not fix_applied(root):
            print(
                "tether demo: the fix was denied, so the bug is still there and the tests "
                "still fail; the scripted model's last words assumed otherwise.",
                file=sys.stderr,
            )
            return EXIT_NOT_DONE
        return status
