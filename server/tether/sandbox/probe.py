"""The ``sandbox`` setting against this machine: probed once, on first use, off the event
loop; a choice that cannot be honoured is said once and commands are asked as without one.

The choice and the folders come in as values: this package sits below the settings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

import anyio.to_thread

from .detect import SandboxChoice, SandboxStatus, status_for
from .runner import Sandbox, sandbox_maker

log = logging.getLogger(__name__)


async def sandbox_for(
    choice: SandboxChoice,
    environ: Mapping[str, str],
    config_dir: Path,
    state_dir: Path,
    env_names: Sequence[str] = (),
) -> Callable[[Sequence[Path]], Sandbox] | None:
    """What makes a workspace's sandbox under ``choice`` (None: none); ``env_names``: the
    variables the user lets in (``sandboxEnv``)."""
    if choice == "off":
        return None
    status = await anyio.to_thread.run_sync(status_for, choice)
    if status.backend is None:
        _warn_once(_unusable(status))
    return sandbox_maker(status, environ, config_dir, state_dir, env_names)


async def sandbox_problem(choice: SandboxChoice) -> str | None:
    """Why ``choice`` cannot be honoured here (None: it can, or it is off)."""
    if choice == "off":
        return None
    status = await anyio.to_thread.run_sync(status_for, choice)
    return None if status.backend is not None else _unusable(status)


def _unusable(status: SandboxStatus) -> str:
    return f"sandbox {status.choice!r}: {status.reason}; commands are asked as without one"


@lru_cache(maxsize=8)
def _warn_once(message: str) -> None:
    log.warning("%s", message)
