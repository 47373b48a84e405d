"""agent/diagnostics answered by the Neovim plugin from vim.diagnostic, seen on the wire."""

from __future__ import annotations

from typing import Any

from tether_protocol import DiagnosticsResult

from .conftest import Nvim, call, script

APP = "def greet(name):\n    return 'héllo ' + name\n"
TYPO = call("edit_file", path="src/app.py", old_text="+ name", new_text="+ nme")


def test_diagnostics_are_answered_from_vim_diagnostic_in_the_negotiated_encoding(
    nvim: Nvim,
) -> None:
    app = nvim.workspace / "src" / "app.py"
    app.parent.mkdir()
    app.write_text(APP)
    other = nvim.workspace / "other.py"
    other.write_text("import os\nx = 1\n")
    r = nvim.run("diagnostics", script({"toolCalls": [TYPO]}), proxy=True)
    assert r["run"]["result"]["changedFiles"] == [app.as_uri()]
    # the fake language server published after the edit, on the edited text
    line = "    return 'héllo ' + nme"
    assert r["line_when_published"] == line
    assert r["byte_col"] == len(line.encode()[: line.encode().index(b"nme")])
    col = {
        "utf-8": r["byte_col"],
        "utf-16": len(line[: line.index("nme")].encode("utf-16-le")) // 2,
        "utf-32": line.index("nme"),
    }[r["encoding"]]

    asked, everything = r["answers"]
    assert "error" not in asked and "error" not in everything
    typo = {
        "range": {"start": {"line": 1, "character": col}, "end": {"line": 1, "character": col + 3}},
        "severity": 1,
        "message": "name 'nme' is not defined",
        "source": "fakels",
        "code": 1,
    }
    assert asked["result"] == {
        "items": [
            {"uri": app.as_uri(), "diagnostics": [typo]},
            {"uri": (nvim.workspace / "not-loaded.py").as_uri(), "diagnostics": []},
        ]
    }
    unused = {
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 6}},
        "severity": 2,
        "message": "unused import",
        "source": "fakels",
        "code": "W0611",
    }
    hint = {
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}},
        "severity": 4,
        "message": "a hint, no end, no source",
    }
    items = sorted(everything["result"]["items"], key=lambda item: str(item["uri"]))
    assert items == [
        {"uri": other.as_uri(), "diagnostics": [unused, hint]},
        {"uri": app.as_uri(), "diagnostics": [typo]},
    ]  # the scratch buffer's problem is not a file's: left out
    for answer in (asked, everything):  # what the server will read
        DiagnosticsResult.model_validate(answer["result"])
    # the same problem in the other encodings a server may negotiate
    utf16 = len(line[: line.index("nme")].encode("utf-16-le")) // 2
    assert utf16 == r["byte_col"] - 1  # the é: two bytes, one UTF-16 unit
    for encoding, expected in (("utf-16", utf16), ("utf-32", line.index("nme"))):
        [item] = r["converted"][encoding]["items"]
        assert item["diagnostics"][0]["range"] == {
            "start": {"line": 1, "character": expected},
            "end": {"line": 1, "character": expected + 3},
        }, encoding


def test_the_plugin_declares_diagnostics_and_sends_the_context_on_the_wire(nvim: Nvim) -> None:
    (nvim.workspace / "src").mkdir()
    (nvim.workspace / "src" / "app.py").write_text(APP)
    (nvim.workspace / "other.py").write_text("x = 1\n")
    r = nvim.run("diagnostics", script({"toolCalls": [TYPO]}), proxy=True)
    wire = nvim.wire(1)
    sent = [m["message"] for m in wire if m["from"] == "editor"]
    [init] = [m for m in sent if m.get("method") == "initialize"]
    tether = init["params"]["capabilities"]["experimental"]["tether"]
    assert tether["diagnostics"] is True
    [run] = [m for m in sent if m.get("method") == "agent/run"]
    context: dict[str, Any] = run["params"]["context"]
    app = (nvim.workspace / "src" / "app.py").as_uri()
    other = (nvim.workspace / "other.py").as_uri()
    assert context["uri"] == app
    assert context["openFiles"] == [app, other]
    last = "    return 'héllo ' + name"  # the file's last line, all on screen
    width = {"utf-8": len(last.encode()), "utf-16": len(last), "utf-32": len(last)}
    assert context["visibleRange"] == {
        "start": {"line": 0, "character": 0},
        "end": {"line": 1, "character": width[r["encoding"]]},
    }
    # the server took it: the run went on to the edit
    assert any(m["message"].get("method") == "workspace/applyEdit" for m in wire)
