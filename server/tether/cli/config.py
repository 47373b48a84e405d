"""``tether config``: the effective settings here and where each came from."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .flags import add_setting_flags, run_options

if TYPE_CHECKING:
    from .flags import Commands


def add_config(commands: Commands) -> None:
    parser = commands.add_parser(
        "config", help="show the effective settings and where each one comes from"
    )
    add_setting_flags(parser)


def show_config(args: argparse.Namespace) -> int:
    """``tether config``: the effective settings here and where each came from."""
    from ..client.settings import describe, terminal_settings
    from ..config.layers import ConfigError
    from ..sandbox import describe_sandbox

    cwd = Path(args.cwd).resolve()
    try:
        settings = terminal_settings(cwd, run_options(args), os.environ)
        print(describe(settings))
    except ConfigError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    print(describe_sandbox(settings.settings.sandbox or "off"))
    return 0
