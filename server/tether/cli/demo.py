"""``tether demo``: a scripted run on a bundled sample project (offline, no key)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .flags import Commands


def add_demo(commands: Commands) -> None:
    parser = commands.add_parser(
        "demo", help="a scripted run on a bundled sample project (offline, no key)"
    )
    parser.add_argument("--keep", metavar="DIR", help="copy the sample project here and keep it")
    parser.add_argument(
        "--interactive", action="store_true", help="decide each edit and command yourself"
    )


def demo(args: argparse.Namespace) -> int:
    """Run the bundled demo; exit 0 when the run ends ``done`` with the fix on disk."""
    import anyio

    from ..demo import run_demo

    target = Path(args.keep).resolve() if args.keep else None
    return anyio.run(run_demo, target, args.interactive)
