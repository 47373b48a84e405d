"""The plugin's set-up: `:checkhealth tether` and `:help tether`."""

from __future__ import annotations

import json
import os
import shutil
import stat

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
    # The doc/tags shipped is what :helptags makes of doc/ now (kept up to date).
    assert (PLUGIN / "doc" / "tags").read_text().splitlines() == r["tags"]
    tags = {line.split("\t")[0]: line.split("\t")[1] for line in r["tags"]}
    for tag, file in TAGS.items():
        assert tags.get(tag) == file, tag
    assert [o["file"] for o in r["opened"]] == ["tether.txt"] * len(TAGS)
    for opened in r["opened"]:
        assert f"*{opened['tag']}*" in opened["line"], opened


def test_help_works_from_a_read_only_install(nvim: Nvim) -> None:
    root = nvim.tmp_path / "installed"
    shutil.copytree(PLUGIN, root)
    for folder, _, files in os.walk(root):  # as a system package or a Nix store leaves it
        for name in [*files, "."]:
            path = os.path.join(folder, name)
            os.chmod(path, os.stat(path).st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        r = nvim.run("help_installed", env={"DOC_ROOT": str(root), "TAGS": json.dumps(list(TAGS))})
    finally:
        for folder, _, _ in os.walk(root):
            os.chmod(folder, 0o755)
    for opened in r["opened"]:
        assert opened["ok"] is True, opened
        assert opened["path"] == str(root / "doc" / "tether.txt"), opened
