"""What a session command answers is shown to a person in every front: whatever text it
carries from outside (a provider's error in ``/compact``'s, a name typed after ``/``) comes
back escaped by the one display sanitiser, once."""

from __future__ import annotations

from typing import Any

import pytest

from tether.run import commands
from tether.run.commands import CommandRefused, run_command
from tether_protocol import CommandParams, CommandResult, SessionCommand

HOSTILE = "could not compact: \x1b[2J\rgone \u202eexe.txt"


async def test_a_commands_message_is_shown_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    async def said(host: Any, params: CommandParams) -> CommandResult:
        return CommandResult(message=HOSTILE + "\nliteral \\x1b stays")

    entry = (SessionCommand(name="said", description="test"), said)
    monkeypatch.setitem(commands.COMMANDS, "said", entry)
    result = await run_command(object(), CommandParams(name="said"))  # type: ignore[arg-type]
    assert result.message == (
        "could not compact: \\x1b[2J\\rgone \\u202eexe.txt\nliteral \\x1b stays"
    )


async def test_an_unknown_commands_name_is_shown_escaped() -> None:
    with pytest.raises(CommandRefused) as refused:
        await run_command(object(), CommandParams(name="\u202eodnu\x1b[2J"))  # type: ignore[arg-type]
    said = str(refused.value)
    assert "\x1b" not in said and "\u202e" not in said and "\\u202eodnu\\x1b[2J" in said, said
