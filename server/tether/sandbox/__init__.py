"""Sandboxed commands: bubblewrap or Landlock walls around ``bash`` (see docs/approvals.md)."""

from __future__ import annotations

from .detect import (
    Availability,
    Backend,
    SandboxChoice,
    SandboxStatus,
    availability,
    describe_sandbox,
    status_for,
)
from .runner import Prepared, Sandbox, blocked_reason, sandbox_maker, unsandboxed
from .walls import Walls, walls_for

__all__ = [
    "Availability",
    "Backend",
    "Prepared",
    "Sandbox",
    "SandboxChoice",
    "SandboxStatus",
    "Walls",
    "availability",
    "blocked_reason",
    "describe_sandbox",
    "sandbox_maker",
    "status_for",
    "unsandboxed",
    "walls_for",
]
