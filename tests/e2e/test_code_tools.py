"""The code tools headless: ``tether run`` with the scripted model, answered by basedpyright
(PyPI, found on ``PATH``) on a two-file Python project, or by a server that misbehaves on
purpose (``fake_langserver.py``). Every language server Tether started ends with the run."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from tether.client.approver import ASKED

from .cli import TETHER, tether
from .test_cli_terminal import Terminal, scripted

VENV_BIN = str(Path(sys.executable).parent)
"""Where ``pip install basedpyright`` put ``basedpyright-langserver``."""
FAKE_NAME = Path(sys.executable).name
FAKE = Path(__file__).with_name("fake_langserver.py")

LIB = '''"""A tiny library."""


def greet(name: str) -> str:
    """Say hello to someone."""
    return f"hello {name}"


class Greeter:
    def welcome(self) -> str:
        return greet("world")
'''
APP = """from lib import Greeter, greet

print(greet("you"))
print(Greeter().welcome())
"""


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "lib.py").write_text(LIB)
    (root / "app.py").write_text(APP)
    (root / "notes.txt").write_text("greet is the function\n")
    return root


def plain(text: str) -> str:
    """The terminal's text without its colours."""
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def env_for(
    tmp_path: Path, calls: list[dict[str, Any]], *, path: str | None = None
) -> dict[str, str]:
    """A scripted run making ``calls`` in one turn, with basedpyright on ``PATH`` (unless
    ``path`` is given)."""
    env = scripted(tmp_path, {"turns": [{"toolCalls": calls}, {"text": "done"}]})
    env["PATH"] = path if path is not None else f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def user_config(tmp_path: Path, text: str) -> None:
    folder = tmp_path / ".config" / "tether"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


def results(out: str) -> list[tuple[bool, str]]:
    """Each tool result of a ``--json`` run: ok and what the model read."""
    found = []
    for line in out.splitlines():
        if line.startswith("{") and '"tool-result"' in line:
            event = json.loads(line)
            found.append((event["ok"], event["output"]))
    return found


def home_of(env: dict[str, str]) -> str:
    return env["HOME"]


def processes_with_home(home: str) -> list[str]:
    """Live processes whose environment has ``HOME=home`` (the CLI, its server, and the
    language servers, which get ``HOME`` from the allow-listed environment)."""
    mark = f"HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if mark in (entry / "environ").read_bytes().split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return found


def assert_no_process_left(env: dict[str, str]) -> None:
    left = processes_with_home(home_of(env))
    assert left == [], f"processes outlived the run: {left}"


