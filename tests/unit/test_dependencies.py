"""Every package the server imports is a declared dependency (none comes in by accident)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "server" / "tether", ROOT / "protocol" / "tether_protocol"]
OWN = {"tether", "tether_protocol"}


def imported_packages(source: str) -> set[str]:
    """The top-level names of the absolute imports in ``source``."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {
        re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].lower() for spec in project["dependencies"]
    }


def test_every_third_party_import_is_declared() -> None:
    imported: dict[str, set[str]] = {}
    for folder in SOURCES:
        for path in folder.rglob("*.py"):
            if path.is_relative_to(folder / "demo" / "workspace"):
                continue  # the demo's sample project is data, not server code
            for name in imported_packages(path.read_text(encoding="utf-8")):
                imported.setdefault(name, set()).add(path.name)
    third_party = {n for n in imported if n not in sys.stdlib_module_names and n not in OWN}
    assert {"pygls", "pydantic"} <= third_party  # the scan really read the sources
    distributions = importlib.metadata.packages_distributions()
    undeclared = {
        name: sorted(imported[name])
        for name in third_party
        if not {d.lower() for d in distributions.get(name, [name])} & declared()
    }
    assert undeclared == {}, f"imported but not in pyproject's dependencies: {undeclared}"
