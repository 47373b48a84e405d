"""The plugin's set-up: `:checkhealth tether`, `:help tether` and the README's snippet."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

from tests.providers.fakes import FakeApi, Sse, openai_stream

from .conftest import PLUGIN, REPO, Nvim


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


def test_the_readmes_plain_init_lua_works_as_written_after_dev_demo(nvim: Nvim) -> None:
    """A new user who ran ``./dev demo`` (the server in the checkout's ``.venv``, not on
    PATH) pastes the README's plain ``init.lua``, with their own path and model server."""
    readme = (REPO / "README.md").read_text()
    after = readme.split("or in a plain `init.lua`:", 1)[1]
    snippet = after.split("```lua\n", 1)[1].split("```", 1)[0]
    assert "/path/to/tether" in snippet and "baseUrl" in snippet, snippet
    (nvim.workspace / "app.py").write_text("print('hi')\n")
    with FakeApi() as fake:
        fake.queue(Sse(openai_stream("Hello from the README.")))
        local = re.search(r"baseUrl = '([^']+)'", snippet)
        assert local is not None, snippet
        init = nvim.tmp_path / "init.lua"
        init.write_text(
            snippet.replace("/path/to/tether", str(REPO)).replace(local[1], fake.url + "/v1")
        )
        command, full_env, out, marker = nvim.prepare("readme_setup")
        command[command.index("-u") + 1] = str(init)
        at = command.index("--cmd")
        del command[at : at + 2]  # the snippet puts the plugin on the runtimepath itself
        full_env["PATH"] = os.pathsep.join(  # no `tether` on PATH: only the checkout's
            d for d in full_env["PATH"].split(os.pathsep) if not (Path(d) / "tether").exists()
        )
        proc = subprocess.run(
            command,
            cwd=nvim.workspace,
            env=full_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=90,
        )
        r = nvim.outcome("readme_setup", out, marker, proc.returncode, proc.stdout, proc.stderr, 0)
    assert r.get("run"), r["notes"]
    assert r["run"]["result"]["outcome"] == "done", r["run"]
    assert "Hello from the README." in r["run"]["result"]["answer"]
