"""MCP tools over stdio from a real server (the SDK's MCPServer in ``notes_server.py``),
called by the scripted model through the real approval gate: what reaches the model, what
is asked, what comes back, what a failing server costs (nothing but a tool error), and
that no process outlives the hub."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import anyio.lowlevel

from tether.mcp.hub import McpHub
from tether.mcp.registry import RunTools
from tether.policy.gate import ApprovalPolicy
from tether.prompt.untrusted import frame
from tether.tools.registry import ToolRegistry
from tether_protocol import CommandPreview, McpServerSettings, Rule

from ..waiting import wait_until
from .conftest import alive, notes, run_calls, started_pids

ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "OPENAI_API_KEY": "sk-secret", "LANG": "C.UTF-8"}


def call(tool: str, **arguments: object) -> dict[str, object]:
    return {"name": f"mcp__notes__{tool}", "arguments": arguments}


async def started(hub: McpHub, name: str = "notes") -> None:
    hub.start()
    await hub.servers[name].wait_ready()
    assert hub.servers[name].failure is None, hub.servers[name].failure


async def test_tools_reach_the_model_with_schema_and_every_call_is_asked(tmp_path: Path) -> None:
    async with McpHub(ENV) as hub:
        await hub.configure({"notes": notes(tmp_path, disabledTools=["garbage"])}, tmp_path)
        await started(hub)
        specs = {s.name: s for s in RunTools(ToolRegistry([]), hub).specs()}
        assert "mcp__notes__echo" in specs and "mcp__notes__garbage" not in specs
        echo = specs["mcp__notes__echo"]
        assert echo.parameters["properties"]["text"]["type"] == "string"
        assert "Say the text back" in echo.description and "notes" in echo.description

        ran = await run_calls(hub, tmp_path, [call("echo", text="hi")])
        [asked] = ran.asker.asked
        assert asked.tool == "mcp__notes__echo"
        assert isinstance(asked.preview, CommandPreview)
        assert asked.preview.command == 'notes › echo {"text": "hi"}'
        assert "MCP server 'notes'" in asked.preview.cwd and "notes_server.py" in asked.preview.cwd
        assert asked.suggested_patterns == ["*"]
        [result] = ran.results()
        assert not result.is_error
        assert result.content == frame("mcp__notes__echo", result.call_id, "echo: hi", [])


async def test_a_denied_call_never_reaches_the_server(tmp_path: Path) -> None:
    async with McpHub(ENV) as hub:
        await hub.configure({"notes": notes(tmp_path)}, tmp_path)
        await started(hub)
        ran = await run_calls(hub, tmp_path, [call("echo", text="no")], answer="deny")
        assert len(ran.asker.asked) == 1 and ran.outcome == "done"
        [result] = ran.results()
        assert result.is_error and "the user denied it" in result.content
        assert not (tmp_path / "called-echo").exists()


async def test_rules_auto_approve_and_read_only_hints(tmp_path: Path) -> None:
    async with McpHub(ENV) as hub:
        await hub.configure(
            {
                "notes": notes(tmp_path),
                "trusting": notes(tmp_path, trustReadOnlyHints=True),
            },
            tmp_path,
        )
        await started(hub)
        await started(hub, "trusting")
        # autoApprove may name a server's every tool
        ran = await run_calls(
            hub, tmp_path, [call("echo", text="a")], auto_approve=["mcp__notes__*"]
        )
        assert ran.asker.asked == [] and not ran.results()[0].is_error
        # a readOnlyHint alone allows nothing ...
        ran = await run_calls(hub, tmp_path, [call("lookup", key="k")], answer="deny")
        assert len(ran.asker.asked) == 1
        # ... unless the user's settings trust that server's hints
        trusted = {"name": "mcp__trusting__lookup", "arguments": {"key": "k"}}
        ran = await run_calls(hub, tmp_path, [trusted])
        assert ran.asker.asked == []
        assert json.loads(ran.results()[0].content.split("\n", 1)[1].rsplit("\n", 1)[0]) == {
            "key": "k",
            "note": "the note of k",
        }
        # but not the server's other tools, nor past a deny rule
        ran = await run_calls(
            hub, tmp_path, [{"name": "mcp__trusting__echo", "arguments": {"text": "x"}}]
        )
        assert len(ran.asker.asked) == 1
        deny = ApprovalPolicy(
            session_rules=[Rule(tool="mcp__trusting__*", pattern="*", decision="deny")]
        )
        ran = await run_calls(hub, tmp_path, [trusted], policy=deny)
        assert ran.asker.asked == [] and ran.results()[0].is_error
        assert "rule denies it" in ran.results()[0].content
        # a session rule for one tool
        allow = ApprovalPolicy(
            session_rules=[Rule(tool="mcp__notes__echo", pattern="*", decision="allow")]
        )
        ran = await run_calls(hub, tmp_path, [call("echo", text="b"), call("fail")], policy=allow)
        assert [a.tool for a in ran.asker.asked] == ["mcp__notes__fail"]


async def test_results_errors_images_and_the_environment(tmp_path: Path) -> None:
    async with McpHub(ENV) as hub:
        await hub.configure(
            {"notes": notes(tmp_path, env={"NOTES_TOKEN": "${OPENAI_API_KEY}-x"})}, tmp_path
        )
        await started(hub)
        ran = await run_calls(
            hub, tmp_path, [call("fail", reason="nope"), call("picture"), call("environment")]
        )
        failed, picture, environment = ran.results()
        assert failed.is_error and "MCP server 'notes': fail failed" in failed.content
        assert not picture.is_error
        assert "a red dot" in picture.content and "an image (image/png" in picture.content
        names = environment.content.split("\n")[1].split()
        # the allow-listed variables and the configured ones; no secret of Tether's own
        assert "OPENAI_API_KEY" not in names and {"PATH", "HOME", "NOTES_TOKEN"} <= set(names)
        ran = await run_calls(hub, tmp_path, [call("echo", text="t")])
        assert "(token sk-secret-x)" in ran.results()[0].content


async def test_a_crash_a_flood_and_garbage_are_tool_errors_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    async with McpHub(ENV) as hub:
        await hub.configure({"notes": notes(tmp_path)}, tmp_path)
        await started(hub)
        ran = await run_calls(
            hub,
            tmp_path,
            [
                call("crash", code=7),
                call("echo", text="after the crash"),
                call("flood", megabytes=20),
                call("echo", text="after the flood"),
                call("garbage"),
                call("echo", text="after the garbage"),
            ],
        )
        assert ran.outcome == "done"
        crash, echo1, flood, echo2, garbage, echo3 = ran.results()
        assert crash.is_error and "MCP server 'notes' exited (code 7)" in crash.content
        assert "crashing on purpose" in crash.content
        assert flood.is_error and "was cut off: it sent a message longer than" in flood.content
        assert garbage.is_error and "was cut off: it sent a malformed message" in garbage.content
        for echo in (echo1, echo2, echo3):  # started again by the next call
            assert not echo.is_error and "echo: after the" in echo.content
        assert len(started_pids(tmp_path)) == 4
    for pid in started_pids(tmp_path):
        assert not alive(pid), pid


async def test_a_call_past_its_timeout_is_cancelled_on_the_server(tmp_path: Path) -> None:
    async with McpHub(ENV) as hub:
        await hub.configure({"notes": notes(tmp_path, toolTimeoutSeconds=1)}, tmp_path)
        await started(hub)
        ran = await run_calls(hub, tmp_path, [call("hang"), call("echo", text="still here")])
        hang, echo = ran.results()
        assert hang.is_error and "hang timed out after 1 s (toolTimeoutSeconds)" in hang.content
        assert not echo.is_error
        await wait_until(lambda: (tmp_path / "cancelled").exists(), "the server's cancelled call")


async def test_cancelling_the_run_cancels_the_call_on_the_server(tmp_path: Path) -> None:
    async with McpHub(ENV) as hub:
        await hub.configure({"notes": notes(tmp_path)}, tmp_path)
        await started(hub)
        async with anyio.create_task_group() as tasks:
            ran: list[object] = []

            async def run() -> None:
                ran.append(await run_calls(hub, tmp_path, [call("hang")]))

            tasks.start_soon(run)
            # the call is in flight once the gate allowed it
            await wait_until(lambda: hub.servers["notes"].running, "the server")
            await anyio.lowlevel.checkpoint()
            tasks.cancel_scope.cancel()
        hub_server = hub.servers["notes"]
        assert hub_server.running
    # the hub is closed: nothing of the server is left
    for pid in started_pids(tmp_path):
        assert not alive(pid), pid


async def test_a_server_that_cannot_start_is_one_warning_and_the_others_work(
    tmp_path: Path,
) -> None:
    warnings: list[str] = []
    async with McpHub(ENV, warnings.append) as hub:
        await hub.configure(
            {
                "broken": McpServerSettings(command="/nonexistent/mcp-server"),
                "notes": notes(tmp_path),
            },
            tmp_path,
        )
        await started(hub)
        await hub.servers["broken"].wait_ready()
        await wait_until(lambda: warnings, "the warning")
        hub.warn_failed()  # said once, however often asked
        assert len(warnings) == 1 and "MCP server 'broken' cannot start" in warnings[0]
        ran = await run_calls(
            hub,
            tmp_path,
            [{"name": "mcp__broken__x", "arguments": {}}, call("echo", text="fine")],
        )
        broken, echo = ran.results()
        assert broken.is_error and "unknown tool 'mcp__broken__x'" in broken.content
        assert not echo.is_error


async def test_every_process_of_a_server_ends_with_the_hub(tmp_path: Path) -> None:
    async with McpHub(ENV) as hub:
        await hub.configure({"notes": notes(tmp_path)}, tmp_path)
        await started(hub)
        ran = await run_calls(hub, tmp_path, [call("spawn")])
        child = int(ran.results()[0].content.split("\n")[1])
        assert alive(child)
    pids = started_pids(tmp_path)
    assert child in pids and len(pids) == 2
    for pid in pids:
        assert not alive(pid), pid


async def test_servers_asked_to_start_before_the_hub_runs_start_when_it_does(
    tmp_path: Path,
) -> None:
    """A front may configure and start its hub before the hub's task has run (``tether
    acp`` at ``session/new``, then a prompt at once): the servers start once it runs."""
    tiny = Path(__file__).parents[1] / "acp" / "tiny_mcp.py"
    settings = McpServerSettings(
        command=sys.executable, args=[str(tiny)], env={"TINY_MCP_CALLS": str(tmp_path / "c")}
    )
    hub = McpHub({"PATH": "/usr/bin:/bin"})
    await hub.configure({"tiny": settings}, tmp_path)
    hub.start()  # before the hub runs: remembered
    async with hub:
        await hub.ready(60)
        assert [t.name for t in hub.tools()] == ["mcp__tiny__echo"]
