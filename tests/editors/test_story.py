"""The issue's story in a real Neovim: `:Tether fix the failing test` on the demo project."""

from __future__ import annotations

import json
import subprocess
import sys

from .conftest import DEMO, Nvim


def test_fix_the_failing_test_approving_in_the_float(nvim: Nvim) -> None:
    root = nvim.copy_demo()
    demo = json.loads((DEMO / "script.json").read_text())
    demo["delaySeconds"] = 0
    r = nvim.run("story", demo)
    run = r["run"]
    assert run["result"]["outcome"] == "done", run
    assert run["result"]["changedFiles"] == [(root / "inventory" / "stock.py").as_uri()]
    # bash, the edit (stock.py is not on screen: the diff in the float), bash again
    assert [(s["tool"], s["view"]) for s in r["shown"]] == [
        ("bash", "float"),
        ("edit_file", "float"),
        ("bash", "float"),
    ]
    assert "-            total += count + price" in r["shown"][1]["lines"]
    assert "+            total += count * price" in r["shown"][1]["lines"]
    assert r["floats_after"] == 0
    fixed = "            total += count * price"
    assert fixed in r["stock_buffer"] and r["stock_modified"] is False
    assert r["stock_disk"] == r["stock_buffer"]
    results = [e for e in run["events"] if e["kind"] == "tool-result" and e["tool"] == "bash"]
    assert [e["output"].splitlines()[0] for e in results] == ["exit code: 1", "exit code: 0"]
    transcript = r["transcript"]
    assert transcript[0] == "▶ fix the failing test" and transcript[-1].startswith(
        "■ done · 7 steps"
    )
    assert transcript.count("  approval: allow") == 3
    assert '✗ bash {"command": "python3 -m unittest"}' in transcript  # the failing run
    assert any(line.startswith('✓ edit_file {"new_text": ') for line in transcript)
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert tests.returncode == 0, tests.stderr
