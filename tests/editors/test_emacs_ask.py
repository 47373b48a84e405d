"""``agent/ask`` answered by tether.el in a real Emacs: the model's questions in the
minibuffer, a choice and a typed answer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .emacs_harness import PROXY, STORIES, emacs_batch, require_emacs, story_env, tool_results

ASK_STORY = STORIES / "ask-story.el"


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
