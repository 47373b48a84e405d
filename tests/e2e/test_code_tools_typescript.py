"""The code tools headless on a two-file TypeScript project: ``tether run`` with the scripted
model, answered by typescript-language-server (npm, installed on first use into a cache:
``typescript_server.py``) found on ``PATH``.

typescript-language-server runs the project's code (its ``typescript`` package, tsserver
plugins), so Tether starts it by default only in a project the user trusts: these tests list
the project in ``trustedProjects`` in the user's own config, as a user would, and one shows a
clone of the same project that is not trusted starting no typescript-language-server at all.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from shlex import quote
from typing import Any

from tether.client.approver import ASKED

from .cli import tether
from .test_cli_terminal import Terminal, scripted
from .test_code_tools import assert_no_process_left, call, plain, results, user_config
from .typescript_server import installed_bin

LIB = """/** Say hello to someone. */
export function greet(name: string): string {
  return `hello ${name}`;
}

export class Greeter {
  welcome(): string {
    return greet("world");
  }
}
"""
APP = """import { Greeter, greet } from "./lib";

console.log(greet("you"));
console.log(new Greeter().welcome());
"""
TSCONFIG = {
    "compilerOptions": {"strict": True, "target": "es2020", "module": "commonjs"},
    "include": ["*.ts"],
}
SERVER = "typescript-language-server"


def project(tmp_path: Path, name: str = "proj") -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "lib.ts").write_text(LIB)
    (root / "app.ts").write_text(APP)
    (root / "tsconfig.json").write_text(json.dumps(TSCONFIG, indent=2) + "\n")
    return root


def trust(tmp_path: Path, root: Path, extra: str = "") -> None:
    """``root`` in ``trustedProjects`` of the user's own config, as a user trusts a project."""
    user_config(tmp_path, f"trustedProjects = [{json.dumps(str(root))}]\n{extra}")


def server_on_path(tmp_path: Path) -> tuple[str, Path]:
    """A ``PATH`` on which typescript-language-server is found (outside the workspace), and the
    file it marks when started: the cached server behind a wrapper of the same name."""
    mark = tmp_path / "typescript-language-server-started"
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    wrapper = folder / SERVER
    real = installed_bin() / SERVER
    wrapper.write_text(
        f'#!/bin/sh\necho "$$" >> {quote(str(mark))}\nexec {quote(str(real))} "$@"\n'
    )
    wrapper.chmod(0o755)
    # basedpyright (next to the tests' Python) too: the code tools are offered either way,
    # so a call on a TypeScript file says why its server is not started
    venv_bin = str(Path(sys.executable).parent)
    return os.pathsep.join([str(folder), venv_bin, os.environ.get("PATH", "")]), mark


def env_for(tmp_path: Path, calls: list[dict[str, Any]]) -> tuple[dict[str, str], Path]:
    """A scripted run making ``calls`` in one turn, typescript-language-server on ``PATH``."""
    env = scripted(tmp_path, {"turns": [{"toolCalls": calls}, {"text": "done"}]})
    env["PATH"], mark = server_on_path(tmp_path)
    return env, mark


