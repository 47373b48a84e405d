"""``lsp.server.warm_converter``: a daemon makes the converter's functions for a run's LSP
messages once, so a run forked from it makes none (cattrs makes them on first use)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import cattrs.gen
import pytest
from lsprotocol import types

from tether.lsp.server import process_converter, warm_converter

PARAMS = {
    "processId": 1,
    "rootUri": "file:///w",
    "capabilities": {"window": {"workDoneProgress": True}},
    "clientInfo": {"name": "tether", "version": "1"},
    "workspaceFolders": [{"uri": "file:///w", "name": "w"}],
}


def test_after_warming_an_initialize_exchange_makes_no_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    warm_converter()
    made: list[str] = []
    for name in ("make_dict_structure_fn_from_attrs", "make_dict_unstructure_fn_from_attrs"):
        real = getattr(cattrs.gen, name)

        def counting(attrs: Any, cl: Any, *a: Any, _real: Any = real, **k: Any) -> Any:
            made.append(repr(cl))
            return _real(attrs, cl, *a, **k)

        monkeypatch.setattr(cattrs.gen, name, counting)
    converter = process_converter()
    params = converter.structure(PARAMS, types.InitializeParams)
    assert params.client_info is not None and params.client_info.name == "tether"
    result = types.InitializeResult(
        capabilities=types.ServerCapabilities(), server_info=types.ServerInfo("tether")
    )
    assert converter.unstructure(result)["serverInfo"] == {"name": "tether"}
    assert made == []


WARM_RUN_PROBE = """
import json, sys
import cattrs.gen
from lsprotocol import types
from tether.lsp import server

getattr(server, sys.argv[1])()
made = []
for name in ("make_dict_structure_fn_from_attrs", "make_dict_unstructure_fn_from_attrs"):
    real = getattr(cattrs.gen, name)
    def counting(attrs, cl, *a, _real=real, **k):
        made.append(repr(cl))
        return _real(attrs, cl, *a, **k)
    setattr(cattrs.gen, name, counting)
converter = server.process_converter()
edit = types.ApplyWorkspaceEditParams(edit=types.WorkspaceEdit(document_changes=[
    types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri="file:///a", version=3),
        edits=[types.TextEdit(types.Range(types.Position(1, 0), types.Position(1, 4)), "x")],
    )
]))
progress = types.ProgressParams(token="t", value=types.WorkDoneProgressReport(message="m"))
create = types.WorkDoneProgressCreateParams(token="t")
for _ in range(2):
    converter.unstructure(create, types.WorkDoneProgressCreateParams)
    converter.unstructure(progress, types.ProgressParams)
    converter.unstructure(edit, types.ApplyWorkspaceEditParams)
print(json.dumps(made))
"""


def _made_after(warm: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", WARM_RUN_PROBE, warm],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return list(json.loads(out.stdout))


def test_after_warm_run_a_runs_edits_and_progress_make_no_function() -> None:
    """What ``tether serve``'s warm-up thread does: an editor's first run then converts
    its edits and progress with functions made already."""
    assert _made_after("warm_run") == []
    assert _made_after("warm_converter") != []  # the converter's warming alone: not enough
