"""``tether acp`` started as a real subprocess for the kit's client, on a scripted model."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests import forkserver

from .client import AcpAgent
from .conftest import repo_env
from .recorder import RecordingClient

TETHER_ACP = forkserver.command("acp")
"""Forked by the worker's fork server (``tests/forkserver.py``)."""
EOF_WITHIN = 30.0
"""How long the exit check waits for every process to be gone after stdin's EOF. ACP asks
2 s, which the peers benchmark measures (docs/performance.md); here the bound only ends the
wait for an agent that lingers (it never exits), wide enough that no load fails one that
exits."""


def tether_env(state: Path, script: dict[str, Any], **extra: str) -> dict[str, str]:
    """A clean environment: the scripted model, a private state folder and home."""
    env = {
        k: v
        for k, v in repo_env().items()
        if not k.startswith("TETHER_") and k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    }
    home = state / "home"
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        TETHER_PROVIDER="scripted",
        TETHER_SCRIPT=json.dumps(script),
        TETHER_STATE_DIR=str(state / "sessions"),
        **extra,
    )
    return env


def turns(*turns: dict[str, Any], **options: Any) -> dict[str, Any]:
    return {"turns": list(turns), **options}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


@contextlib.asynccontextmanager
async def tether_acp(
    root: Path,
    state: Path,
    script: dict[str, Any],
    client: RecordingClient,
    stderr_path: Path | None = None,
    **extra: str,
) -> AsyncIterator[AcpAgent]:
    """``tether acp`` in ``root``, initialized."""
    async with AcpAgent.spawn(
        TETHER_ACP,
        cwd=root,
        env=tether_env(state, script, **extra),
        client=client,
        stderr_path=stderr_path,
    ) as agent:
        await agent.initialize()
        yield agent
