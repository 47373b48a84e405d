"""Approval rules from a real Neovim: "allow always" with a rule, :TetherRules, revoking."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from tether.rules.match import judge
from tether_protocol import Preview, Rule

from .conftest import Nvim, call, script


def decisions(run: dict[str, Any]) -> list[str]:
    return [e["decision"] for e in run["events"] if e["kind"] == "approval"]


def outputs(run: dict[str, Any]) -> list[str]:
    return [e["output"] for e in run["events"] if e["kind"] == "tool-result"]


def test_a_rule_allowed_always_covers_the_next_runs_until_revoked(nvim: Nvim) -> None:
    (nvim.workspace / "README.md").write_text("# demo\n")
    files = []
    for n, word in enumerate(("one", "two", "three"), 1):
        path = nvim.tmp_path / f"run-{n}.json"
        path.write_text(json.dumps(script({"toolCalls": [call("bash", command=f"echo {word}")]})))
        files.append(str(path))
    r = nvim.run("rules", env={"SCRIPTS": json.dumps(files)})
    first, second, third = r["runs"]
    # run 1: the float offers the rule; `r` asks for the pattern with it filled in
    assert [s["run"] for s in r["shown"]] == [1, 3]  # run 2 was not asked
    assert "r always `echo *`" in r["shown"][0]["footer"]
    assert r["inputs"][0] == "Tether: allow always (session rule) bash: "
    assert r["input_defaults"][0] == "echo *"
    assert decisions(first) == ["allow-always"] and "one" in outputs(first)[0]
    # run 2 continues the editor session: `echo two` runs under the rule, unasked
    session = first["result"]["sessionId"]
    assert second["params"]["sessionId"] == session
    [approval] = [e for e in second["events"] if e["kind"] == "approval"]
    assert approval["decision"] == "auto"
    rule = {"tool": "bash", "pattern": "echo *", "decision": "allow", "scope": "session"}
    assert approval["rules"] == [rule]
    assert "two" in outputs(second)[0]
    # :TetherRules lists it first (the session's rules), then revoking it with x
    listed, after = r["listings"]
    assert listed["name"].endswith("tether://rules")
    assert listed["rules"][0] == rule
    assert listed["lines"][2].split() == [
        *("session", "allow", "bash", "echo", "*"),
        *("this", "editor", "session"),
    ]
    assert rule not in after["rules"]
    assert all("echo *" not in line for line in after["lines"])
    # run 3, same session: asked again, allowed once
    assert third["params"]["sessionId"] == session
    assert decisions(third) == ["allow"] and "three" in outputs(third)[0]


def test_the_rule_offered_is_the_commands_leading_words_or_the_files_folder(
    nvim: Nvim,
) -> None:
    ws = nvim.workspace

    def bash(command: str) -> dict[str, Any]:
        preview = {"kind": "command", "command": command, "cwd": str(ws)}
        return {"tool": "bash", "preview": preview}

    def edit(path: str, tool: str = "edit_file") -> dict[str, Any]:
        return {"tool": tool, "preview": {"kind": "diff", "uri": (ws / path).as_uri()}}

    cases = {
        "pytest *": bash("pytest -q tests/test_app.py"),
        "git commit *": bash("git commit -m 'fix it'"),
        "npm run *": bash("npm run test"),
        "python3 *": bash("python3 -m unittest"),
        "make *": bash("make"),
        "src/*.py": edit("src/app.py"),
        "*.md": edit("README.md", "write_file"),
        "src/Makefile": edit("src/Makefile"),
    }
    none = [
        bash("pytest && rm -rf build"),  # one rule cannot cover two commands
        bash("pytest | tee out.txt"),
        bash("echo $(whoami)"),
        bash("pytest > out.txt"),
        bash("./run-tests.sh"),  # a path, not a program name
        bash("FOO=1 pytest"),
        edit("../outside.py"),
        edit("src/my file.py"),  # globs are separated by spaces
        {"tool": "read_file", "preview": {"kind": "command", "command": "ls"}},
    ]
    calls = [*cases.values(), *none]
    r = nvim.run("suggest", env={"CALLS": json.dumps(calls)})
    offered = r["offered"]
    assert [o and o["pattern"] for o in offered[: len(cases)]] == list(cases)
    assert [o["tool"] for o in offered[: len(cases)]] == [c["tool"] for c in cases.values()]
    assert offered[len(cases) :] == [None] * len(none)
    # each rule offered covers its call as the server judges it (else it would not be kept)
    for pattern, params in cases.items():
        shown = params["preview"]
        extra = {"diff": ""} if shown["kind"] == "diff" else {}
        preview = TypeAdapter(Preview).validate_python({**shown, **extra})
        rule = Rule(tool=params["tool"], pattern=pattern, decision="allow", scope="session")
        assert judge(params["tool"], preview, [rule], [ws]).outcome == "allow", pattern


def test_allow_always_of_a_command_is_its_exact_rule_when_a_pattern_can_say_it(
    nvim: Nvim,
) -> None:
    ws = nvim.workspace

    def bash(command: str) -> dict[str, Any]:
        return {"tool": "bash", "preview": {"kind": "command", "command": command, "cwd": str(ws)}}

    exact = {
        "pytest -q tests/test_app.py": bash("pytest  -q tests/test_app.py"),
        "git log --oneline -n 3": bash("git log --oneline -n 3"),
        "**": {"tool": "edit_file", "preview": {"kind": "diff", "uri": (ws / "a.py").as_uri()}},
    }
    bare = [  # a pattern would not say exactly this command: a bare allow-always instead
        bash("ls *"),  # a last `*` in a pattern allows any arguments
        bash("rm *.pyc"),
        bash("git commit -m 'a b'"),
        bash("echo $HOME"),
        bash("make && make install"),
        bash("A=1 make"),
    ]
    r = nvim.run("suggest", env={"CALLS": json.dumps([*exact.values(), *bare]), "EXACT": "1"})
    offered = r["offered"]
    assert [o and o["pattern"] for o in offered[: len(exact)]] == list(exact)
    assert offered[len(exact) :] == [None] * len(bare)
    for pattern, params in exact.items():  # the server keeps each: it covers the call
        shown = params["preview"]
        extra = {"diff": ""} if shown["kind"] == "diff" else {}
        preview = TypeAdapter(Preview).validate_python({**shown, **extra})
        rule = Rule(tool=params["tool"], pattern=pattern, decision="allow", scope="session")
        assert judge(params["tool"], preview, [rule], [ws]).outcome == "allow", pattern
    # and it allows nothing more: other arguments are asked
    more = TypeAdapter(Preview).validate_python({**bash("pytest -q tests/other.py")["preview"]})
    rule = Rule(tool="bash", pattern="pytest -q tests/test_app.py", decision="allow")
    assert judge("bash", more, [rule], [ws]).outcome == "none"
