"""Fixtures of the ACP kit: the tiny SDK agent as a subprocess, driven by the kit's client."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from .client import AcpAgent
from .recorder import RecordingClient

REPO = Path(__file__).resolve().parents[2]
TINY_AGENT = (sys.executable, "-m", "tests.acp.tiny_agent")

TinyFactory = Callable[..., contextlib.AbstractAsyncContextManager[AcpAgent]]


def repo_env() -> dict[str, str]:
    """The environment with this checkout importable (the agent runs in a test folder)."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


@pytest.fixture
def tiny_agent(tmp_path: Path) -> TinyFactory:
    """``async with tiny_agent(**client_options) as agent``: initialized, cwd ``tmp_path``."""

    @contextlib.asynccontextmanager
    async def start(*extra: str, **options: Any) -> AsyncIterator[AcpAgent]:
        client = RecordingClient(**options)
        async with AcpAgent.spawn(
            [*TINY_AGENT, *extra], cwd=tmp_path, env=repo_env(), client=client, request_within=20
        ) as agent:
            await agent.initialize()
            yield agent

    return start
