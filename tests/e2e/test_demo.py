"""`tether demo` and `tether run`: the headless client on a real server, offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tether.demo import SAMPLE

from .cli import cli_env, tether


def test_demo_finds_fixes_and_tests_the_bug(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    del env["TETHER_STATE_DIR"]  # the demo's own choice, checked below: nothing in HOME
    out = tether(["demo", "--keep", str(tmp_path)], tmp_path, env, timeout=90)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for expected in ("── step 1", "── step 7", "→ list_files", "→ search", "→ read_file"):
        assert expected in text
    assert "AssertionError: 7.75 != 4.5" in text  # the test really failed first
    assert "inventory/stock.py:28:     def total_value(self):" in text
    assert "-            total += count + price\n+            total += count * price" in text
    assert text.count("→ allowed (auto-approved for the demo") == 3
    assert "✓ bash: exit code: 0" in text and "\n  OK" in text  # and passes after the fix
    assert "outcome done · 7 steps" in text
    fixed = (tmp_path / "inventory-demo" / "inventory" / "stock.py").read_text()
    assert "total += count * price" in fixed
    assert (SAMPLE / "inventory" / "stock.py").read_text().count("count + price") == 1
    assert not (tmp_path / ".local").exists()


def test_tether_run_json_with_yes(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    script = {
        "turns": [
            {
                "toolCalls": [
                    {
                        "name": "edit_file",
                        "arguments": {"path": "a.txt", "old_text": "one", "new_text": "two"},
                    }
                ]
            },
            {"text": "changed"},
        ]
    }
    env = cli_env(tmp_path, TETHER_PROVIDER="scripted", TETHER_SCRIPT=json.dumps(script))
    out = tether(["run", "change it", "--cwd", str(project), "--yes", "--json"], tmp_path, env)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert lines[0]["kind"] == "run-started"
    assert lines[-1]["result"]["outcome"] == "done"
    assert lines[-1]["result"]["changedFiles"] == [(project / "a.txt").resolve().as_uri()]
    assert (project / "a.txt").read_text() == "two\n"
    assert "Edit a.txt" in out.stderr  # the approval was shown


def test_tether_run_without_yes_and_no_terminal_denies(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    call = {"name": "bash", "arguments": {"command": "touch ran.txt"}}
    script = json.dumps({"turns": [{"toolCalls": [call]}]})
    env = cli_env(tmp_path, TETHER_PROVIDER="scripted", TETHER_SCRIPT=script)
    out = tether(["run", "go", "--cwd", str(project)], tmp_path, env)
    assert out.returncode == 0, out.stderr
    assert "denied (no terminal to ask" in out.stdout
    assert not (project / "ran.txt").exists()


def test_tether_run_without_a_provider_says_how_to_configure_one(tmp_path: Path) -> None:
    out = tether(["run", "hi", "--cwd", str(tmp_path)], tmp_path, cli_env(tmp_path))
    assert out.returncode == 2
    assert "provider" in out.stderr and "TETHER_PROVIDER" in out.stderr


async def test_a_client_that_can_neither_approve_nor_show_messages_gets_deny(
    tmp_path: Path,
) -> None:
    from tether.client.headless import connect

    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    calls = [
        {"name": "write_file", "arguments": {"path": "a.txt", "content": "two\n"}},
        {"name": "bash", "arguments": {"command": "touch ran.txt"}},
    ]
    options = {
        "provider": "scripted",
        "script": {"turns": [{"toolCalls": calls}]},
        "stateDir": str(tmp_path / "state"),
    }
    events: list[Any] = []
    async with connect(project, options) as client:  # no approver: no agent/approve either
        client.on_event = events.append
        result = await client.run("go")
    assert result["outcome"] == "done" and result["changedFiles"] == []
    assert (project / "a.txt").read_text() == "one\n" and not (project / "ran.txt").exists()
    assert [e.decision for e in events if e.kind == "approval"] == ["denied-by-default"] * 2
