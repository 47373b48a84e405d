"""The editor's copy of a long tool output keeps its head and its tail, like the model's."""

from __future__ import annotations

from pathlib import Path

from tether_protocol import ToolResultEvent

from .conftest import Editor, script


async def test_a_long_output_shows_its_end_where_a_test_run_reports(
    editor: Editor, workspace: Path
) -> None:
    command = "seq 1 6000; echo '=== 3 failed, 120 passed ==='"
    await editor.open_session(
        workspace,
        options={"autoApprove": ["bash"]},
        script=script({"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}),
    )
    result = await editor.run(prompt="run the tests", runId="r1")
    assert result["outcome"] == "done"
    [event] = [e for e in editor.events_of("r1") if isinstance(e, ToolResultEvent)]
    output = event.output
    assert output.startswith("exit code: 0\n1\n2\n3\n")
    assert output.rstrip().endswith("5999\n6000\n=== 3 failed, 120 passed ===")
    assert "characters cut] …" in output  # marked where cut
    assert len(output) < 4200  # a preview, not the whole output
