"""``agent/diagnostics`` answered by tether.el from Flymake, in a real Emacs: a small
Flymake backend, and a real Eglot running basedpyright."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .emacs_harness import STORIES, answers, proxied_story, tool_results

DIAGNOSTICS_STORY = STORIES / "diagnostics-story.el"


def test_the_agent_reads_flymakes_problems(tmp_path: Path) -> None:
    app = "def greet(name):\n    # TODO: polite\n    return 'hello ' + nme\n"
    turns = {
        "turns": [
            {"toolCalls": [{"name": "diagnostics", "arguments": {"path": "src/app.py"}}]},
            {"toolCalls": [{"name": "diagnostics", "arguments": {}}]},
            {"toolCalls": [{"name": "diagnostics", "arguments": {"path": "README.md"}}]},
            {"text": "One error, one warning."},
        ]
    }
    report, wire = proxied_story(tmp_path, DIAGNOSTICS_STORY, turns, {}, app=app)
    assert report == {"outcome": "done", "flymake": 2}, report
    one_file, every_file, clean = (r["output"] for r in tool_results(wire)[:3])
    expected = [
        "src/app.py:3: error [story-flymake] undefined name 'nme'",
        "src/app.py:2: warning [story-flymake] a TODO is left",
    ]
    for output in (one_file, every_file):  # README.md has no Flymake: it is not listed
        assert output.splitlines()[1:] == expected, output
    assert clean == "The editor reports no problems in README.md."
    [initialize] = [
        e["message"]
        for e in wire
        if e["from"] == "editor" and e["message"].get("method") == "initialize"
    ]
    assert initialize["params"]["capabilities"]["experimental"]["tether"]["diagnostics"] is True
    # The request itself, as Emacs answered it: LSP ranges in characters.
    asked = [
        e["message"]["id"]
        for e in wire
        if e["from"] == "server" and e["message"].get("method") == "agent/diagnostics"
    ]
    [first] = answers(wire, asked[0])
    [item] = first["result"]["items"]
    error = next(d for d in item["diagnostics"] if d["severity"] == 1)
    assert error["range"] == {
        "start": {"line": 2, "character": 22},
        "end": {"line": 2, "character": 25},
    }


def test_eglots_diagnostics_from_a_real_language_server_reach_the_agent(tmp_path: Path) -> None:
    server = Path(sys.executable).parent / "basedpyright-langserver"
    if not server.exists():
        pytest.fail(f"{server} is missing: install the test extra (basedpyright)", pytrace=False)
    app = "def greet(name):\n    return 'héllo ' + nme\n"
    turns = {
        "turns": [
            {"toolCalls": [{"name": "diagnostics", "arguments": {"path": "src/app.py"}}]},
            {"text": "One error."},
        ]
    }
    extra = {"TETHER_LSP": str(server)}
    report, wire = proxied_story(tmp_path, DIAGNOSTICS_STORY, turns, extra, app=app)
    assert report["outcome"] == "done", report
    [result] = tool_results(wire)
    # Eglot's Flymake text is "basedpyright [reportUndefinedVariable]: …": the server's own
    # message, source and code are sent instead, so the model reads them once.
    # (basedpyright also warns about the missing annotations: errors come first.)
    lines = result["output"].splitlines()
    assert lines[1] == 'src/app.py:2: error [basedpyright] "nme" is not defined', lines
    [asked] = [
        e["message"]["id"]
        for e in wire
        if e["from"] == "server" and e["message"].get("method") == "agent/diagnostics"
    ]
    [answer] = answers(wire, asked)
    [item] = answer["result"]["items"]
    [typo] = [d for d in item["diagnostics"] if d["severity"] == 1]
    column = "    return 'héllo ' + ".__len__()  # Emacs characters: utf-32, as negotiated
    assert typo == {
        "range": {
            "start": {"line": 1, "character": column},
            "end": {"line": 1, "character": column + 3},
        },
        "severity": 1,
        "message": '"nme" is not defined',
        "source": "basedpyright",
        "code": "reportUndefinedVariable",
    }
