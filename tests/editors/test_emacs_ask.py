"""``agent/ask`` answered by tether.el in a real Emacs: the model's questions in the
minibuffer, a choice and a typed answer; a question the server withdraws closes its
prompt unanswered."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .emacs_harness import (
    PROXY,
    STORIES,
    answers,
    emacs_batch,
    proxied_story,
    require_emacs,
    story_env,
    tool_results,
    withdrawn_ids,
)

ASK_STORY = STORIES / "ask-story.el"
ASK_WITHDRAW_STORY = STORIES / "ask-withdraw-story.el"


def test_the_minibuffer_answers_the_models_questions(tmp_path: Path) -> None:
    require_emacs()
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    turns = {
        "turns": [
            {
                "toolCalls": [
                    {
                        "name": "ask_user",
                        "arguments": {
                            "question": "Which database?\x1b[2J",
                            "choices": ["sqlite", "pg"],
                            "free_text": False,
                        },
                    }
                ]
            },
            {"toolCalls": [{"name": "ask_user", "arguments": {"question": "What name?"}}]},
            {"text": "done"},
        ]
    }
    env = story_env(tmp_path, root, turns)
    wire_log = tmp_path / "wire.jsonl"
    env.update(TETHER_PROXY=str(PROXY), TETHER_PROXY_LOG=str(wire_log))
    emacs_batch(ASK_STORY, env, "pg\ncall it tether\n")  # what the user types
    report = json.loads((tmp_path / "result.json").read_text())
    wire = [json.loads(line) for line in wire_log.read_text().splitlines()]
    assert report == {"outcome": "done"}, report
    outputs = [r["output"] for r in tool_results(wire)]
    assert outputs == ["The user chose: pg", "The user answered: call it tether"]
    [initialize] = [
        e["message"]
        for e in wire
        if e["from"] == "editor" and e["message"].get("method") == "initialize"
    ]
    assert initialize["params"]["capabilities"]["experimental"]["tether"]["ask"] is True
    asked = [
        e["message"]["params"]
        for e in wire
        if e["from"] == "server" and e["message"].get("method") == "agent/ask"
    ]
    assert asked[0]["question"] == "Which database?\\x1b[2J"  # escaped by the server


@pytest.mark.parametrize("busy", [False, True], ids=["minibuffer-free", "minibuffer-busy"])
def test_a_withdrawn_question_closes_its_minibuffer_prompt_unanswered(
    tmp_path: Path, busy: bool
) -> None:
    """In ``emacs -nw``: the question's prompt is open, nobody answers, the run times out
    and the server withdraws the question: the prompt closes by itself, Emacs says so, and
    no answer is sent. A minibuffer busy when the question comes is waited for."""
    ask = {"name": "ask_user", "arguments": {"question": "Which database?", "choices": ["a", "b"]}}
    turns = {
        "turns": [{"toolCalls": [ask]}, {"text": "too late"}],
        **({"delaySeconds": 1} if busy else {}),  # each model call: the user is busy by then
    }
    extra = {"TETHER_BUSY": "1"} if busy else {}
    report, wire = proxied_story(tmp_path, ASK_WITHDRAW_STORY, turns, extra, terminal=True)
    assert report["outcome"] == "timeout", report
    asked = ["Tether asks: Which database? "]
    assert report["prompts"] == (["busy: ", *asked] if busy else asked), report
    assert report["depth"] == 0, report  # the prompt closed
    assert "Tether: the question was withdrawn" in report["messages"]
    [asked] = [
        e["message"]
        for e in wire
        if e["from"] == "server" and e["message"].get("method") == "agent/ask"
    ]
    assert withdrawn_ids(wire) == [asked["id"]]
    assert answers(wire, asked["id"]) == []  # Emacs never answered the withdrawn question
