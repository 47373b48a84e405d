"""A rename across two files in Emacs, answered by Eglot's basedpyright (PyPI) and shown
whole for its approval: the package declares ``changeSets``, so the server offers
``rename``; its ``agent/approve`` (one unified diff of both files, no ``proposed`` window)
opens in ``*tether-approval*`` in ``diff-mode`` (``n``/``p`` go from hunk to hunk,
``N``/``P`` from file to file) with the usual keys. Denied, it lands nowhere; allowed, in
both buffers (and, saved, on disk)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .emacs_harness import STORIES, answers, approvals_asked, proxied_story, tool_results

RENAME_STORY = STORIES / "rename-story.el"
BIN = Path(sys.executable).parent
LIB = (
    "# \u202e a bidi control the approval shows escaped\n"
    'def greet(name: str) -> str:\n    return f"hello {name}"\n'
)
APP = 'from lib import greet\n\nprint("é😀", greet("you"))\n'
RENAME = {
    "name": "rename",
    "arguments": {"path": "src/app.py", "line": 3, "symbol": "greet", "new_name": "salute"},
}
TITLE = "Rename greet → salute in 2 files (answered by basedpyright)"
DIFF = (
    "--- a/src/app.py\n"
    "+++ b/src/app.py\n"
    "@@ -1,3 +1,3 @@\n"
    "-from lib import greet\n"
    "+from lib import salute\n"
    " \n"
    '-print("é😀", greet("you"))\n'
    '+print("é😀", salute("you"))\n'
    "--- a/src/lib.py\n"
    "+++ b/src/lib.py\n"
    "@@ -1,3 +1,3 @@\n"
    " # \\u202e a bidi control the approval shows escaped\n"  # as text, never acting
    "-def greet(name: str) -> str:\n"
    "+def salute(name: str) -> str:\n"
    '     return f"hello {name}"\n'
)
KEYS = [
    "tether-approval-allow",
    "tether-approval-allow-always",
    "tether-approval-deny",
    "tether-approval-quit",
    "diff-hunk-next",
    "diff-hunk-prev",
    "diff-file-next",
    "diff-file-prev",
]


@pytest.mark.parametrize("where", ["run", "chat"])
def test_a_two_file_rename_is_reviewed_in_diff_mode_then_denied_then_allowed(
    tmp_path: Path, where: str
) -> None:
    """``run``: ``M-x tether-run``, the approval in ``*tether-approval*``; ``chat``: sent
    from ``*tether-chat*``, where it waits inline with a ``[Review]`` button, and ``v``
    opens it in ``*tether-approval*``, where it is answered."""
    server = BIN / "basedpyright-langserver"
    if not server.exists():
        pytest.fail(f"{server} is missing: install the test extra (basedpyright)", pytrace=False)
    turns = {"turns": [{"toolCalls": [RENAME]}, {"toolCalls": [RENAME]}, {"text": "done"}]}
    extra = {"TETHER_LSP": str(server), "TETHER_LIB": LIB}
    if where == "chat":
        extra["TETHER_CHAT"] = "1"
    report, wire = proxied_story(tmp_path, RENAME_STORY, turns, extra, app=APP)
    assert "error" not in report, report
    assert report["libManaged"] is True  # Eglot manages both files
    [initialize] = [
        e["message"]
        for e in wire
        if e["from"] == "editor" and e["message"].get("method") == "initialize"
    ]
    assert initialize["params"]["capabilities"]["experimental"]["tether"]["changeSets"] is True
    first, second = report["first"], report["second"]
    for shown in (first, second):
        assert shown["text"] == DIFF
        assert shown["mode"] == "diff-mode" and shown["readOnly"] is True
        # nothing takes the focus when it arrives; `v' in the chat goes there
        assert shown["selected"] is (where == "chat")
        assert shown["header"] == (
            f"Tether wants to: {TITLE} — a allow · A always · d deny (with a reason)"
            " · n/p hunk · N/P file"
        )
        assert shown["keys"] == KEYS
        assert "--- a/src/lib.py" in shown["fileHeaders"]  # N goes to the next file
        # its hunk's file is the workspace's (RET, diff-goto-source, goes there)
        assert shown["source"] == str(tmp_path / "ws" / "src" / "lib.py")
    # the denied rename landed nowhere: buffers and disk as they were
    assert report["between"] == {"app": APP, "lib": LIB, "appDisk": APP, "libDisk": LIB}
    asked = approvals_asked(wire)
    assert [a["params"]["tool"] for a in asked] == ["rename", "rename"]
    assert all("proposed" not in a["params"]["preview"] for a in asked)
    assert [answers(wire, a["id"])[0]["result"]["decision"] for a in asked] == ["deny", "allow"]
    refused, renamed = tool_results(wire)
    assert refused["ok"] is False and "denied" in refused["output"]
    assert renamed["ok"] is True, renamed["output"]
    assert renamed["output"].startswith(
        "Renamed greet to salute: 3 occurrences in 2 files (src/app.py, src/lib.py)"
    )
    new_app, new_lib = APP.replace("greet", "salute"), LIB.replace("greet", "salute")
    after = report["after"]
    assert (after["app"], after["lib"]) == (new_app, new_lib)
    assert (after["appDisk"], after["libDisk"]) == (new_app, new_lib)
    assert after["modified"] is False
    assert after["approvalBuffer"] is False and after["pending"] == []
    assert report["outcome"] == "done"
    if where == "chat":
        assert report["chatKeys"] == "tether-chat-review"
        chat = after["chat"]
        assert chat.count(f"⚠ Tether wants to: {TITLE}") == 2
        waiting = report["chatWaiting"]  # the first approval, inline, before `v'
        assert (
            "  [Allow] [Allow always] [Deny] [Review]"
            "   a allow · A always · d deny (with a reason) · v review in diff-mode\n"
        ) in waiting
        assert "  ✗ denied\n" in chat and "  ✓ allow\n" in chat
