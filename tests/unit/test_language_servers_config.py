"""``languageServers``: merged by language, kept from a trusted project only, and the servers
looked for on ``PATH`` (absolute entries outside the workspace; those that run the project's
code only in a trusted project)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.config.assemble import Layer, assemble
from tether.config.layers import ConfigError, merge, parse_settings
from tether.langserver.catalog import commands, language_of
from tether_protocol import TetherSettings


def test_layers_merge_by_language_and_an_empty_command_turns_one_off() -> None:
    user = TetherSettings(language_servers={"python": ["pyright-langserver"], "go": ["gopls"]})
    editor = TetherSettings(language_servers={"python": []})
    merged = merge(user, editor)
    assert merged.language_servers == {"python": [], "go": ["gopls"]}


@pytest.mark.parametrize(
    "value",
    [{"Python!": ["x"]}, {"python": [""]}, {"python": "pyright"}, {"python": [1]}],
)
def test_a_bad_value_names_the_setting(value: object) -> None:
    with pytest.raises(ConfigError, match="languageServers"):
        parse_settings({"languageServers": value}, "initializationOptions")


def _home(tmp_path: Path, trusted: list[Path]) -> dict[str, str]:
    config = tmp_path / "xdg" / "tether"
    config.mkdir(parents=True)
    listed = ", ".join(f'"{p}"' for p in trusted)
    (config / "config.toml").write_text(f"trustedProjects = [{listed}]\n")
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def _project(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    (root / ".tether").mkdir(parents=True)
    (root / ".tether" / "config.toml").write_text('[languageServers]\npython = ["./evil"]\n')
    return root


def test_only_a_trusted_project_names_a_language_server(tmp_path: Path) -> None:
    clone, mine = _project(tmp_path, "clone"), _project(tmp_path, "mine")
    environ = _home(tmp_path, [mine])
    untrusted = assemble(clone, environ)
    assert untrusted.config.language_servers == {} and not untrusted.trusted_project
    assert "languageServers" in (untrusted.warning() or "")
    trusted = assemble(mine, environ, Layer("flags", TetherSettings()))
    assert trusted.config.language_servers == {"python": ("./evil",)}
    assert trusted.trusted_project


def _program(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    return program


def test_defaults_come_from_absolute_path_entries_outside_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    _program(workspace / ".venv" / "bin", "basedpyright-langserver")  # the project's own
    _program(workspace / "node_modules" / ".bin", "typescript-language-server")
    real = _program(tmp_path / "bin", "pyright-langserver")
    gopls = _program(tmp_path / "bin", "gopls")
    path = os.pathsep.join(
        [str(workspace / ".venv" / "bin"), "node_modules/.bin", str(tmp_path / "bin")]
    )
    found = commands({}, {"PATH": path}, workspace, trusted=False)
    assert found["python"].argv == (str(real), "--stdio")
    assert not found["python"].configured
    assert "typescript" not in found and "go" not in found  # runs the project's code
    trusted = commands({}, {"PATH": path}, workspace, trusted=True)
    assert trusted["go"].argv == (str(gopls),)
    off = commands({"python": ()}, {"PATH": path}, workspace, trusted=True)
    assert "python" not in off
    named = commands({"rust": ("ra", "--x")}, {"PATH": ""}, workspace, trusted=False)
    assert named["rust"].argv == ("ra", "--x") and named["rust"].configured


def test_a_file_s_language_by_its_suffix() -> None:
    assert language_of(Path("a/b.PY")) == "python"
    assert language_of(Path("x.tsx")) == "typescript"
    assert language_of(Path("notes.txt")) is None
