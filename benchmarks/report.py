"""Results: statistics, table rows, the printed table and the JSON file."""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100), linearly interpolated between closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float]) -> float:
    """The median, NaN for no values."""
    return statistics.median(values) if values else math.nan


@dataclass
class Row:
    """One line of the table: a measured quantity, its spread and its target."""

    scenario: str
    metric: str
    unit: str
    median: float
    p95: float | None = None
    n: int = 1
    target: str = ""
    """e.g. ``≤ 1.15``; empty for numbers that are only reported."""
    limit: float | None = None
    higher_is_better: bool = False
    note: str = ""
    samples: list[float] = field(default_factory=list)

    @property
    def met(self) -> bool | None:
        """Whether the median meets the target (None: no target)."""
        if self.limit is None or math.isnan(self.median):
            return None
        return self.median >= self.limit if self.higher_is_better else self.median <= self.limit

    @classmethod
    def of(
        cls,
        scenario: str,
        metric: str,
        unit: str,
        samples: Sequence[float],
        *,
        limit: float | None = None,
        higher_is_better: bool = False,
        note: str = "",
        p95: bool = True,
    ) -> Row:
        """A row from samples; the target text is derived from ``limit``."""
        target = ""
        if limit is not None:
            target = f"{'≥' if higher_is_better else '≤'} {_number(limit)}"
        return cls(
            scenario,
            metric,
            unit,
            median(samples),
            percentile(samples, 95) if p95 and len(samples) > 1 else None,
            len(samples),
            target,
            limit,
            higher_is_better,
            note,
            [round(s, 6) for s in samples],
        )


def _number(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "–"
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def table(rows: Sequence[Row]) -> str:
    """The results as a fixed-width text table."""
    header = ("scenario", "metric", "median", "p95", "unit", "n", "target", "met", "note")
    lines = [header]
    for row in rows:
        met = {True: "yes", False: "NO", None: ""}[row.met]
        lines.append(
            (
                row.scenario,
                row.metric,
                _number(row.median),
                _number(row.p95) if row.p95 is not None else "",
                row.unit,
                str(row.n),
                row.target,
                met,
                row.note,
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    out = []
    for index, line in enumerate(lines):
        cells = [
            cell.rjust(width) if 2 <= i <= 5 else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(line, widths, strict=False))
        ]
        out.append("  ".join(cells) + "  " + line[-1])
        if index == 0:
            out.append("-" * len(out[0]))
    return "\n".join(line.rstrip() for line in out)


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        first = Path("/proc/meminfo").read_text().splitlines()[0]
        memory = f"{int(first.split()[1]) // 1024} MB"
    except (OSError, IndexError, ValueError):
        pass
    return {
        "cpu": cpu or platform.processor(),
        "cores": os.cpu_count(),
        "memory": memory,
        "system": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def write_json(path: Path, rows: Sequence[Row], meta: dict[str, Any]) -> None:
    """Write the results (with every sample) as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        **meta,
        "rows": [{**asdict(row), "met": row.met} for row in rows],
    }
    path.write_text(json.dumps(_finite(data), indent=2, ensure_ascii=False) + "\n")


def _finite(value: Any) -> Any:
    """NaN and infinities (no measurement) as null, which JSON can carry."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