def run(root: Path, env: dict[str, str]) -> list[tuple[bool, str]]:
    done = tether(["run", "look at the code", "--json"], root, env, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert_no_process_left(env)
    return results(done.stdout)


def test_definition_references_hover_and_symbols_by_typescript_language_server(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    trust(tmp_path, root)
    env, mark = env_for(
        tmp_path,
        [
            # asked first, as the project loads: the answer is the whole project's
            call("definition", path="app.ts", line=3, symbol="greet"),
            call("references", path="app.ts", line=3, symbol="greet"),
            call("hover", path="app.ts", line=3, symbol="greet"),
            call("symbols", path="lib.ts"),
            call("symbols", query="Greet"),
            call("definition", path="app.ts", line=4, symbol="Greeter().welcome"),
        ],
    )
    answers = run(root, env)
    assert all(ok for ok, _ in answers), answers
    definition, references, hover, outline, found, method = (out for _, out in answers)
    assert definition == (
        f"Definition of greet (answered by {SERVER}):\n"
        "lib.ts:2:17: export function greet(name: string): string {"
    )
    assert sorted(references.splitlines()[1:]) == [
        'app.ts:1:19: import { Greeter, greet } from "./lib";',
        'app.ts:3:13: console.log(greet("you"));',
        "lib.ts:2:17: export function greet(name: string): string {",
        'lib.ts:8:12: return greet("world");',
    ], references
    assert references.splitlines()[0] == f"4 references to greet (answered by {SERVER}):"
    assert hover.startswith(f"greet (answered by {SERVER}):"), hover
    assert "greet(name: string): string" in hover and "Say hello to someone." in hover
    assert outline.splitlines() == [
        f"Symbols of lib.ts (answered by {SERVER}):",
        "function greet — lib.ts:2:17",
        "class Greeter — lib.ts:6:14",
        "  method welcome in Greeter — lib.ts:7:3",
    ]
    assert found.startswith(f"Workspace symbols matching 'Greet' (answered by {SERVER}):")
    assert "function greet — lib.ts:2:" in found and "class Greeter — lib.ts:6:" in found
    assert method.splitlines() == [
        f"Definition of Greeter().welcome (answered by {SERVER}):",
        "lib.ts:7:3: welcome(): string {",
    ]
    assert len(mark.read_text().split()) == 1  # one server for the whole run


def test_a_two_file_rename_is_one_approval_landing_in_both_files(tmp_path: Path) -> None:
    root = project(tmp_path)
    trust(tmp_path, root)
    env, _ = env_for(
        tmp_path, [call("rename", path="app.ts", line=3, symbol="greet", new_name="salute")]
    )
    term = Terminal(["run", "rename greet"], env, root)
    term.expect(ASKED.strip(), timeout=120)
    shown = plain(term.text)
    assert f"Rename greet → salute in 2 files (answered by {SERVER})" in shown, shown
    assert "+++ b/app.ts" in shown and "+++ b/lib.ts" in shown, shown
    assert '+console.log(salute("you"));' in shown
    assert "+export function salute(name: string): string {" in shown
    term.send("y")
    assert term.wait(timeout=120) == 0, term.text
    assert term.text.count(ASKED.strip()) == 1, term.text  # one approval for both files
    # every occurrence, the import's too: no "greet as salute" alias
    assert (root / "app.ts").read_text() == APP.replace("greet", "salute")
    assert (root / "lib.ts").read_text() == LIB.replace("greet(", "salute(")
    assert "Renamed greet to salute: 4 occurrences in 2 files" in term.text
    assert_no_process_left(env)
    run_id = re.findall(r"run (r-[0-9a-f]+)", plain(term.text))[-1]
    undone = tether(["undo", run_id], root, env, timeout=60)  # the rename, as one step
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (root / "app.ts").read_text() == APP and (root / "lib.ts").read_text() == LIB


def test_a_denied_rename_lands_nowhere(tmp_path: Path) -> None:
    root = project(tmp_path)
    trust(tmp_path, root)
    env, mark = env_for(
        tmp_path, [call("rename", path="lib.ts", line=2, symbol="greet", new_name="salute")]
    )
    term = Terminal(["run", "rename greet"], env, root)
    term.expect(ASKED.strip(), timeout=120)
    shown = plain(term.text)
    assert f"Rename greet → salute in 2 files (answered by {SERVER})" in shown, shown
    assert '+import { Greeter, salute } from "./lib";' in shown, shown  # no "salute as greet"
    term.send("n")
    term.expect("why? (Enter skips)")
    term.send("\r")
    assert term.wait(timeout=120) == 0, term.text
    assert "denied" in term.text
    assert (root / "app.ts").read_text() == APP and (root / "lib.ts").read_text() == LIB
    assert mark.exists()
    assert_no_process_left(env)


def test_an_untrusted_clone_of_the_project_does_not_start_typescript_language_server(
    tmp_path: Path,
) -> None:
    trusted = project(tmp_path, "proj")
    clone = project(tmp_path, "clone")
    (clone / ".tether").mkdir()  # nor can the clone name the server itself
    (clone / ".tether" / "config.toml").write_text(
        f'[languageServers]\ntypescript = [{json.dumps(SERVER)}, "--stdio"]\n'
    )
    trust(tmp_path, trusted)
    env, mark = env_for(
        tmp_path,
        [
            call("definition", path="app.ts", line=3, symbol="greet"),
            call("rename", path="lib.ts", line=2, symbol="greet", new_name="salute"),
        ],
    )
    (d_ok, definition), (r_ok, rename) = run(clone, env)
    assert not d_ok and not r_ok
    assert definition.startswith(
        f"app.ts: {SERVER} runs the project's own code, so it is started only in a project you "
        "trust (or name it in languageServers.typescript in your own settings)"
    ), definition
    assert rename.startswith(f"lib.ts: {SERVER} runs the project's own code"), rename
    assert not mark.exists()  # never started
    assert (clone / "app.ts").read_text() == APP and (clone / "lib.ts").read_text() == LIB
    listed = tether(["config"], clone, env, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert f"not started here: {SERVER}" in listed.stdout, listed.stdout
    assert not mark.exists()


def test_a_javascript_file_is_answered_and_no_typings_are_fetched(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "main.js").write_text(
        'const _ = require("lodash");\n\nfunction twice(n) {\n  return _.multiply(n, 2);\n}\n'
    )
    trust(tmp_path, root)
    env, _ = env_for(
        tmp_path,
        [
            call("hover", path="main.js", line=3, symbol="twice"),
            call("symbols", path="main.js"),
            call("references", path="main.js", line=3, symbol="twice"),
        ],
    )
    (h_ok, hover), (s_ok, outline), (r_ok, references) = run(root, env)
    assert h_ok and s_ok and r_ok, (hover, outline, references)
    assert hover.startswith(f"twice (answered by {SERVER}):") and "function twice(n" in hover
    assert "function twice — main.js:3:10" in outline
    assert references.startswith(f"1 reference to twice (answered by {SERVER})"), references
    # tsserver's automatic typing acquisition would run npm to fetch @types/lodash into the
    # user's cache because a tool looked at the code: it is turned off
    assert not (Path(env["HOME"]) / ".cache" / "typescript").exists()
