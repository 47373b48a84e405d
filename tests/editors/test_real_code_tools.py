"""The code tools in Neovim answered by the language server the user has attached there
(basedpyright, from PyPI): ``agent/code`` goes to Neovim's basedpyright, a file that is not
open is loaded into a hidden buffer it attaches to, and Tether starts no language server of
its own (none under Tether's server, though one is on its ``PATH``)."""

from __future__ import annotations

import os

from .conftest import BIN, Nvim, call, script
from .test_real_language_server import require_basedpyright

LIB = 'def greet(name: str) -> str:\n    """Say hello."""\n    return f"hello {name}"\n'
APP = 'from lib import greet\n\nprint("é😀", greet("you"))\n'


def test_neovims_basedpyright_answers_the_code_tools(nvim: Nvim) -> None:
    src = nvim.workspace / "src"
    src.mkdir()
    (src / "lib.py").write_text(LIB)
    (src / "app.py").write_text(APP)
    calls = [
        call("definition", path="src/app.py", line=3, symbol="greet"),
        call("references", path="src/app.py", line=3, symbol="greet"),
        call("hover", path="src/app.py", line=3, symbol="greet"),
        call("symbols", path="src/lib.py"),
    ]
    r = nvim.run(
        "real_code",
        script({"toolCalls": calls}, {"text": "done"}),
        env={
            "BASEDPYRIGHT": str(require_basedpyright()),
            "WATCHDOG_MS": "100000",
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # Tether could start one
        },
        timeout=120,
    )
    results = [e for e in r["run"]["events"] if e["kind"] == "tool-result"]
    outputs = [e["output"] for e in results]
    assert [e["ok"] for e in results] == [True] * 4, outputs
    definition, references, hover, symbols = outputs
    assert definition == (
        "Definition of greet (answered by basedpyright):\n"
        "src/lib.py:1:5: def greet(name: str) -> str:"
    )
    head, *places = references.splitlines()
    assert head == "3 references to greet (answered by basedpyright):"
    assert sorted(places) == [
        "src/app.py:1:17: from lib import greet",
        'src/app.py:3:13: print("é😀", greet("you"))',  # the column in characters
        "src/lib.py:1:5: def greet(name: str) -> str:",
    ]
    assert hover.startswith("greet (answered by basedpyright):\n") and "Say hello." in hover
    assert symbols.splitlines()[:2] == [
        "Symbols of src/lib.py (answered by basedpyright):",
        "function greet — src/lib.py:1:5",
    ]
    assert r["lib_hidden"] and "basedpyright" in r["lib_clients"], r["lib_clients"]
    servers = r["servers"]
    assert servers, "Neovim's basedpyright is running"
    assert not [s for s in servers if s["under_tether"]], servers
