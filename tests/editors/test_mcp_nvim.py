"""An MCP call in a real Neovim: the plugin's command-style approval shows the server, the
tool and the arguments (no plugin change), and the answer reaches the model."""

from __future__ import annotations

from ..mcp.conftest import alive, started_pids, write_notes_config
from .conftest import Nvim, app_project, call, decisions, env, script, tool_results

GO = "<leader>ta"


def test_an_mcp_call_asked_in_the_float_and_allowed(nvim: Nvim) -> None:
    app_project(nvim)
    marks = nvim.tmp_path / "marks"
    marks.mkdir()
    config = nvim.tmp_path / "xdg" / "config" / "tether"
    write_notes_config(config, marks)
    echo = call("mcp__notes__echo", text="hello from Neovim")
    r = nvim.run(
        "approve",
        script({"toolCalls": [echo]}, {"text": "It said hello."}),
        env(OPEN="README.md", KEYS=[GO + "a"], WATCHDOG_MS="150000"),
        timeout=180,
    )
    [shown] = r["shown"]
    assert shown["tool"] == "mcp__notes__echo" and shown["view"] == "float"
    assert shown["title"] == [[" Tether: MCP notes: echo "]]
    text = "\n".join(shown["float_lines"])
    assert 'notes › echo {"text": "hello from Neovim"}' in text
    assert "MCP server 'notes'" in text and "notes_server.py" in text
    run = r["run"]
    assert decisions(run) == ["allow"]
    [result] = tool_results(run)
    assert result["ok"] is True and "echo: hello from Neovim" in result["output"]
    assert run["result"]["outcome"] == "done"
    # The transcript names the call as people know it: the server's name, not mcp__notes__echo.
    transcript = "\n".join(r["transcript"])
    assert '✓ notes · echo {"text": "hello from Neovim"}' in transcript, transcript
    assert "mcp__notes__echo" not in transcript, transcript
    pids = started_pids(marks)
    assert len(pids) == 1 and not alive(pids[0])
