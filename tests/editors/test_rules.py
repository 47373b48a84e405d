"""Approval rules from a real Neovim: "allow always" with a rule, :TetherRules, revoking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from tether.policy.propose import suggest_patterns
from tether_protocol import Preview

from .conftest import Nvim, call, decisions, script


def oks(run: dict[str, Any]) -> list[bool]:
    """Whether each call of the run succeeded (its command ran and exited 0)."""
    return [e["ok"] for e in run["events"] if e["kind"] == "tool-result"]


PLATFORM = ("uname", "uname -s", "uname -m")
"""Three calls of one program on the wider-rule allow-list: the server offers `uname *`
(a launcher, an interpreter or a runner would get its exact command only)."""


def test_a_rule_allowed_always_covers_the_next_runs_until_revoked(nvim: Nvim) -> None:
    (nvim.workspace / "README.md").write_text("# demo\n")
    files = []
    for n, command in enumerate(PLATFORM, 1):
        path = nvim.tmp_path / f"run-{n}.json"
        path.write_text(json.dumps(script({"toolCalls": [call("bash", command=command)]})))
        files.append(str(path))
    r = nvim.run("rules", env={"SCRIPTS": json.dumps(files), "PATTERN": "uname *"})
    first, second, third = r["runs"]
    # run 1: the float offers the server's wider rule; `r` asks for it, filled in
    assert [s["run"] for s in r["shown"]] == [1, 3]  # run 2 was not asked
    assert r["shown"][0]["keys"] == (
        " a allow · A always (this exact command) · r always `uname *` · d deny · e edit · q deny "
    )
    assert r["inputs"][0] == "Tether: allow always (session rule) bash: "
    assert r["input_defaults"][0] == "uname *"
    assert decisions(first) == ["allow-always"] and oks(first) == [True]
    # run 2 continues the editor session: another call of the module runs under the rule
    session = first["result"]["sessionId"]
    assert second["params"]["sessionId"] == session
    [approval] = [e for e in second["events"] if e["kind"] == "approval"]
    assert approval["decision"] == "auto"
    rule = {"tool": "bash", "pattern": "uname *", "decision": "allow"}
    rule["scope"] = "session"
    assert approval["rules"] == [rule]
    assert oks(second) == [True]
    # The transcript says which rule allowed it.
    assert "  approval: auto · rule `uname *` (session)" in r["transcript"]
    # :TetherRules lists it first (the session's rules), then revoking it with x
    listed, after = r["listings"]
    assert listed["name"].endswith("tether://rules")
    assert listed["rules"][0] == rule
    assert listed["lines"][2].split() == [
        *("session", "allow", "bash", "uname", "*"),
        *("this", "editor", "session"),
    ]
    assert rule not in after["rules"]
    assert all("uname" not in line for line in after["lines"])
    # run 3, same session: asked again, allowed once
    assert third["params"]["sessionId"] == session
    assert decisions(third) == ["allow"] and oks(third) == [True]


def approval(ws: Path, tool: str, shown: dict[str, Any], offer: bool = True) -> dict[str, Any]:
    """agent/approve params as the server sends them: with its suggestedPatterns (computed
    by the server's own code) unless ``offer`` is False."""
    params: dict[str, Any] = {
        "runId": "r1",
        "callId": f"c-{tool}",
        "tool": tool,
        "title": tool,
        "arguments": {},
        "preview": shown,
    }
    if offer:
        extra = {"diff": ""} if shown["kind"] == "diff" else {}
        preview = TypeAdapter(Preview).validate_python({**shown, **extra})
        params["suggestedPatterns"] = suggest_patterns(tool, preview, [ws])
    return params


def test_a_and_r_offer_the_servers_suggested_patterns_and_nothing_of_their_own(
    nvim: Nvim,
) -> None:
    ws = nvim.workspace

    def bash(command: str, offer: bool = True) -> dict[str, Any]:
        return approval(ws, "bash", {"kind": "command", "command": command, "cwd": str(ws)}, offer)

    def edit(path: str, offer: bool = True) -> dict[str, Any]:
        # as the server sends an edit: with its changed window (without one it is a change
        # of several files, shown whole: a rename)
        window = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}
        proposed = {"range": window, "text": "b\n", "baseText": "a\n"}
        diff = {
            "kind": "diff",
            "uri": (ws / path).as_uri(),
            "diff": "@@ -1 +1 @@\n-a\n+b\n",
            "proposed": proposed,
        }
        return approval(ws, "edit_file", diff, offer)

    offered = [
        bash("ls -la src"),  # on the allow-list: `ls *`, and only the server says so
        bash("echo 'fix it'"),  # quoted: no exact pattern, only `echo *`
        bash("rm -rf build"),  # never widened: only the exact command
        edit("src/app.py"),
    ]
    assert [c["suggestedPatterns"] for c in offered] == [
        ["ls -la src", "ls *"],
        ["echo *"],
        ["rm -rf build"],
        ["src/app.py", "src/*.py"],
    ]
    none = [bash("pytest -q", offer=False), edit("src/app.py", offer=False)]

    always = nvim.run("suggest", env={"CALLS": json.dumps([*offered, *none]), "KEY": "A"})
    keys = [o["keys"] for o in always["offered"]]
    assert keys == [
        " a allow · A always (this exact command) · r always `ls *` · d deny · e edit · q deny ",
        # only a wider rule offered: `A` stays this exact command (bare), `r` offers it
        " a allow · A always (this exact command) · r always `echo *` · d deny · e edit · q deny ",
        " a allow · A always (this exact command) · d deny · e edit · q deny ",
        " a allow · A always `src/app.py` · r always `src/*.py` · d deny · e edit · q deny ",
        # the server offered nothing: nothing computed here, `A` as it always was
        " a allow · A always (this exact command) · d deny · e edit · q deny ",
        " a allow · A always (every file) · d deny · e edit · q deny ",
    ]
    # `A`: the exact suggestion (the command's words, the file) as a session rule; a bare
    # allow-always without one
    answers = [o["answer"] for o in always["offered"]]
    rules = [(a.get("rule") or {}).get("pattern") for a in answers]
    assert rules == ["ls -la src", None, "rm -rf build", "src/app.py", None, None]
    assert all(a["decision"] == "allow-always" for a in answers)
    assert answers[0]["rule"] == {
        "tool": "bash",
        "pattern": "ls -la src",
        "decision": "allow",
        "scope": "session",
    }

    # `r`: the wider suggestion offered to accept or change
    wider = nvim.run("suggest", env={"CALLS": json.dumps(offered), "KEY": "r"})
    defaults = ["ls *", "echo *", "rm -rf build", "src/*.py"]
    assert wider["input_defaults"] == defaults
    picked = [o["answer"]["rule"] for o in wider["offered"]]
    assert [(r["tool"], r["pattern"], r["scope"]) for r in picked] == [
        ("bash", "ls *", "session"),
        ("bash", "echo *", "session"),
        ("bash", "rm -rf build", "session"),
        ("edit_file", "src/*.py", "session"),
    ]
