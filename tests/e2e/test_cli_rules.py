"""`tether rules` and the approval prompt's "always allow `echo *` in this project", through
real `tether` subprocesses (a pipe, or a pseudo-terminal where a person answers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.test_cli_terminal import Terminal, assert_nothing_left, environment, scripted

from .cli import TETHER_EXEC, tether


def stored(root: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """The rules a fresh server lists for ``root`` (the built-in ones left out)."""
    out = tether(["rules", "list", "--json"], root, env)
    assert out.returncode == 0, out.stderr
    return [r for r in json.loads(out.stdout)["rules"] if r["scope"] != "builtin"]


def test_a_rule_added_is_listed_survives_a_restart_and_is_removed(tmp_path: Path) -> None:
    env = environment(tmp_path)
    root = tmp_path / "p"
    root.mkdir()
    added = tether(["rules", "add", "bash", "pytest *"], root, env)
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "added: allow bash `pytest *` (project)"
    denied = tether(["rules", "add", "bash", "git push *", "--deny", "--scope", "user"], root, env)
    assert denied.returncode == 0, denied.stderr

    listed = tether(["rules"], root, env)  # each command is a new server: a restart
    assert listed.returncode == 0, listed.stderr
    rows = [line.split(None, 4) for line in listed.stdout.splitlines()[1:3]]
    assert rows == [
        ["1", "bash", "allow", "project", "pytest *"],
        ["2", "bash", "deny", "user", "git push *"],
    ]
    assert "built-in read-only commands: on" in listed.stdout
    assert stored(root, env) == [
        {"tool": "bash", "pattern": "pytest *", "decision": "allow", "scope": "project"},
        {"tool": "bash", "pattern": "git push *", "decision": "deny", "scope": "user"},
    ]
    elsewhere = tmp_path / "q"
    elsewhere.mkdir()
    assert [r["pattern"] for r in stored(elsewhere, env)] == ["git push *"]  # user: everywhere

    removed = tether(["rules", "remove", "pytest *"], root, env)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.strip() == "removed: allow bash `pytest *` (project)"
    by_number = tether(["rules", "remove", "1"], root, env)
    assert by_number.returncode == 0 and "git push *" in by_number.stdout
    assert stored(root, env) == []
    again = tether(["rules", "remove", "pytest *"], root, env)
    assert again.returncode == 2 and "no rule with the pattern 'pytest *'" in again.stderr
    assert_nothing_left(env)


def test_a_bad_pattern_or_a_built_in_rule_is_one_clear_line(tmp_path: Path) -> None:
    env = environment(tmp_path)
    bad = tether(["rules", "add", "bash", "make && rm -rf x"], tmp_path, env)
    assert bad.returncode == 2
    assert bad.stderr.startswith("tether: pattern: 'make && rm -rf x': a pattern is one simple")
    assert len(bad.stderr.splitlines()) == 1
    session = tether(["rules", "add", "bash", "make", "--scope", "session"], tmp_path, env)
    assert session.returncode == 2 and "--scope project or user" in session.stderr
    builtin = tether(["rules", "remove", "1"], tmp_path, env)  # `ls *`, built in
    assert builtin.returncode == 2 and "read_only_defaults = false" in builtin.stderr
    assert stored(tmp_path, env) == []


def test_always_allowing_the_proposed_rule_stores_it_for_later_runs(tmp_path: Path) -> None:
    def echo(name: str) -> dict[str, Any]:
        # `echo` is on the wider-rule allow-list; `touch` writes, so it is offered exactly
        return {"toolCalls": [{"name": "bash", "arguments": {"command": f"echo {name}"}}]}

    script = {"turns": [echo("said-a"), echo("said-b"), {"text": "said"}]}
    env = scripted(tmp_path, script)
    term = Terminal(["run", "touch two files"], env, tmp_path)
    term.expect("[p] always `echo *` in this project")
    term.send("p")
    status = term.wait(timeout=60)
    assert status == 0, term.text
    assert term.text.count("[p] always") == 1  # the second ran under the new rule, unasked
    assert "approval: auto (project rule `echo *`)" in term.text
    assert "said-a" in term.text and "said-b" in term.text
    rule = {"tool": "bash", "pattern": "echo *", "decision": "allow", "scope": "project"}
    assert stored(tmp_path, env) == [rule]

    later = scripted(tmp_path, {"turns": [echo("said-c"), {"text": "done"}]})
    later["TETHER_TEST_MARK"] = env["TETHER_TEST_MARK"]
    out = tether(["run", "one more"], tmp_path, later)  # no terminal to ask, no --yes
    assert out.returncode == 0, out.stderr
    assert "said-c" in out.stdout
    assert "denied" not in out.stdout
    assert "  approval: auto (project rule `echo *`)\n" in out.stdout
    assert_nothing_left(env)


def test_an_edits_folder_rule_offered_by_the_server_is_stored_for_later_runs(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "src" / f"{name}.py").write_text("X = 1\n")

    def edit(name: str) -> dict[str, Any]:
        arguments = {"path": f"src/{name}.py", "old_text": "X = 1", "new_text": "X = 2"}
        return {"toolCalls": [{"name": "edit_file", "arguments": arguments}]}

    env = scripted(tmp_path, {"turns": [edit("a"), edit("b"), {"text": "edited"}]})
    term = Terminal(["run", "edit two files"], env, tmp_path)
    term.expect("[A] always `src/a.py`  [p] always `src/*.py` in this project")
    term.send("p")
    assert term.wait(timeout=60) == 0, term.text
    assert term.text.count("[p] always") == 1  # b.py was edited under the new rule, unasked
    assert "approval: auto (project rule `src/*.py`)" in term.text
    rule = {"tool": "edit_file", "pattern": "src/*.py", "decision": "allow", "scope": "project"}
    assert stored(tmp_path, env) == [rule]

    later = scripted(tmp_path, {"turns": [edit("c"), {"text": "done"}]})
    later["TETHER_TEST_MARK"] = env["TETHER_TEST_MARK"]
    out = tether(["run", "one more"], tmp_path, later)  # no terminal to ask, no --yes
    assert out.returncode == 0, out.stderr
    assert "  approval: auto (project rule `src/*.py`)\n" in out.stdout
    assert [(tmp_path / "src" / f"{n}.py").read_text() for n in "abc"] == ["X = 2\n"] * 3
    assert_nothing_left(env)


def test_a_deny_rule_is_named_as_what_denied_the_call(tmp_path: Path) -> None:
    script = {"turns": [{"toolCalls": [{"name": "bash", "arguments": {"command": "rm x"}}]}]}
    env = scripted(tmp_path, script)
    added = tether(["rules", "add", "bash", "rm *", "--deny"], tmp_path, env)
    assert added.returncode == 0, added.stderr
    out = tether(["run", "remove x"], tmp_path, env)
    assert "approval: denied by project rule `rm *`" in out.stdout, out.stdout
    # what the model reads: the rule, not "no one allowed it"
    assert "Not done: a project rule denies it (bash: rm *)" in out.stdout, out.stdout
    assert "no one allowed it" not in out.stdout and "denied-by-default" not in out.stdout


def test_rules_kept_in_the_project_stay_out_of_git_status(tmp_path: Path) -> None:
    import subprocess

    env = environment(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    added = tether(["rules", "add", "bash", "rm *", "--deny"], tmp_path, env)
    assert added.returncode == 0, added.stderr
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert status.stdout == "", status.stdout  # Tether's own files are not the user's
    removed = tether(["rules", "remove", "rm *"], tmp_path, env)
    assert removed.returncode == 0, removed.stderr
    rules_files = [p for p in (tmp_path / ".tether").rglob("*") if "rules" in p.name]
    assert rules_files == [], rules_files  # an empty rules file is removed


FORBIDDEN = ("pygls", "lsprotocol", "openai", "anthropic", "mcp", "httpx", "tether.lsp")
"""The transport, the providers' SDKs and the MCP SDK: none is needed to list a rule."""