def run(root: Path, env: dict[str, str]) -> list[tuple[bool, str]]:
    done = tether(["run", "look at the code", "--json"], root, env, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert_no_process_left(env)
    return results(done.stdout)


def test_definition_references_hover_and_symbols_by_basedpyright(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = env_for(
        tmp_path,
        [
            call("definition", path="app.py", line=3, symbol="greet"),
            call("references", path="app.py", line=3, symbol="greet"),
            call("hover", path="app.py", line=3, symbol="greet"),
            call("symbols", path="lib.py"),
            call("symbols", query="Greet"),
            call("definition", path="app.py", line=4, symbol="Greeter().welcome"),
        ],
    )
    (
        (d_ok, definition),
        (r_ok, references),
        (h_ok, hover),
        (s_ok, outline),
        (w_ok, found),
        (
            m_ok,
            method,
        ),
    ) = run(root, env)
    assert d_ok and r_ok and h_ok and s_ok and w_ok and m_ok
    assert definition == (
        "Definition of greet (answered by basedpyright-langserver):\n"
        "lib.py:4:5: def greet(name: str) -> str:"
    )
    assert references.splitlines() == [
        "4 references to greet (answered by basedpyright-langserver):",
        "app.py:1:26: from lib import Greeter, greet",
        'app.py:3:7: print(greet("you"))',
        "lib.py:4:5: def greet(name: str) -> str:",
        'lib.py:11:16: return greet("world")',
    ]
    assert "def greet(name: str) -> str" in hover and "Say hello to someone." in hover
    assert "function greet — lib.py:4:5" in outline
    assert "  method welcome in Greeter — lib.py:10:9" in outline
    assert "function greet — lib.py:4:5" in found and "class Greeter — lib.py:9:7" in found
    assert method.splitlines()[1] == "lib.py:10:9: def welcome(self) -> str:"


def test_bad_locations_are_clear_errors_and_the_server_keeps_serving(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = env_for(
        tmp_path,
        [
            call("definition", path="app.py", line=3, symbol="nope"),
            call("definition", path="app.py", line=40, symbol="greet"),
            call("definition", path="../outside.py", line=1, symbol="x"),
            call("hover", path="notes.txt", line=1, symbol="greet"),
            call("definition", path="app.py", line=3, symbol="greet"),
        ],
    )
    (tmp_path / "outside.py").write_text("x = 1\n")
    (n_ok, not_there), (l_ok, out_of_range), (o_ok, outside), (t_ok, text_file), (ok, good) = run(
        root, env
    )
    assert not (n_ok or l_ok or o_ok or t_ok) and ok
    assert not_there == (
        "'nope' is not on line 3 of app.py; that line reads 'print(greet(\"you\"))' and has "
        "print, greet, you. Give the line where the name appears (read_file or search shows "
        "line numbers)."
    )
    assert out_of_range == "line 40 is out of range: app.py has 4 lines (lines count from 1)"
    assert "outside the workspace" in outside
    assert text_file.startswith("notes.txt: no language server here knows files like it")
    assert "languages with a server: python" in text_file
    assert good.startswith("Definition of greet (answered by basedpyright-langserver)")


def test_answers_outside_the_workspace_are_named_never_read(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = env_for(
        tmp_path,
        [
            call("definition", path="app.py", line=3, symbol="print"),
            call("rename", path="app.py", line=3, symbol="print", new_name="show"),
        ],
    )
    (ok, builtin), (renamed, refused) = run(root, env)
    assert ok and not renamed
    place = builtin.splitlines()[1]
    assert place.endswith("(outside the workspace)") and "builtins.pyi:" in place, builtin
    assert "def print" not in builtin  # its text is not read
    assert refused.startswith("basedpyright-langserver proposes no change for renaming print")
    assert (root / "app.py").read_text() == APP


def test_a_two_file_rename_is_one_approval_landing_in_both_files(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = env_for(
        tmp_path, [call("rename", path="app.py", line=3, symbol="greet", new_name="salute")]
    )
    term = Terminal(["run", "rename greet"], env, root)
    term.expect(ASKED.strip(), timeout=120)
    shown = plain(term.text)
    assert "Rename greet → salute in 2 files (answered by basedpyright-langserver)" in shown
    assert "+++ b/app.py" in shown and "+++ b/lib.py" in shown, shown
    assert '+print(salute("you"))' in shown and "+def salute(name: str) -> str:" in shown
    term.send("y")
    assert term.wait(timeout=120) == 0, term.text
    assert term.text.count(ASKED.strip()) == 1, term.text  # one approval for both files
    assert (root / "app.py").read_text() == APP.replace("greet", "salute")
    assert (root / "lib.py").read_text() == LIB.replace("greet(", "salute(")
    assert "Renamed greet to salute: 4 occurrences in 2 files" in term.text
    assert_no_process_left(env)
    run_id = re.findall(r"run (r-[0-9a-f]+)", plain(term.text))[-1]
    undone = tether(["undo", run_id], root, env, timeout=60)  # the rename, as one step
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (root / "app.py").read_text() == APP and (root / "lib.py").read_text() == LIB


def test_auto_approve_names_the_rename_tool(tmp_path: Path) -> None:
    root = project(tmp_path)
    user_config(tmp_path, 'autoApprove = ["rename"]\n')
    env = env_for(
        tmp_path, [call("rename", path="lib.py", line=4, symbol="greet", new_name="salute")]
    )
    ((ok, output),) = run(root, env)
    assert ok and output.startswith("Renamed greet to salute: 4 occurrences in 2 files"), output
    assert (root / "app.py").read_text() == APP.replace("greet", "salute")


def test_a_denied_rename_lands_nowhere(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = env_for(
        tmp_path, [call("rename", path="app.py", line=3, symbol="greet", new_name="salute")]
    )
    term = Terminal(["run", "rename greet"], env, root)
    term.expect(ASKED.strip(), timeout=120)
    term.send("n")
    term.expect("why? (Enter skips)")
    term.send("\r")
    assert term.wait(timeout=120) == 0, term.text
    assert "denied" in term.text
    assert (root / "app.py").read_text() == APP and (root / "lib.py").read_text() == LIB
    assert_no_process_left(env)


def test_a_language_server_planted_in_the_workspace_is_never_started(tmp_path: Path) -> None:
    root = project(tmp_path)
    planted = tmp_path / "planted-ran"
    for folder in (root / ".venv" / "bin", root / "node_modules" / ".bin"):
        folder.mkdir(parents=True)
        fake = folder / "basedpyright-langserver"
        fake.write_text(f"#!/bin/sh\necho planted > {planted}\n")
        fake.chmod(0o755)
    path = os.pathsep.join(
        [str(root / ".venv" / "bin"), "node_modules/.bin", VENV_BIN, os.environ.get("PATH", "")]
    )
    env = env_for(tmp_path, [call("definition", path="app.py", line=3, symbol="greet")], path=path)
    env["OPENAI_API_KEY"] = "sk-secret"
    ((ok, output),) = run(root, env)
    assert ok and output.startswith("Definition of greet (answered by basedpyright-langserver)")
    assert not planted.exists()


def fake_server(tmp_path: Path, mode: str, *uris: str, timeout: float | None = None) -> Path:
    """The user's config naming the misbehaving server for Python; the file it marks."""
    mark = tmp_path / f"started-{mode}"
    command = json.dumps([sys.executable, str(FAKE), mode, *uris, "--mark", str(mark)])
    extra = f"languageServerTimeoutSeconds = {timeout}\n" if timeout else ""
    user_config(tmp_path, f"{extra}[languageServers]\npython = {command}\n")
    return mark


def test_a_rename_reaching_outside_the_workspace_or_a_sensitive_file_is_refused(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    (root / ".vscode").mkdir()
    (root / ".vscode" / "tasks.py").write_text("greet = 1\n")
    outside = tmp_path / "outside.py"
    outside.write_text("greet = 1\n")
    app = (root / "app.py").as_uri()
    fake_server(tmp_path, "rename", app, outside.as_uri())
    first = call("rename", path="app.py", line=3, symbol="greet", new_name="salute")
    env = env_for(tmp_path, [first])
    ((ok, refused_outside),) = run(root, env)
    assert not ok
    assert refused_outside == (
        f"the rename would change {outside}, outside the workspace; nothing was changed"
    )
    fake_server(tmp_path, "rename", app, (root / ".vscode" / "tasks.py").as_uri())
    ((ok, refused_sensitive),) = run(root, env)
    assert not ok
    assert refused_sensitive.startswith("the rename would change .vscode/tasks.py (editor settings")
    assert (root / "app.py").read_text() == APP and outside.read_text() == "greet = 1\n"
    assert (root / ".vscode" / "tasks.py").read_text() == "greet = 1\n"


def test_a_server_that_crashes_hangs_or_answers_garbage_is_a_tool_error(tmp_path: Path) -> None:
    root = project(tmp_path)
    ask = call("definition", path="app.py", line=3, symbol="greet")
    expected = {
        "crash": f"the language server {FAKE_NAME} failed: it exited with code 3 (boom)",
        "hang": f"the language server {FAKE_NAME} failed: it did not answer "
        "textDocument/definition within 2 s",
        "garbage": f"the language server {FAKE_NAME} failed: it sent a message that is not LSP",
        "flood": f"the language server {FAKE_NAME} failed: it sent a message of 1073741824 bytes",
    }
    for mode, message in expected.items():
        mark = fake_server(tmp_path, mode, (root / "lib.py").as_uri(), timeout=2)
        env = env_for(tmp_path, [ask, ask]) | {"OPENAI_API_KEY": "sk-secret"}
        first, second = run(root, env)
        assert not first[0] and first[1].startswith(message), (mode, first)
        assert not second[0] and second[1].startswith(message), (mode, second)  # a new one
        started = json.loads(mark.read_text())
        assert started["cwd"] == home_of(env)  # a neutral folder, never the workspace
        assert "TETHER_TEST_MARK" not in started["env"] and "OPENAI_API_KEY" not in started["env"]
        mark.unlink()


def test_ctrl_c_during_a_hung_language_server_call_ends_it(tmp_path: Path) -> None:
    root = project(tmp_path)
    mark = fake_server(tmp_path, "hang", (root / "lib.py").as_uri(), timeout=300)
    env = env_for(tmp_path, [call("definition", path="app.py", line=3, symbol="greet")])
    term = Terminal(["run", "go"], env, root)
    term.expect("definition", timeout=120)  # the call is under way
    deadline = time.monotonic() + 60
    while not mark.exists():  # its server started (and is asked, or about to be)
        assert time.monotonic() < deadline, term.text
        term._read(0.2)
    term.send("\x03")
    assert term.wait(timeout=60) == 130, term.text
    assert "Traceback" not in term.text
    assert_no_process_left(env)
    assert not Path(f"/proc/{json.loads(mark.read_text())['pid']}").exists()


def test_tether_config_lists_the_language_servers(tmp_path: Path) -> None:
    root = project(tmp_path)
    user_config(tmp_path, '[languageServers]\nc = []\nrust = ["ra-multiplex", "client"]\n')
    env = env_for(tmp_path, [])
    done = tether(["config"], root, env, timeout=60)
    assert done.returncode == 0, done.stderr
    listed = done.stdout[done.stdout.index("language servers:") :].splitlines()
    program = Path(VENV_BIN) / "basedpyright-langserver"
    assert f"  python      {program} --stdio  (found on PATH)" in listed, listed
    assert "  rust        ra-multiplex client  (languageServers)" in listed, listed
    assert "  c           off (languageServers)" in listed, listed
    assert (
        "  not started here: typescript-language-server, gopls (they run the project's code; "
        "the project is not trusted)"
    ) in listed, listed


def test_no_server_no_code_tools_and_a_cloned_project_cannot_name_one(tmp_path: Path) -> None:
    root = project(tmp_path)
    mark = tmp_path / "started"
    (root / ".tether").mkdir()
    command = json.dumps([sys.executable, str(FAKE), "rename", "--mark", str(mark)])
    (root / ".tether" / "config.toml").write_text(f"[languageServers]\npython = {command}\n")
    env = env_for(
        tmp_path, [call("definition", path="app.py", line=3, symbol="greet")], path="/usr/bin:/bin"
    )
    done = tether(["run", "look", "--json"], root, env, timeout=120)
    assert done.returncode == 0, done.stderr
    ((ok, output),) = results(done.stdout)
    assert not ok and output.startswith("unknown tool 'definition'")
    assert "languageServers" in done.stderr  # the project's key named as not applied
    assert not mark.exists()
    assert_no_process_left(env)
    assert TETHER  # the CLI the runs used
