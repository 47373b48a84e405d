"""The code tools answered by the editor: ``tether serve`` asks ``agent/code`` of a client that
declared ``experimental.tether.code``, in the negotiated position encoding, and starts no
language server of its own while the editor answers. ``unavailable`` (no language server
for that file in the editor) or an error answer falls back to Tether's own servers; after an
error answer the client is not asked again; a client that does not answer in time, or answers
garbage, is a clear tool error and the server keeps serving. A client that does not declare
it is never asked."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError
from pytest_lsp import client_capabilities

from .conftest import PROFILES, Editor, serving

FAKE = Path(__file__).with_name("fake_langserver.py")
FAKE_NAME = Path(sys.executable).name
LIB = 'def greet(name: str) -> str:\n    return f"hello {name}"\n'
APP = 'from lib import greet\n\nprint("é😀", greet("you"))\n'
"""The name is after characters whose UTF-8, UTF-16 and code-point columns all differ."""


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


DEFINITION = call("definition", path="app.py", line=3, symbol="greet")
DEFINITIONS = [
    DEFINITION,
    call("definition", path="app.py", line=1, symbol="greet"),
    call("definition", path="app.py", line=1, symbol="lib"),
]
"""Three calls (a model's identical calls in one turn are made once)."""
REFERENCES = call("references", path="app.py", line=3, symbol="greet")
HOVER = call("hover", path="app.py", line=3, symbol="greet")
OUTLINE = call("symbols", path="lib.py")
QUERY = call("symbols", query="gre")


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "lib.py").write_text(LIB)
    (root / "app.py").write_text(APP)
    return root


def own_server(tmp_path: Path, timeout: float = 30) -> Path:
    """The user's settings name a language server of Tether's own for Python (the fake one,
    answering a definition in lib.py); the file it writes when it starts."""
    mark = tmp_path / "own-server-started"
    lib = (tmp_path / "proj" / "lib.py").as_uri()
    command = json.dumps([sys.executable, str(FAKE), "rename", lib, "--mark", str(mark)])
    folder = tmp_path / "config" / "tether"  # XDG_CONFIG_HOME of ``serving``
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(
        f"languageServerTimeoutSeconds = {timeout}\n[languageServers]\npython = {command}\n"
    )
    return mark


async def open_session(
    editor: Editor, root: Path, calls: list[dict[str, Any]], *, code: bool = True
) -> None:
    caps = client_capabilities(PROFILES["neovim"])
    caps.experimental = {"tether": {"events": True, "approvals": True, "code": code}}
    editor.root = root
    editor.init_result = await editor.client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options={
                "provider": "scripted",
                "script": {"turns": [{"toolCalls": calls}, {"text": "done"}]},
            },
        )
    )


