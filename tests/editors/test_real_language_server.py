"""A real Python language server (basedpyright, from PyPI) in Neovim beside Tether: the
diagnostic it publishes after the agent's edit is what the plugin answers to
``agent/diagnostics``, and the server puts it in the edit's tool result (what the model
reads next)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import BIN, Nvim, call, script

APP = "def greet(name):\n    return 'héllo ' + name\n"
TYPO = call("edit_file", path="src/app.py", old_text="+ name", new_text="+ nme")


def require_basedpyright() -> Path:
    """``basedpyright-langserver`` (PyPI ``basedpyright``, in the test extra)."""
    found = BIN / "basedpyright-langserver"
    if found.exists():
        return found
    on_path = shutil.which("basedpyright-langserver")
    if on_path is None:
        pytest.fail(
            "basedpyright-langserver is missing: install the test extra "
            "(`.venv/bin/pip install -e '.[test]'`, which brings basedpyright) or put it on PATH",
            pytrace=False,
        )
    return Path(on_path)


def test_a_real_language_servers_diagnostic_is_answered(nvim: Nvim) -> None:
    app = nvim.workspace / "src" / "app.py"
    app.parent.mkdir()
    app.write_text(APP)
    r = nvim.run(
        "real_lsp",
        script({"toolCalls": [TYPO]}),
        env={"BASEDPYRIGHT": str(require_basedpyright()), "WATCHDOG_MS": "80000"},
        timeout=100,
        proxy=True,
    )
    assert r["run"]["result"]["changedFiles"] == [app.as_uri()]
    line = "    return 'héllo ' + nme"
    assert r["line"] == line
    published = r["published"]
    assert published["source"] == "basedpyright" and published["lnum"] == 1
    assert published["col"] == line.encode().index(b"nme")  # vim.diagnostic: bytes
    [answer] = r["answers"]
    [item] = answer["result"]["items"]
    assert item["uri"] == app.as_uri()
    [typo] = [d for d in item["diagnostics"] if "nme" in d["message"]]
    col = {
        "utf-8": line.encode().index(b"nme"),
        "utf-16": len(line[: line.index("nme")].encode("utf-16-le")) // 2,
        "utf-32": line.index("nme"),
    }[r["encoding"]]
    assert typo["range"] == {
        "start": {"line": 1, "character": col},
        "end": {"line": 1, "character": col + 3},
    }
    assert typo["source"] == "basedpyright" and typo["severity"] == 1
    assert typo["code"] == "reportUndefinedVariable"
    assert typo["message"] == published["message"]  # e.g. '"nme" is not defined'
    # The server asked agent/diagnostics itself after the edit: the model reads the error.
    [result] = [e for e in r["run"]["events"] if e["kind"] == "tool-result"]
    assert f"src/app.py:2: error [basedpyright] {published['message']}" in result["output"]
