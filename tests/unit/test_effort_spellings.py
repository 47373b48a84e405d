"""``/effort ARGUMENT`` under generated arguments: a level in any case (and spaces around it)
is taken; anything else is refused naming the four levels, with the argument echoed on one
line, escaped and capped — it is shown to a person — and the choice left as it was."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tether.config.layers import resolve
from tether.run.commands import CommandRefused, run_command
from tether_protocol import CommandParams, TetherSettings

LEVELS = ("off", "low", "medium", "high")


@dataclass
class Host:
    """What ``/effort`` reads and sets (it touches nothing else of a front)."""

    chosen_model: str | None = None
    chosen_effort: str | None = None
    config: Any = resolve(TetherSettings(reasoning_effort="low"), {})


def effort(host: Host, argument: str) -> str:
    params = CommandParams(name="effort", argument=argument)
    return asyncio.run(run_command(host, params)).message  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
@example("HIGH")
@example(" medium ")
@example("max\x1b[2J")
@example("low\u202eevil")
@example("off\nlow")
@example("x" * 500)
def test_a_level_is_taken_anything_else_refused_shown_safely(argument: str) -> None:
    host = Host()
    level = argument.strip().lower()
    if not argument.strip():
        assert effort(host, argument).startswith("effort: low;")  # shown, not changed
        assert host.chosen_effort is None
    elif level in LEVELS:
        assert effort(host, argument) == f"effort: {level} from the next message on"
        assert host.chosen_effort == level
    else:
        with pytest.raises(CommandRefused) as refused:
            effort(host, argument)
        message = str(refused.value)
        assert message.endswith("; the efforts: off, low, medium, high")
        assert message.isprintable() and len(message) < 500, message  # 40 characters, escaped
        assert host.chosen_effort is None
