"""The code tools in Emacs answered by the Eglot server managing the file (basedpyright,
from PyPI): ``agent/code`` goes to Eglot's basedpyright, a file no buffer visits is visited
in the background and managed by the same server, and Tether starts no language server of
its own (none under Tether's server, though one is on its ``PATH``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .emacs_harness import STORIES, proxied_story, tool_results

CODE_STORY = STORIES / "code-story.el"
BIN = Path(sys.executable).parent
LIB = (
    'def greet(name: str) -> str:\n    """Say hello."""\n    return f"hello {name}"\n'
    "\n# Local Variables:\n# eval: (setq story-owned t)\n# End:\n"
)
"""Its unsafe local variable is neither asked about nor applied when Emacs visits it for
the agent."""
APP = 'from lib import greet\n\nprint("é😀", greet("you"))\n'


def call(name: str, **arguments: object) -> dict[str, object]:
    return {"name": name, "arguments": arguments}


def test_eglots_basedpyright_answers_the_code_tools(tmp_path: Path) -> None:
    server = BIN / "basedpyright-langserver"
    if not server.exists():
        pytest.fail(f"{server} is missing: install the test extra (basedpyright)", pytrace=False)
    calls = [
        call("definition", path="src/app.py", line=3, symbol="greet"),
        call("references", path="src/app.py", line=3, symbol="greet"),
        call("hover", path="src/app.py", line=3, symbol="greet"),
        call("symbols", path="src/lib.py"),
    ]
    turns = {"turns": [{"toolCalls": calls}, {"text": "done"}]}
    extra = {
        "TETHER_LSP": str(server),
        "TETHER_LIB": LIB,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # Tether could start one
    }
    report, wire = proxied_story(tmp_path, CODE_STORY, turns, extra, app=APP)
    assert report["outcome"] == "done", report
    results = tool_results(wire)
    outputs = [r["output"] for r in results]
    assert [r["ok"] for r in results] == [True] * 4, outputs
    definition, references, hover, symbols = outputs
    assert definition == (
        "Definition of greet (answered by basedpyright):\n"
        "src/lib.py:1:5: def greet(name: str) -> str:"
    )
    head, *places = references.splitlines()
    assert head == "3 references to greet (answered by basedpyright):"
    assert sorted(places) == [
        "src/app.py:1:17: from lib import greet",
        'src/app.py:3:13: print("é😀", greet("you"))',  # the column in characters
        "src/lib.py:1:5: def greet(name: str) -> str:",
    ]
    assert hover.startswith("greet (answered by basedpyright):\n") and "Say hello." in hover
    assert symbols.splitlines()[:2] == [
        "Symbols of src/lib.py (answered by basedpyright):",
        "function greet — src/lib.py:1:5",
    ]
    assert report["lib_managed"] is True and report["owned"] is False
    assert report["servers"] >= 1 and report["started_by_tether"] == 0, report
    [initialize] = [
        e["message"]
        for e in wire
        if e["from"] == "editor" and e["message"].get("method") == "initialize"
    ]
    assert initialize["params"]["capabilities"]["experimental"]["tether"]["code"] is True
