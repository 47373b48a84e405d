"""The lean start (``lsp.lean``): ``initialize`` is answered without waiting for pygls,
pydantic, the protocol models or a model SDK, whose imports begin at the spawn, with the
very answer the full server gives, and the session then works as before."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.providers.fakes import FakeApi, Sse, openai_stream

from ..waiting import wait_until_sync
from .raw_client import RawServer
from .test_plain_lsp import COC, EGLOT_1_9, HELIX_25_07, VIM_LSP

HEAVY = ("pygls", "lsprotocol", "pydantic", "tether_protocol", "openai", "anthropic", "httpx")

# ``tether serve`` whose first import of a heavy package is held (it says "HELD" on
# stderr and waits) until ``lsp.lean.start`` has returned (the answer is written by then);
# that return reports, on stderr, whether it answered and which heavy packages were
# imported by then.
HOLDING = f"""
import json, sys, threading
released = threading.Event()
class Hold:
    def find_spec(self, name, path=None, target=None):
        if name in {HEAVY!r} and not released.is_set():
            sys.stderr.write("HELD " + name + "\\n")
            sys.stderr.flush()
            released.wait(60)
        return None
sys.meta_path.insert(0, Hold())
import tether.lsp.lean as lean
start = lean.start
def recording(*args):
    handover = start(*args)
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r})
    sys.stderr.write("LEAN " + json.dumps([handover.answered, heavy]) + "\\n")
    sys.stderr.flush()
    released.set()
    return handover
lean.start = recording
from tether.cli import main
sys.exit(main(["serve"]))
"""


def initialize_params(root: Path, capabilities: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "processId": None,
        "rootUri": root.as_uri(),
        "capabilities": capabilities,
        "initializationOptions": {"provider": "scripted", "script": {"turns": []}},
        **extra,
    }


def answer_of(tmp_path: Path, params: dict[str, Any], env: dict[str, str], name: str) -> Any:
    server = RawServer(tmp_path, env, name=name)
    try:
        server.request(7, "initialize", params)
        answer = server.answer(7, timeout=30)
        server.request(8, "shutdown")
        assert "result" in server.answer(8, timeout=30)
        server.notify("exit")
    finally:
        server.close()
    return answer


@pytest.mark.parametrize(
    "capabilities",
    [
        {},
        EGLOT_1_9,
        HELIX_25_07,  # utf-8 preferred
        COC,
        VIM_LSP,
        {"general": {"positionEncodings": ["utf-32"]}},
        {"general": {"positionEncodings": ["utf-7"]}},  # none known: the full server answers
    ],
    ids=["bare", "eglot", "helix", "coc", "vim-lsp", "utf-32", "unknown-encoding"],
)
def test_the_lean_answer_is_the_full_servers_answer(
    tmp_path: Path, capabilities: dict[str, Any]
) -> None:
    params = initialize_params(
        tmp_path,
        capabilities,
        clientInfo={"name": "an editor", "version": "1.0"},
        workspaceFolders=[{"uri": tmp_path.as_uri(), "name": "ws"}],
        trace="off",
    )
    lean = answer_of(tmp_path, params, {}, "lean")
    full = answer_of(tmp_path, params, {"TETHER_LEAN_START": "0"}, "full")
    assert json.dumps(lean) == json.dumps(full)
    assert lean["result"]["capabilities"]["experimental"]["tether"]["tools"]


def test_the_imports_begin_at_the_spawn_and_initialize_is_answered_without_them(
    tmp_path: Path,
) -> None:
    """The heavy imports start before any message arrives (``tether run`` sends its
    ``initialize`` only after its own imports), and the answer never waits for them: here
    they are held until it is written."""
    (tmp_path / "notes.txt").write_text("hello\n")
    with FakeApi() as fake:
        fake.queue(Sse(openai_stream("All ", "done.", usage=(10, 2))))
        server = RawServer(tmp_path, argv=[sys.executable, "-c", HOLDING])
        try:
            wait_until_sync(
                lambda: any(ln.startswith("HELD ") for ln in server.stderr().splitlines()),
                "a heavy import begun before any message was sent",
            )
            options = {"provider": "openai", "baseUrl": fake.url + "/v1", "model": "gpt-5.4"}
            server.request(
                1,
                "initialize",
                {**initialize_params(tmp_path, {}), "initializationOptions": options},
            )
            assert "result" in server.answer(1, timeout=30)
            lean = wait_until_sync(
                lambda: next(
                    (ln for ln in server.stderr().splitlines() if ln.startswith("LEAN ")), None
                ),
                "the lean start's report",
            )
            answered, heavy = json.loads(lean.removeprefix("LEAN "))
            assert answered is True
            assert heavy == []
            server.notify("initialized", {})
            server.request(2, "agent/run", {"prompt": "say it", "runId": "r1"})
            result = server.answer(2, timeout=60)
            assert result["result"]["outcome"] == "done", result
            assert result["result"]["answer"] == "All done."
            assert len(fake.requests) == 1
        finally:
            server.close()


@pytest.mark.parametrize("lean", ["on", "off"])
@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"maxSteps": "5"}, "initializationOptions.maxSteps"),
        ({"provider": "scripted", "script": {"turns": [{"txt": "x"}]}}, "script"),
        ({"nope": 1}, "initializationOptions.nope"),
    ],
)
def test_a_setting_that_cannot_be_used_is_shown_and_refuses_runs_until_it_is_fixed(
    tmp_path: Path, options: dict[str, Any], expected: str, lean: str
) -> None:
    env = {} if lean == "on" else {"TETHER_LEAN_START": "0"}
    server = RawServer(tmp_path, env)
    try:
        params = {**initialize_params(tmp_path, {}), "initializationOptions": options}
        server.request(1, "initialize", params)
        assert "result" in server.answer(1, timeout=30)  # the fixed answer, whoever gives it
        server.notify("initialized", {})
        server.request(2, "agent/run", {"prompt": "hi", "runId": "r1"})
        refused = server.answer(2, timeout=30)
        assert refused["error"]["code"] == -32602
        assert expected in refused["error"]["message"]
        # Shown when the settings were read, before the run was asked.
        shown = [
            m["params"]
            for m in server.pending
            if m.get("method") == "window/showMessage" and expected in m["params"]["message"]
        ]
        assert [m["type"] for m in shown] == [1]
        # Fixed by the editor's settings: the next run runs.
        fixed = {"provider": "scripted", "script": {"turns": [{"text": "fine"}]}}
        server.notify("workspace/didChangeConfiguration", {"settings": {"tether": fixed}})
        server.request(3, "agent/run", {"prompt": "hi", "runId": "r2"})
        answer = server.answer(3, timeout=60)
        assert answer["result"]["outcome"] == "done", answer
        assert answer["result"]["answer"] == "fine"
    finally:
        server.close()
