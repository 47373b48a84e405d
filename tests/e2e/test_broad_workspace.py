"""A workspace of ``/``, the home folder or a folder above it is refused, unless the user's
own config file says ``allowBroadWorkspace = true``: ``tether acp`` answers ``session/new``
and ``session/load`` with ``-32602`` naming why and the fix, ``tether serve`` initializes
(the editor stays usable), shows why and refuses every run, and ``tether run`` and the chat
say why and exit 2. No project file, editor setting or ACP parameter can allow it.

Before, each of them opened such a folder as a project: its start-up files, keys and
Tether's own settings became project files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.acp.client import RequestError
from tests.acp.recorder import NOTHING, RecordingClient
from tests.acp.tether import tether_acp, turns

from .cli import cli_env, tether
from .raw_client import RawServer
from .test_cli_terminal import Terminal

ANSWER = turns({"text": "fine"})
FIX = "allowBroadWorkspace = true in "


def home_in(base: Path) -> Path:
    """``base / "home"`` (the home folder ``tether_acp(…, base, …)`` gives the server) with a
    project folder in it."""
    home = base / "home"
    (home / "proj").mkdir(parents=True, exist_ok=True)
    return home


def user_config(home: Path, text: str) -> None:
    (home / ".config" / "tether").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "tether" / "config.toml").write_text(text)


def broad_root(base: Path, kind: str) -> tuple[Path, str]:
    """A root of ``kind`` for the home folder ``base / "home"``, and what the refusal calls
    it."""
    return {
        "home": (base / "home", "is your home folder"),
        "above": (base, "is a folder above your home folder"),
        "/": (Path("/"), "is the file system's root"),
    }[kind]


KINDS = ["home", "above", "/"]


def said_why(message: str) -> bool:
    """The refusal names the home folder and the fix, or that only the user's own file may
    say ``allowBroadWorkspace``."""
    only_yours = "allowBroadWorkspace: only your own config.toml may set it"
    return ("is your home folder" in message and FIX in message) or only_yours in message


# --- tether acp ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_acp_refuses_a_broad_session_folder_naming_why_and_the_fix(
    tmp_path: Path, kind: str
) -> None:
    home = home_in(tmp_path)
    root, said = broad_root(tmp_path, kind)
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(home / "proj", tmp_path, ANSWER, client) as agent:
        with pytest.raises(RequestError) as refused:
            await agent.request("session/new", {"cwd": str(root), "mcpServers": []})
        assert refused.value.code == -32602
        message = str(refused.value)
        assert f"session/new: the workspace folder {root} {said}" in message, message
        assert f"{FIX}{home / '.config' / 'tether' / 'config.toml'}" in message
        # a folder inside the home folder is a project
        session = await agent.new_session(home / "proj")
        assert (await agent.prompt(session, "hi"))["stopReason"] == "end_turn"
        client.assert_clean()


async def test_acp_refuses_to_load_a_session_into_the_home_folder(tmp_path: Path) -> None:
    home = home_in(tmp_path)
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(home / "proj", tmp_path, ANSWER, client) as agent:
        session = await agent.new_session(home / "proj")
        assert (await agent.prompt(session, "hi"))["stopReason"] == "end_turn"
        params = {"sessionId": session, "cwd": str(home), "mcpServers": []}
        with pytest.raises(RequestError) as refused:
            await agent.request("session/load", params)
        assert refused.value.code == -32602
        assert "session/load: the workspace folder" in str(refused.value)
        assert "is your home folder" in str(refused.value)
        await agent.load_session(session, home / "proj")  # where it was: loaded


@pytest.mark.parametrize(
    ("project", "trusted"),
    [("allowBroadWorkspace = true\n", False), ("allowBroadWorkspace = true\n", True)],
)
async def test_acp_a_project_file_or_the_client_cannot_allow_a_broad_folder(
    tmp_path: Path, project: str, trusted: bool
) -> None:
    home = home_in(tmp_path)
    (home / ".tether").mkdir()
    (home / ".tether" / "config.toml").write_text(project)
    if trusted:
        user_config(home, f"trustedProjects = [{json.dumps(str(home))}]\n")
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(home / "proj", tmp_path, ANSWER, client) as agent:
        for extra in ({}, {"allowBroadWorkspace": True, "_meta": {"allowBroadWorkspace": True}}):
            params: dict[str, Any] = {"cwd": str(home), "mcpServers": [], **extra}
            with pytest.raises(RequestError) as refused:
                await agent.request("session/new", params, checked=not extra)
            assert refused.value.code == -32602
            assert said_why(str(refused.value)), str(refused.value)


async def test_acp_the_users_own_file_allows_the_home_folder(tmp_path: Path) -> None:
    home = home_in(tmp_path)
    user_config(home, "allowBroadWorkspace = true\n")
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(home / "proj", tmp_path, ANSWER, client) as agent:
        session = await agent.new_session(home)
        assert (await agent.prompt(session, "hi"))["stopReason"] == "end_turn"


# --- tether serve ----------------------------------------------------------------------------


def lsp_env(tmp_path: Path, home: Path) -> dict[str, str]:
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


def initialize(server: RawServer, root: Path, options: dict[str, Any] | None = None) -> None:
    params = {
        "processId": None,
        "rootUri": root.as_uri(),
        "capabilities": {},
        "initializationOptions": {"provider": "scripted", "script": {"turns": [{"text": "ok"}]}}
        | (options or {}),
    }
    server.request(1, "initialize", params)
    assert "result" in server.answer(1, timeout=30)  # the editor stays usable
    server.notify("initialized", {})


def shown_errors(server: RawServer) -> list[str]:
    return [
        m["params"]["message"]
        for m in server.pending
        if m.get("method") == "window/showMessage" and m["params"]["type"] == 1
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_serve_initializes_shows_why_and_refuses_runs_in_a_broad_folder(
    tmp_path: Path, kind: str
) -> None:
    home = home_in(tmp_path)
    root, said = broad_root(tmp_path, kind)
    server = RawServer(tmp_path, lsp_env(tmp_path, home))
    try:
        initialize(server, root)
        server.request(2, "agent/run", {"prompt": "hi", "runId": "r1"})
        refused = server.answer(2, timeout=30)
        assert refused["error"]["code"] == -32602, refused
        message = refused["error"]["message"]
        assert f"the workspace folder {root} {said}" in message, message
        assert FIX in message
        assert any(f"{root} {said}" in m and FIX in m for m in shown_errors(server))
        assert not list((tmp_path / "state").glob("**/*.jsonl"))  # no run was logged
    finally:
        server.close()


def test_serve_the_editors_settings_cannot_allow_a_broad_folder(tmp_path: Path) -> None:
    home = home_in(tmp_path)
    server = RawServer(tmp_path, lsp_env(tmp_path, home))
    try:
        initialize(server, home, {"allowBroadWorkspace": True})
        server.request(2, "agent/run", {"prompt": "hi", "runId": "r1"})
        refused = server.answer(2, timeout=30)
        assert refused["error"]["code"] == -32602
        assert said_why(refused["error"]["message"]), refused
    finally:
        server.close()


@pytest.mark.parametrize("allowed", [False, True])
def test_serve_runs_in_a_project_of_the_home_folder_and_in_it_when_allowed(
    tmp_path: Path, allowed: bool
) -> None:
    home = home_in(tmp_path)
    if allowed:
        user_config(home, "allowBroadWorkspace = true\n")
    server = RawServer(tmp_path, lsp_env(tmp_path, home))
    try:
        initialize(server, home if allowed else home / "proj")
        server.request(2, "agent/run", {"prompt": "hi", "runId": "r1"})
        answer = server.answer(2, timeout=60)
        assert answer["result"]["outcome"] == "done", answer
        assert shown_errors(server) == []
    finally:
        server.close()


# --- tether run and the chat -----------------------------------------------------------------


def run_env(tmp_path: Path, home: Path) -> dict[str, str]:
    return cli_env(
        tmp_path,
        home=home,
        TETHER_PROVIDER="scripted",
        TETHER_SCRIPT=json.dumps({"turns": [{"text": "fine"}]}),
    )


@pytest.mark.parametrize("kind", KINDS)
def test_tether_run_says_why_and_exits_2_in_a_broad_folder(tmp_path: Path, kind: str) -> None:
    home = home_in(tmp_path)
    root, said = broad_root(tmp_path, kind)
    done = tether(["run", "hi", "--cwd", str(root)], home / "proj", run_env(tmp_path, home))
    assert done.returncode == 2, done.stderr
    assert f"the workspace folder {root} {said}" in done.stderr
    assert FIX in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("allowed", [False, True])
def test_tether_run_runs_in_a_project_of_the_home_folder_and_in_it_when_allowed(
    tmp_path: Path, allowed: bool
) -> None:
    home = home_in(tmp_path)
    if allowed:
        user_config(home, "allowBroadWorkspace = true\n")
    cwd = home if allowed else home / "proj"
    done = tether(["run", "hi"], cwd, run_env(tmp_path, home))
    assert done.returncode == 0, done.stderr
    assert "fine" in done.stdout


def test_tether_run_a_project_file_cannot_allow_the_home_folder(tmp_path: Path) -> None:
    home = home_in(tmp_path)
    (home / ".tether").mkdir()
    (home / ".tether" / "config.toml").write_text("allowBroadWorkspace = true\n")
    done = tether(["run", "hi"], home, run_env(tmp_path, home))
    assert done.returncode == 2 and "is your home folder" in done.stderr


def test_the_chat_says_why_and_exits_2_in_the_home_folder(tmp_path: Path) -> None:
    home = home_in(tmp_path)
    term = Terminal([], run_env(tmp_path, home), home)
    term.expect("is your home folder")
    assert term.wait(timeout=30) == 2, term.text
    assert "allowBroadWorkspace = true in" in term.text


def test_in_an_allowed_home_folder_commands_are_not_scanned_and_edits_are_kept(
    tmp_path: Path,
) -> None:
    """A command's checkpoint scans every file of the workspace: in the home folder that is
    every file of the user's (up to 200,000, each read and kept in the store). There, its
    checkpoint says why it has no change set; an edit's checkpoint keeps its file as anywhere."""
    home = home_in(tmp_path)
    user_config(home, "allowBroadWorkspace = true\n")
    (home / "keys.txt").write_text("KEPT-NOWHERE-3f9a\n")
    (home / "notes.txt").write_text("old\n")
    steps = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "printf made > made.txt"}}]},
        {
            "toolCalls": [
                {"name": "write_file", "arguments": {"path": "notes.txt", "content": "new\n"}}
            ]
        },
        {"text": "done"},
    ]
    server = RawServer(tmp_path, lsp_env(tmp_path, home))
    try:
        initialize(
            server, home, {"script": {"turns": steps}, "autoApprove": ["bash", "write_file"]}
        )
        server.request(2, "agent/run", {"prompt": "go", "runId": "r1"})
        ran = server.answer(2, timeout=60)["result"]
        assert ran["outcome"] == "done", ran
        server.request(3, "agent/checkpoints", {"sessionId": ran["sessionId"]})
        [command, edit] = server.answer(3, timeout=30)["result"]["checkpoints"]
    finally:
        server.close()
    assert (home / "made.txt").read_text() == "made"
    assert command["tool"] == "bash" and command["files"] == []
    assert command["incomplete"] == (
        f"the workspace folder {home.resolve()} is your home folder: what commands change there "
        "is not scanned (edits are kept)"
    )
    assert edit["tool"] == "write_file" and "incomplete" not in edit
    assert [(f["path"], f["change"], f["restorable"]) for f in edit["files"]] == [
        ("notes.txt", "modified", True)
    ]
    blobs = tmp_path / "state" / "checkpoints" / "blobs"
    stored = {p.read_bytes() for p in blobs.rglob("*") if p.is_file()}
    assert stored == {b"old\n", b"new\n"}  # nothing else of the home folder was read into it
