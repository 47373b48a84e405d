"""``lsp.server.warm_converter``: a daemon makes the converter's functions for a run's LSP
messages once, so a run forked from it makes none (cattrs makes them on first use)."""

from __future__ import annotations

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