def span(line: int, start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


def encoding_of(editor: Editor) -> str:
    assert editor.init_result is not None
    return str(editor.init_result.capabilities.position_encoding or "utf-16")


def column(text: str, encoding: str) -> int:
    """``text``'s length in ``encoding``'s units."""
    if encoding == "utf-8":
        return len(text.encode())
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


async def test_the_editor_answers_every_code_tool_in_its_encoding(tmp_path: Path) -> None:
    root = project(tmp_path)
    mark = own_server(tmp_path)
    lib, app = (root / "lib.py").as_uri(), (root / "app.py").as_uri()
    asked: list[dict[str, Any]] = []
    async with serving(tmp_path / "state") as editor:

        @editor.client.feature("agent/code")
        def on_code(params: Any) -> Any:
            asked.append(params)
            enc = encoding_of(editor)
            at = column('print("é😀", ', enc)
            request = params["request"]
            if request == "definition":
                return {"server": "Pylance", "locations": [{"uri": lib, "range": span(0, 4, 9)}]}
            if request == "references":
                return {
                    "server": "Pylance",
                    "locations": [
                        {"uri": lib, "range": span(0, 4, 9)},
                        {"uri": app, "range": span(2, at, at + 5)},
                    ],
                }
            if request == "hover":
                return {"server": "Pylance", "hover": "(function) def greet(name: str) -> str"}
            if request == "documentSymbols":
                symbol = {
                    "name": "greet",
                    "kind": 12,
                    "location": {"uri": lib, "range": span(0, 4, 9)},
                }
                return {"server": "Pylance", "symbols": [symbol]}
            symbol = {
                "name": "greet",
                "kind": 12,
                "location": {"uri": lib, "range": span(0, 4, 9)},
                "containerName": "lib",
            }
            return {"server": "Pylance", "symbols": [symbol]}

        await open_session(editor, root, [DEFINITION, REFERENCES, HOVER, OUTLINE, QUERY])
        await editor.run(runId="r1", prompt="look")
        results = editor.tool_results()
        enc = encoding_of(editor)
    assert [r.ok for r in results] == [True] * 5, [r.output for r in results]
    definition, references, hover, outline, query = (r.output for r in results)
    assert definition == (
        "Definition of greet (answered by Pylance):\nlib.py:1:5: def greet(name: str) -> str:"
    )
    assert references.splitlines()[1:] == [
        "lib.py:1:5: def greet(name: str) -> str:",
        'app.py:3:13: print("é😀", greet("you"))',  # the column in characters
    ]
    assert hover == "greet (answered by Pylance):\n(function) def greet(name: str) -> str"
    assert outline.splitlines()[1] == "function greet — lib.py:1:5"
    assert query.splitlines()[1] == "function greet in lib — lib.py:1:5"
    at = {"line": 2, "character": column('print("é😀", ', enc)}
    assert asked[0] == {"request": "definition", "uri": app, "position": at}
    assert [a["request"] for a in asked] == [
        "definition",
        "references",
        "hover",
        "documentSymbols",
        "workspaceSymbols",
    ]
    assert asked[3] == {"request": "documentSymbols", "uri": lib}
    assert asked[4] == {"request": "workspaceSymbols", "query": "gre"}
    assert not mark.exists()  # Tether started no language server of its own


async def test_unavailable_or_an_error_answer_falls_back_to_tethers_own_servers(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    mark = own_server(tmp_path)
    answers: list[Any] = [{"unavailable": "no language server is attached to app.py"}, "error"]
    asked: list[str] = []
    async with serving(tmp_path / "state") as editor:

        @editor.client.feature("agent/code")
        def on_code(params: Any) -> Any:
            asked.append(params["request"])
            answer = answers.pop(0)
            if answer == "error":
                raise JsonRpcInternalError("the plugin broke")
            return answer

        await open_session(editor, root, DEFINITIONS)
        await editor.run(runId="r1", prompt="look")
        results = editor.tool_results()
    assert [r.ok for r in results] == [True] * 3, [r.output for r in results]
    for result in results:  # each answered by Tether's own server
        assert f"(answered by {FAKE_NAME})" in result.output
    assert asked == ["definition", "definition"]  # after the error answer, not asked again
    assert mark.exists()


async def test_a_late_or_garbled_answer_is_a_tool_error_and_serving_goes_on(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    own_server(tmp_path, timeout=1)
    never = asyncio.Event()
    answers: list[Any] = ["hang", {"server": "x", "locations": [{"uri": 3}]}, "ok"]
    async with serving(tmp_path / "state") as editor:

        @editor.client.feature("agent/code")
        async def on_code(params: Any) -> Any:
            answer = answers.pop(0)
            if answer == "hang":
                await never.wait()
            if answer == "ok":
                return {"server": "Pylance", "locations": []}
            return answer

        await open_session(editor, root, DEFINITIONS)
        await editor.run(runId="r1", prompt="look")
        results = editor.tool_results()
    late, garbled, fine = results
    assert not late.ok and late.output == "the editor's language server did not answer within 1 s"
    assert not garbled.ok
    assert garbled.output == "the editor answered agent/code with something unusable"
    assert fine.ok and fine.output == "No definition of lib found (answered by Pylance)."


async def test_a_client_that_does_not_declare_it_is_never_asked(tmp_path: Path) -> None:
    root = project(tmp_path)
    mark = own_server(tmp_path)
    asked: list[Any] = []
    async with serving(tmp_path / "state") as editor:

        @editor.client.feature("agent/code")
        def on_code(params: Any) -> Any:
            asked.append(params)
            return {"unavailable": "asked"}

        await open_session(editor, root, [DEFINITION], code=False)
        await editor.run(runId="r1", prompt="look")
        (result,) = editor.tool_results()
    assert result.ok and f"(answered by {FAKE_NAME})" in result.output
    assert asked == [] and mark.exists()


async def test_without_a_server_of_tethers_own_the_editor_alone_is_asked(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "main.c").write_text("int main(void) { return 0; }\n")
    lib = (root / "lib.py").as_uri()
    c = call("definition", path="main.c", line=1, symbol="main")
    async with serving(tmp_path / "state", env={"PATH": "/nonexistent"}) as editor:

        @editor.client.feature("agent/code")
        def on_code(params: Any) -> Any:
            if params["uri"].endswith(".c"):
                return {"unavailable": "no language server in Neovim answers it for main.c"}
            return {"server": "Pylance", "locations": [{"uri": lib, "range": span(0, 4, 9)}]}

        await open_session(editor, root, [DEFINITION, c])
        await editor.run(runId="r1", prompt="look")
        python, c_result = editor.tool_results()
    assert python.ok and python.output.startswith("Definition of greet (answered by Pylance)")
    assert not c_result.ok
    assert c_result.output.startswith(
        "the editor cannot answer (no language server in Neovim answers it for main.c); "
        "main.c: no c language server was found on PATH"
    ), c_result.output


async def test_the_editors_strings_are_shown_escaped_on_one_line(tmp_path: Path) -> None:
    root = project(tmp_path)
    own_server(tmp_path)
    async with serving(tmp_path / "state") as editor:

        @editor.client.feature("agent/code")
        def on_code(params: Any) -> Any:
            return {"server": "Py\x1b[31mlance\u202e\nfake", "locations": []}

        await open_session(editor, root, [DEFINITION])
        await editor.run(runId="r1", prompt="look")
        (result,) = editor.tool_results()
    assert (
        result.output == "No definition of greet found (answered by Py\\x1b[31mlance\\u202e fake)."
    )
