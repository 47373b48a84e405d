"""The editor's problems reach the model through the real `tether serve`: after an applied
edit (what it added or fixed, once the language server published) and from the read-only
``diagnostics`` tool. A client that did not declare ``diagnostics`` is never asked, and a
slow, silent or failing one never holds a run past the cap."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from ..waiting import wait_until
from .calls import edit, one_call_a_turn
from .cli import cli_env, tether
from .conftest import Editor
from .language_server import Answer, LanguageServer

APP = "def greet(name):\n    return 'hello ' + name\n"
BROKEN = APP.replace("+ name", "+ nme")
SETTLE = {"diagnosticsSettleMs": 1000}
"""Unchanged for 1 s counts as settled: well past the fake server's 0.3 s debounce, so that
a loaded machine cannot make the old problems look settled."""
SETTLE_A_MINUTE = {"diagnosticsSettleMs": 60_000, "diagnosticsMaxWaitMs": 60_000}
"""Waits no loaded machine mistakes for a quick run (one not to wait at all)."""


def diagnostics(path: str | None = None) -> dict[str, Any]:
    return {"name": "diagnostics", "arguments": {} if path is None else {"path": path}}


@pytest_asyncio.fixture
async def language_server(editor: Editor, workspace: Path) -> AsyncIterator[LanguageServer]:
    server = LanguageServer(editor, [workspace / "src" / "app.py", workspace / "README.md"])
    yield server
    server.close()


async def test_an_edit_that_introduces_an_error_is_told_the_new_problem(
    editor: Editor, workspace: Path, language_server: LanguageServer
) -> None:
    await editor.open_session(
        workspace,
        diagnostics=True,
        options=SETTLE,
        script=one_call_a_turn(edit("+ name", "+ nme")),
    )
    editor.open_document(workspace / "src" / "app.py", APP)
    language_server.publish()
    result = await editor.run(prompt="go", runId="r1")
    [edited] = editor.tool_results()
    assert edited.ok and edited.output.startswith("Edited src/app.py"), edited.output
    assert (
        "The editor reports 1 new problem(s) after this edit:\n"
        'src/app.py:2: error [fakels] "nme" is not defined'
    ) in edited.output
    # Asked before the edit was sent, then until the answer settled.
    app = (workspace / "src" / "app.py").as_uri()
    assert language_server.requests[0] == {"uris": [app]}
    assert len(language_server.requests) >= 3
    assert result["outcome"] == "done"


async def test_an_edit_that_fixes_an_error_reports_it_gone(
    editor: Editor, workspace: Path, language_server: LanguageServer
) -> None:
    (workspace / "src" / "app.py").write_text(BROKEN + "# TODO: tests\n")
    await editor.open_session(
        workspace,
        diagnostics=True,
        options=SETTLE,
        script=one_call_a_turn(edit("+ nme", "+ name")),
    )
    language_server.publish()  # the file is not open: the edit goes to the disk's copy
    await editor.run(prompt="go", runId="r1")
    [edited] = editor.tool_results()
    assert edited.ok, edited.output
    assert "The editor reports no new errors or warnings." in edited.output
    assert 'Fixed by this edit (1): src/app.py: error [fakels] "nme" is not defined' in (
        edited.output
    )
    assert "TODO left" not in edited.output  # still there: neither new nor fixed


async def test_a_file_created_on_disk_gets_its_new_problems(
    editor: Editor, workspace: Path, language_server: LanguageServer
) -> None:
    new = workspace / "src" / "new.py"
    language_server.files.append(new)
    call = {"name": "write_file", "arguments": {"path": "src/new.py", "content": "x = nme\n"}}
    # No workspace/applyEdit: the server writes the file itself, and the editor's language
    # server (watching the disk) publishes a moment later.
    await editor.open_session(
        workspace,
        diagnostics=True,
        apply_edit=False,
        options=SETTLE,
        script=one_call_a_turn(call),
    )
    language_server.publish()
    language_server.publish_after_disk_change(new)
    await editor.run(prompt="go", runId="r1")
    [created] = editor.tool_results()
    assert created.ok and created.output.startswith("Created src/new.py"), created.output
    assert 'src/new.py:1: error [fakels] "nme" is not defined' in created.output


async def test_a_client_without_the_capability_is_never_asked(
    editor: Editor, workspace: Path, language_server: LanguageServer
) -> None:
    await editor.open_session(
        workspace,
        diagnostics=False,
        options=SETTLE_A_MINUTE,
        script=one_call_a_turn(edit("+ name", "+ nme"), diagnostics()),
    )
    editor.open_document(workspace / "src" / "app.py", APP)
    language_server.publish()
    await run_bounded(editor)  # no settle wait either: it would be a minute
    edited, listed = editor.tool_results()
    assert edited.ok and "problem" not in edited.output, edited.output
    assert listed.ok and "This editor does not report diagnostics" in listed.output
    assert language_server.requests == []


RUN_WITHIN = 45
"""How long a run that waits for no editor may take: a bound on the wait, wide for a loaded
machine, far below what waiting would cost (a minute's settle, a 100 s answer, the run's
own 110 s timeout)."""


async def run_bounded(editor: Editor) -> dict[str, Any]:
    run = editor.run(prompt="go", runId="r1", limits={"timeoutSeconds": 110})
    return await asyncio.wait_for(run, RUN_WITHIN)


@pytest.mark.parametrize("answer", ["never", "late"])
async def test_a_silent_client_does_not_hold_the_run_past_the_cap(
    editor: Editor, workspace: Path, language_server: LanguageServer, answer: Answer
) -> None:
    await editor.open_session(
        workspace,
        diagnostics=True,
        options={"diagnosticsMaxWaitMs": 1000},
        script=one_call_a_turn(edit("+ name", "+ nme"), edit("'hello '", "'hi '")),
    )
    editor.open_document(workspace / "src" / "app.py", APP)
    language_server.answer = answer  # never, or after LATE_SECONDS
    result = await run_bounded(editor)  # one cap of 1 s, not the answer
    first, second = editor.tool_results()
    assert first.ok and second.ok and "problem" not in first.output + second.output
    assert result["outcome"] == "done"
    assert len(language_server.requests) == 1  # the run stopped asking after the timeout
    # The request was withdrawn with $/cancelRequest (the client may handle it just after).
    await wait_until(lambda: language_server.withdrawn == 1, "the request withdrawn")


@pytest.mark.parametrize("answer", ["method-not-found", "error"])
async def test_an_error_answer_stops_the_questions_for_the_connection(
    editor: Editor, workspace: Path, language_server: LanguageServer, answer: Answer
) -> None:
    await editor.open_session(
        workspace,
        diagnostics=True,
        script=one_call_a_turn(edit("+ name", "+ nme"), diagnostics()),
    )
    editor.open_document(workspace / "src" / "app.py", APP)
    language_server.answer = answer  # declared, then refused (an old plugin) or crashed
    result = await run_bounded(editor)
    edited, listed = editor.tool_results()
    assert edited.ok and "problem" not in edited.output
    assert "This editor does not report diagnostics" in listed.output
    assert len(language_server.requests) == 1 and result["outcome"] == "done"


async def test_a_malformed_answer_is_no_problems(
    editor: Editor, workspace: Path, language_server: LanguageServer
) -> None:
    await editor.open_session(
        workspace,
        diagnostics=True,
        options={"diagnosticsSettleMs": 100},
        script=one_call_a_turn(diagnostics("src/app.py")),
    )
    language_server.answer = "malformed"
    result = await editor.run(prompt="go", runId="r1")
    [listed] = editor.tool_results()
    assert listed.ok and listed.output == "The editor reports no problems in src/app.py."
    assert result["outcome"] == "done"


async def test_the_tool_lists_a_file_and_the_workspace_only(
    editor: Editor, workspace: Path, language_server: LanguageServer, tmp_path: Path
) -> None:
    (workspace / "README.md").write_text("# demo\nTODO: write it\n")
    outside = (tmp_path / "elsewhere.py").as_uri()
    language_server.extra = {
        outside: [
            {
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                "message": "secret path",
            }
        ]
    }
    await editor.open_session(
        workspace,
        diagnostics=True,
        script=one_call_a_turn(
            diagnostics("src/app.py"), diagnostics(), diagnostics("../elsewhere.py")
        ),
    )
    editor.open_document(workspace / "src" / "app.py", BROKEN)  # unsaved: the buffer counts
    language_server.publish()
    await editor.run(prompt="go", runId="r1")
    one, every, refused = editor.tool_results()
    assert one.output == (
        "The editor reports 1 problem(s) in 1 file:\n"
        'src/app.py:2: error [fakels] "nme" is not defined'
    )
    assert every.output == (
        "The editor reports 2 problem(s) in 2 files:\n"
        'src/app.py:2: error [fakels] "nme" is not defined\n'
        "README.md:2: warning [fakels] TODO left"
    )
    assert "secret path" not in every.output
    assert not refused.ok and "outside the workspace" in refused.output
    app = (workspace / "src" / "app.py").as_uri()
    assert language_server.requests == [{"uris": [app]}, {}]  # the refused path is not asked


def test_the_headless_client_says_it_does_not_report_diagnostics(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    turns = {"turns": [{"toolCalls": [diagnostics("a.py")]}, {"text": "done"}]}
    env = cli_env(tmp_path, TETHER_PROVIDER="scripted", TETHER_SCRIPT=json.dumps(turns))
    out = tether(["run", "--json", "check"], root, env)
    assert out.returncode == 0, out.stderr
    outputs = [
        json.loads(line).get("output", "")
        for line in out.stdout.splitlines()
        if line.startswith("{") and '"tool-result"' in line
    ]
    assert outputs and "This editor does not report diagnostics" in outputs[0], out.stdout
