"""The tools the model may call, their registry, and ``build_tools``: every tool the server
offers (``tether serve``, ``tether acp``, the daemon's preload, ``tether run``'s check of
``autoApprove``).

The tool modules are imported inside ``build_tools``: importing one of them (``tools.base``
for a type) does not load the rest, and ``tether run`` pays for them only when it checks
its settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .static import StaticToolRegistry


def build_tools() -> StaticToolRegistry:
    """Every tool the server offers, their specs built once (``tools.static``)."""
    from .ask import AskUser
    from .diagnostics import Diagnostics
    from .edits import EditFile, WriteFile
    from .files import READ_TOOLS
    from .jobs import JobOutputTool, JobStop
    from .plan import Plan
    from .shell import Bash
    from .static import StaticToolRegistry

    return StaticToolRegistry(
        [
            *READ_TOOLS,
            Diagnostics(),
            Plan(),
            AskUser(),
            EditFile(),
            WriteFile(),
            Bash(),
            JobOutputTool(),
            JobStop(),
        ]
    )
