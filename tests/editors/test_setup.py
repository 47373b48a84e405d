"""The plugin's set-up: `:checkhealth tether` and `:help tether`."""

from __future__ import annotations

import json
import shutil

from .conftest import PLUGIN, Nvim


def test_checkhealth_reports_neovim_the_server_and_its_version(nvim: Nvim) -> None:
    (nvim.workspace / "notes.txt").write_text("hi\n")
    r = nvim.run("health")
    report = "\n".join(r["report"])
    assert "tether:" in report
    assert "- ✅ OK Neovim 0.11." in report
    assert '- ✅ OK require("tether").setup() was called' in report
    assert "tether 0.1.0" in report and " serve`: " in report
    assert "- ✅ OK provider: scripted" in report
    assert f"running for {nvim.workspace} (protocol 2; providers: " in report
    assert "ERROR" not in report and "WARNING" not in report


TAGS = {
    "tether": "tether.txt",
    "tether-setup": "tether.txt",
    ":Tether": "tether.txt",
    ":TetherCancel": "tether.txt",
    ":TetherLog": "tether.txt",
    ":TetherSessions": "tether.txt",
    "tether-approvals": "tether.txt",
    "tether-transcript": "tether.txt",
    "tether-progress": "tether.txt",
    "tether-health": "tether.txt",
    "tether-config": "tether.txt",
    "tether-keymaps": "tether.txt",
    "tether-api": "tether.txt",
    "tether.configure()": "tether.txt",
    ":TetherApprove": "tether.txt",
    ":TetherAllow": "tether.txt",
    ":TetherDeny": "tether.txt",
    "tether-saving": "tether.txt",
    ":TetherRules": "tether.txt",
    ":TetherAllowRule": "tether.txt",
    "tether-rules": "tether.txt",
    "tether-diagnostics": "tether.txt",
    "tether-session": "tether.txt",
    "tether-context": "tether.txt",
    ":TetherChat": "tether.txt",
    "tether-chat": "tether.txt",
}


def test_help_tags(nvim: Nvim) -> None:
    root = nvim.tmp_path / "plugin"
    shutil.copytree(PLUGIN / "doc", root / "doc")
    r = nvim.run("help", env={"DOC_ROOT": str(root), "TAGS": json.dumps(list(TAGS))})
    tags = {line.split("\t")[0]: line.split("\t")[1] for line in r["tags"]}
    for tag, file in TAGS.items():
        assert tags.get(tag) == file, tag
    assert [o["file"] for o in r["opened"]] == ["tether.txt"] * len(TAGS)
    for opened in r["opened"]:
        assert f"*{opened['tag']}*" in opened["line"], opened