def imported_modules(stderr: str) -> list[str]:
    """The modules ``PYTHONPROFILEIMPORTTIME`` reports, in every interpreter that wrote
    to this stderr (a server started by the command inherits both)."""
    prefix = "import time:"
    lines = [line for line in stderr.splitlines() if line.startswith(prefix)]
    return [line.rsplit("|", 1)[1].strip() for line in lines[1:] if "|" in line]


def test_rules_run_in_one_process_that_imports_no_transport_or_sdk(tmp_path: Path) -> None:
    env = environment(tmp_path, PYTHONPROFILEIMPORTTIME="1")
    root = tmp_path / "p"
    root.mkdir()
    for argv, said in (
        (["rules"], "built-in read-only commands: on"),
        (["rules", "add", "bash", "pytest *"], "added: allow bash `pytest *` (project)"),
        (["rules", "remove", "pytest *"], "removed: allow bash `pytest *` (project)"),
    ):
        out = tether(argv, root, env, command=TETHER_EXEC)
        assert out.returncode == 0, out.stderr[-2000:]
        assert said in out.stdout
        modules = imported_modules(out.stderr)
        assert modules.count("tether.cli") == 1, f"{argv}: a second interpreter (a server)"
        heavy = sorted(
            {m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)}
        )
        assert heavy == [], f"{argv} imported {heavy[:8]}"
        assert [line for line in out.stderr.splitlines() if not line.startswith("import ")] == []
    assert stored(root, env) == []
    assert_nothing_left(env)
