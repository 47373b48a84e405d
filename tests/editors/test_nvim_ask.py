"""``agent/ask`` answered by the Neovim plugin: a choice picked with ``vim.ui.select``, an
answer typed through its "Type an answer…" entry and ``vim.ui.input``; the question shown
escaped, on one line. A question the server withdraws closes Neovim's own picker."""

from __future__ import annotations

import time

from ..waiting import wait_until_sync
from .conftest import Nvim, call, env, script, tool_results
from .test_chat import NvimInTmux

ASK_DB = call(
    "ask_user", question="Which database?\x1b[2J\nfor the cache", choices=["sqlite", "pg"]
)
ASK_NAME = call("ask_user", question="What name?", choices=["a", "b"])


def test_a_choice_is_picked_and_an_answer_typed(nvim: Nvim) -> None:
    r = nvim.run(
        "ask", script({"toolCalls": [ASK_DB]}, {"toolCalls": [ASK_NAME]}, {"text": "done"})
    )
    assert r["run"]["result"]["outcome"] == "done"
    outputs = [e["output"] for e in tool_results(r["run"])]
    assert outputs == ["The user chose: pg", "The user answered: call it tether"]
    first, second = r["selects"]
    assert first == {
        "prompt": "Tether asks: Which database?\\x1b[2J for the cache",
        "items": ["sqlite", "pg", "Type an answer…"],
    }
    assert second["items"] == ["a", "b", "Type an answer…"]
    assert r["inputs"] == ["Tether asks: What name? (your answer): "]


def test_a_withdrawn_question_closes_neovims_own_picker(nvim: Nvim) -> None:
    """On a real terminal: the run times out while the default ``vim.ui.select``
    (``inputlist()``) waits for a number; the server withdraws the question and the
    picker closes by itself, nothing picked."""
    turns = script({"toolCalls": [ASK_DB]}, {"text": "too late"})
    command, full_env, out, marker = nvim.prepare(
        "ask_withdrawn", turns, env=env(WATCHDOG_MS="60000")
    )
    command.remove("--headless")
    started = time.monotonic()
    term = NvimInTmux(nvim.tmp_path, command, full_env, nvim.workspace)
    try:
        screen = term.wait_for("Type number and <Enter>")  # Neovim's own picker waits
        assert "Tether asks: Which database?" in screen and "2: pg" in screen, screen

        def picker_gone() -> str | None:
            shown = term.screen()
            return shown if "Type number and <Enter>" not in shown else None

        closed = wait_until_sync(picker_gone, "the picker to close by itself", 60)
        if "Press ENTER" in closed:  # the run's outcome said below the picker's lines
            term.keys("Enter")  # read, as a user would
        wait_until_sync(lambda: out.exists() or None, "the run over", 60)
    finally:
        term.close()
    r = nvim.outcome("ask_withdrawn", out, marker, None, "", "", time.monotonic() - started)
    assert r["run"]["result"]["outcome"] == "timeout"
    assert r["choice"] is None  # closed, nothing picked
    assert "Tether: the question was withdrawn" not in r["notes"]  # its closing says it
