"""``agent/commands`` and ``agent/command``: the session commands every front offers.

The server defines them once (``/undo``, ``/new``, ``/model``, ``/cost``…); a front lists
them to its user (the terminal chat, an editor's command palette, an ACP client's
``available_commands``) and runs one with ``agent/command``. Commands a front has alone
(``/help``, ``/exit``) stay in that front.
"""

from __future__ import annotations

from pydantic import Field

from .base import WireModel
from .run import Id, NonEmpty


class SessionCommand(WireModel):
    """One command, as a front lists it (without its leading ``/``)."""

    name: str
    description: str
    argument: str | None = None
    """A hint for its argument (``[NAME]``), absent when it takes none."""


class CommandsParams(WireModel):
    """Params of ``agent/commands`` (none)."""


class CommandsResult(WireModel):
    """The server's session commands."""

    commands: list[SessionCommand]


class CommandParams(WireModel):
    """Params of ``agent/command``: run one listed command on a session."""

    name: NonEmpty
    session_id: Id | None = None
    """The session it acts on; absent before the first run (some then have nothing to do)."""
    argument: str | None = None


class CommandResult(WireModel):
    """What the command did, for the user."""

    message: str
    """What to show, one or more lines."""
    new_session: bool = False
    """The next run starts a new session (``/new``): the front forgets its session id."""
    files: list[str] = Field(default_factory=list)
    """The files it changed (``/undo``: the ones put back), as URIs."""
    choices: list[str] = Field(default_factory=list)
    """Values its argument may take, for a front to offer as a pick (``/model`` without a
    name: the current model first, then the others Tether knows for the provider)."""
