"""The benchmark harness runs end to end (``--quick``) and reports every scenario's numbers.

Benchmarks report and tests assert behaviour: nothing here looks at how fast anything was.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.runner import SCENARIOS

REPO = Path(__file__).resolve().parents[2]


# The quick run starts ~20 fresh servers (and any installed ACP peer): about 20 s on an idle
# machine, but minutes on a 2-core one shared with other test runs.
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_quick_run_reports_every_scenario(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(out.read_text())
    rows = results["rows"]
    assert {row["scenario"] for row in rows} == {module.NAME for module in SCENARIOS}
    assert not [row for row in rows if row["metric"] == "FAILED"]
    for row in rows:
        assert isinstance(row["median"], int | float) and math.isfinite(row["median"]), row
        if row["target"]:
            assert isinstance(row["met"], bool), row
    assert results["quick"] is True and results["machine"]["cores"] >= 1
    table = done.stdout
    for module in SCENARIOS:
        assert module.NAME in table
