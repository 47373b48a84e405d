"""A rename across two files in Neovim, answered by the basedpyright attached there
(PyPI) and shown whole for its approval: the plugin declares ``changeSets``, so the server
offers ``rename``; its ``agent/approve`` (one unified diff of both files, no ``proposed``
window) opens in a scratch buffer of filetype ``diff`` with one fold per file and the usual
keys. Denied, it lands nowhere; allowed, in both buffers (and, saved, on disk)."""

from __future__ import annotations

from .conftest import Nvim, call, decisions, script, tool_results
from .test_real_language_server import require_basedpyright

LIB = (
    "# \u202e a bidi control the approval shows escaped\n"
    'def greet(name: str) -> str:\n    return f"hello {name}"\n'
)
APP = 'from lib import greet\n\nprint("é😀", greet("you"))\n'
RENAME = call("rename", path="src/app.py", line=3, symbol="greet", new_name="salute")
TITLE = "Rename greet → salute in 2 files (answered by basedpyright)"
DIFF = [
    "--- a/src/app.py",
    "+++ b/src/app.py",
    "@@ -1,3 +1,3 @@",
    "-from lib import greet",
    "+from lib import salute",
    " ",
    '-print("é😀", greet("you"))',
    '+print("é😀", salute("you"))',
    "--- a/src/lib.py",
    "+++ b/src/lib.py",
    "@@ -1,3 +1,3 @@",
    " # \\u202e a bidi control the approval shows escaped",  # as text, never acting
    "-def greet(name: str) -> str:",
    "+def salute(name: str) -> str:",
    '     return f"hello {name}"',
]
KEYS = (
    "a allow · A always (every rename) · d deny · q deny · ]]/[[ next/previous file · za fold"
    " · <CR> open the file there"
)


def test_a_two_file_rename_is_reviewed_whole_then_denied_then_allowed(nvim: Nvim) -> None:
    src = nvim.workspace / "src"
    src.mkdir()
    (src / "lib.py").write_text(LIB)
    (src / "app.py").write_text(APP)
    r = nvim.run(
        "real_rename",
        script({"toolCalls": [RENAME]}, {"toolCalls": [RENAME]}, {"text": "done"}),
        env={"BASEDPYRIGHT": str(require_basedpyright()), "WATCHDOG_MS": "100000"},
        timeout=120,
    )
    denied, allowed = r["shown"]
    for shown in (denied, allowed):
        assert shown["view"] == "changes" and shown["title"] == TITLE
        assert shown["current_is_view"] is False  # the focus stays where the user was
        assert shown["floating"] is False and shown["filetype"] == "diff"
        assert shown["name"].startswith("tether://approve/") and shown["modifiable"] is False
        assert shown["lines"] == DIFF
        assert shown["folds"] == [
            [1, 8, "src/app.py: +2 −2 (8 lines)"],
            [9, 15, "src/lib.py: +1 −1 (7 lines)"],
        ]
        assert shown["winbar"] == f" Tether: {TITLE}"
        assert shown["statusline"] == f" {KEYS}"
        assert {"a", "A", "d", "q", "]]", "[["} <= set(shown["maps"])
    # :TetherApprove enters it on the first file; ]] goes to the second (then stays), [[ back
    assert (denied["entered"], denied["cursor"], denied["next_file"]) == (True, 1, 9)
    assert (denied["past_last"], denied["previous_file"]) == (9, 1)
    # <CR> on a line of lib.py's hunk: lib.py at that line, the approval still open
    assert denied["opened"] == {
        "name": str(src / "lib.py"),
        "line": 3,
        "window": True,
        "view_open": True,
    }
    # nothing changed before the user answered, and nothing after the deny
    app_lines, lib_lines = APP.splitlines(), LIB.splitlines()
    for shown in (denied, allowed):
        assert (shown["app"], shown["lib"]) == (app_lines, lib_lines)
        assert (shown["app_disk"], shown["lib_disk"]) == (app_lines, lib_lines)
    run = r["run"]
    assert decisions(run) == ["deny", "allow"]
    refused, renamed = tool_results(run)
    assert refused["ok"] is False and "keep the old name" in refused["output"]
    assert renamed["ok"] is True, renamed["output"]
    assert renamed["output"].startswith(
        "Renamed greet to salute: 3 occurrences in 2 files (src/app.py, src/lib.py)"
    )
    new_app = [line.replace("greet", "salute") for line in app_lines]
    new_lib = [line.replace("greet", "salute") for line in lib_lines]
    assert (r["app_after"], r["lib_after"]) == (new_app, new_lib)
    assert (r["app_disk_after"], r["lib_disk_after"]) == (new_app, new_lib)
    assert r["modified_after"] == [False, False]
    assert r["pending_after"] is False and r["approval_buffers_after"] == []
    # the approval's window closed: the user's (showing lib.py, opened with <CR>) and the
    # run's transcript are left
    assert sorted(r["windows_after"]) == sorted([str(src / "lib.py"), "tether://transcript"])
