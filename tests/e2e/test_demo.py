"""`tether demo`: the bundled sample project, a real scripted run, offline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_demo_runs_offline_and_streams_the_run(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env["HOME"] = str(tmp_path)  # nothing of the user's state is read or written
    out = subprocess.run(
        [sys.executable, "-m", "tether", "demo", "--keep", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for expected in ("── step 1", "── step 4", "→ list_files", "→ search", "→ read_file"):
        assert expected in text
    assert "inventory/stock.py:28:     def total_value(self):" in text  # a real search result
    assert "32\t            total += count + price" in text  # a real read of the sample
    assert "outcome done · 4 steps" in text
    assert (tmp_path / "inventory-demo" / "inventory" / "stock.py").is_file()
    assert not (tmp_path / ".local").exists()
