"""``agent/ask`` answered by the Neovim plugin: a choice picked with ``vim.ui.select``, an
answer typed through its "Type an answer…" entry and ``vim.ui.input``; the question shown
escaped, on one line."""

from __future__ import annotations

from .conftest import Nvim, call, script, tool_results

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
