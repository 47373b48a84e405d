"""Runs from a real Neovim: unsaved buffers, the transcript, progress, cancel, sessions."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from .conftest import Nvim, Outcome, call, script

READ_SCRIPT = script(
    {"text": "Reading your notes.", "toolCalls": [call("read_file", path="notes.txt")]},
    {"text": "Checking the other file.", "toolCalls": [call("read_file", path="missing.txt")]},
    {"text": "They say unsaved.\nThat is all."},
)


def events(run: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in run["events"] if e["kind"] == kind]


@pytest.fixture(scope="module")
def read_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Outcome]:
    """One run (shared by three tests): reads an unsaved buffer, then a missing file."""
    nvim = Nvim(tmp_path_factory.mktemp("read"))
    (nvim.workspace / "notes.txt").write_text("saved on disk\n")
    return nvim.workspace, nvim.run("transcript", READ_SCRIPT)


def test_the_run_reads_the_unsaved_buffer(read_run: tuple[Path, Outcome]) -> None:
    workspace, r = read_run
    run = r["run"]
    assert run["result"]["outcome"] == "done"
    first, second = events(run, "tool-result")
    assert first["ok"] is True
    assert first["output"] == "     1\tunsaved line 1\n     2\tunsaved line 2"
    assert second["ok"] is False
    assert r["disk"] == ["saved on disk"] and r["modified"] is True  # nothing was saved
    uri = (workspace / "notes.txt").as_uri()
    assert run["params"]["context"] == {
        "uri": uri,
        "openFiles": [uri],
        "visibleRange": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 14}},
    }


def test_the_transcript_streams_text_folds_tool_calls_and_ends_with_the_outcome(
    read_run: tuple[Path, Outcome],
) -> None:
    _, r = read_run
    usage = events(r["run"], "usage")[-1]
    assert r["log_buffer"] == "tether://transcript" and r["log_wins"] == 1
    assert r["transcript"] == [
        "▶ what do my notes say?",
        "── step 1 ──",
        "Reading your notes.",
        '✓ read_file {"path": "notes.txt"}',
        "       1\tunsaved line 1",
        "       2\tunsaved line 2",
        "── step 2 ──",
        "Checking the other file.",
        '✗ read_file {"path": "missing.txt"}',
        f"  {events(r['run'], 'tool-result')[1]['output']}",
        "── step 3 ──",
        "They say unsaved.",
        "That is all.",
        f"■ done · 3 steps · {usage['inputTokens']} in / {usage['outputTokens']} out tokens",
    ]
    # the text grew delta by delta on one line
    assert r["streamed"][:3] == ["Reading ", "Reading your ", "Reading your notes."]
    # each tool call and its output is one fold, closed; the rest is not folded
    assert r["foldmethod"] == "expr"
    assert r["folds"] == [
        [0, -1],
        [0, -1],
        [0, -1],
        [1, 4],
        [1, 4],
        [1, 4],
        [0, -1],
        [0, -1],
        [1, 9],
        [1, 9],
        [0, -1],
        [0, -1],
        [0, -1],
        [0, -1],
    ]
    assert r["foldtext"] == '✓ read_file {"path": "notes.txt"}  [2 lines]'
    # the window that showed the run live has the same folds, without a :TetherLog
    assert r["live_folds"] == r["folds"]


def test_progress_reaches_neovims_lsp_progress(read_run: tuple[Path, Outcome]) -> None:
    _, r = read_run
    token = r["run"]["params"]["workDoneToken"]
    ours = [p["value"] for p in r["progress"] if p["token"] == token]
    kinds = [v["kind"] for v in ours]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert set(kinds[1:-1]) == {"report"} and len(kinds) >= 5
    assert ours[0]["title"] == "Tether" and ours[0]["message"] == "what do my notes say?"
    assert ours[0]["cancellable"] is True
    assert "step 1 · read_file notes.txt" in [v.get("message") for v in ours]
    assert ours[-1]["message"] == "done"
    # vim.lsp.status() (what statuslines and fidget.nvim show) saw the run
    assert any("Tether" in s and "read_file" in s for s in r["status_seen"])


SLOW = script(
    {"text": "Thinking.", "toolCalls": [call("list_files")]},
    repeatLast=True,
    delaySeconds=600.0,  # a cancel that waited for the model would never end the test
)
EDIT = call("edit_file", path="src/app.py", old_text="'hello '", new_text="'hi '")
APP = ["def greet(name):", "    return 'hello ' + name"]


def app(nvim: Nvim) -> None:
    (nvim.workspace / "src").mkdir()
    (nvim.workspace / "src" / "app.py").write_text("\n".join(APP) + "\n")


def test_cancel_stops_a_slow_run(nvim: Nvim) -> None:
    app(nvim)
    r = nvim.run("cancel", SLOW, {"MODE": "delay"})
    result = r["run"]["result"]
    assert result["outcome"] == "cancelled"
    # No duration asserted (a loaded machine): the model would take 10 minutes, so a cancel
    # that waited for it never gets here. The real number: benchmarks' "cancel" scenario.
    assert r["transcript"][-1].startswith("■ cancelled · ")
    assert r["in_flight"] == 0


def test_cancel_while_an_approval_is_shown_removes_it(nvim: Nvim) -> None:
    app(nvim)
    r = nvim.run("cancel", script({"toolCalls": [EDIT]}), {"MODE": "approval"})
    assert r["marks_shown"] == 3 and r["maps_shown"] == 0  # shown inline, no key in the buffer
    assert r["run"]["result"]["outcome"] == "cancelled"
    assert r["marks_after"] == [] and r["maps_after"] == 0 and r["floats_after"] == 0
    assert r["buffer_after"] == APP
    assert (nvim.workspace / "src" / "app.py").read_text() == "\n".join(APP) + "\n"


def test_sessions_lists_and_continues_a_session(nvim: Nvim) -> None:
    (nvim.workspace / "notes.txt").write_text("hello\n")
    r = nvim.run("sessions", script({"text": "Hello there."}))
    first, second = r["runs"]
    assert [run["result"]["outcome"] for run in r["runs"]] == ["done", "done"]
    # the second run's model call carried the first run's conversation
    tokens = [run["result"]["usage"]["inputTokens"] for run in r["runs"]]
    assert tokens[1] > tokens[0], tokens
    session = first["result"]["sessionId"]
    assert second["params"]["sessionId"] == session
    assert second["result"]["sessionId"] == session
    assert second["params"]["prompt"] == "and now?"
    [picker] = r["selects"]  # the first :TetherSessions had nothing to list
    assert picker["prompt"] == "Continue a Tether session"
    # Each session says when it last ran and in which folder (the same first prompt twice
    # is told apart).
    [item] = picker["items"]
    when, folder, runs = item.removeprefix("first question  (").split(" · ")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", when), item
    assert folder == str(nvim.workspace) and runs == "1 run, done)"
    assert r["inputs"] == ["Tether (continue): "]
    [listed] = r["sessions"]
    assert listed["id"] == session and listed["runs"] == 2 and listed["outcome"] == "done"
    assert listed["prompt"] == "first question" and listed["last_prompt"] == "and now?"


def test_tether_continues_the_editor_session_and_tether_bang_starts_one(nvim: Nvim) -> None:
    (nvim.workspace / "notes.txt").write_text("hello\n")
    fast = nvim.tmp_path / "fast.json"
    fast.write_text(json.dumps(script({"text": "Quick."})))
    slow = script({"text": "Hello there."}, delaySeconds=2.0)  # ends after run three
    r = nvim.run("editor_session", slow, {"FAST_SCRIPT": str(fast)})
    assert r["in_flight_before"] == 1
    assert r["in_flight_after_two"] == 1  # refused, with a message saying what to do
    assert any("a run of this session is in flight" in n for n in r["notes"])
    assert r["in_flight_after_three"] == 2
    runs = {run["params"]["prompt"]: run for run in r["runs"]}
    # finished in this order: three (fast), four (fast, started as three ended), one, five
    assert [run["params"]["prompt"] for run in r["runs"]] == ["three", "four", "one", "five"]
    assert r["in_flight_at_four"] == ["one"]  # another session's run does not block :Tether
    assert "sessionId" not in runs["one"]["params"]  # the first run starts the session
    assert "sessionId" not in runs["three"]["params"]  # :Tether! starts a new one
    one, three = (runs[p]["result"]["sessionId"] for p in ("one", "three"))
    assert one != three
    # the next :Tether continues the latest editor session, whichever run ended last
    assert runs["four"]["params"]["sessionId"] == three
    assert runs["four"]["result"]["sessionId"] == three
    assert runs["five"]["params"]["sessionId"] == three  # one ending last did not take it back


def test_the_context_has_the_selection_its_text_the_screen_and_the_open_files(
    nvim: Nvim,
) -> None:
    text = nvim.workspace / "text.txt"
    more = [f"line {n}" for n in range(4, 121)]
    text.write_text("first line\nhéllo 🌍 world\nthird\n" + "\n".join(more) + "\n")
    for name in ("a.txt", "b.txt", "not-loaded.txt"):
        (nvim.workspace / name).write_text(name + "\n")
    r = nvim.run("context", script())
    uri = text.as_uri()
    a, b = ((nvim.workspace / n).as_uri() for n in ("a.txt", "b.txt"))
    encoding = r["encoding"]
    # "héllo " before the globe; the selection ends after the "w"
    start, end = {"utf-8": (7, 13), "utf-16": (6, 10), "utf-32": (6, 9)}[encoding]
    line_2 = {"utf-8": 17, "utf-16": 14, "utf-32": 13}[encoding]

    def screen(i: int) -> dict[str, Any]:
        top, bottom = r["screen"][i - 1]  # line('w0'), line('w$') when the run started
        width = len(more[bottom - 4])  # an ASCII line: the same in every encoding
        return {
            "start": {"line": top - 1, "character": 0},
            "end": {"line": bottom - 1, "character": width},
        }

    assert r["contexts"] == [
        {
            "prompt": "explain this",
            "context": {
                "uri": uri,
                "selection": {
                    "start": {"line": 1, "character": start},
                    "end": {"line": 1, "character": end},
                },
                "selectedText": "🌍 w",
                "visibleRange": screen(1),
                "openFiles": [uri, b, a],
            },
        },
        {
            "prompt": "explain these lines",
            "context": {
                "uri": uri,
                "selection": {
                    "start": {"line": 0, "character": 0},
                    "end": {"line": 1, "character": line_2},
                },
                "selectedText": "first line\nhéllo 🌍 world",
                "visibleRange": screen(2),
                "openFiles": [uri, b, a],
            },
        },
        {
            "prompt": "from the key",
            "context": {
                "uri": uri,
                "selection": {
                    "start": {"line": 2, "character": 0},
                    "end": {"line": 2, "character": 2},
                },
                "selectedText": "th",
                "visibleRange": screen(3),
                "openFiles": [uri, b, a],
            },
        },
        {
            "prompt": "just the file",
            "context": {"uri": uri, "visibleRange": screen(4), "openFiles": [uri, a, b]},
        },
    ]
    assert r["contexts"][3]["context"]["visibleRange"]["start"]["line"] == 49  # scrolled
    # the server took every context (none refused as invalid params)
    assert r["outcomes"] == ["done"] * 4


def test_sessions_keep_their_folder_for_the_next_neovim(nvim: Nvim) -> None:
    (nvim.workspace / "notes.txt").write_text("hello\n")
    nvim.run("sessions", script({"text": "Hello there."}))
    # A new Neovim: the server lists the session, the folder comes from Neovim's state.
    [picker] = nvim.run("session_list")["selects"]
    [item] = picker["items"]
    assert item.startswith("first question  (") and f" · {nvim.workspace} · 2 runs, done)" in item
    folders = nvim.tmp_path / "xdg" / "state" / "nvim" / "tether" / "session-folders.json"
    assert list(json.loads(folders.read_text()).values()) == [str(nvim.workspace)]
    folders.unlink()  # e.g. a session of the CLI or another editor: no folder known
    [picker] = nvim.run("session_list")["selects"]
    assert " · folder unknown · 2 runs, done)" in picker["items"][0]
