"""A background job watched from a real Neovim: :TetherJobs, the job's buffer following its
output as it comes (agent/jobOutput), and stopping it from there (agent/jobStop)."""

from __future__ import annotations

from .conftest import Nvim, call, script

STEPPED = (
    ": \u202e\x1b[2J; echo line-1; while [ ! -e {go} ]; do sleep 0.02; done; echo line-2; "
    "exec sleep 300"
)


def test_a_jobs_buffer_follows_its_output_and_x_stops_it(nvim: Nvim) -> None:
    (nvim.workspace / "README.md").write_text("# demo\n")
    go = nvim.tmp_path / "go"
    turns = script({"toolCalls": [call("bash", command=STEPPED.format(go=go), background=True)]})
    r = nvim.run("jobs", script=turns, env={"GO": str(go)})
    pick, _again = r["selects"]  # the second shows the hidden buffer again
    assert pick["prompt"] == "Tether: jobs"
    [item] = pick["items"]
    assert item.startswith("job-1 · running · ") and "echo line-1" in item, item
    # The command is the model's text: shown escaped, in the list and in the buffer.
    assert ": \\u202e\\x1b[2J; echo line-1" in item and "\u202e" not in item and "\x1b" not in item
    first, second, hidden, again, stopped = r["seen"]
    assert first["shown"] and not first["modifiable"] and first["polling"]
    assert "line-1" in first["lines"] and "line-2" not in first["lines"], first
    assert first["lines"][0].startswith("job-1 · running · : \\u202e\\x1b[2J; echo line-1")
    assert second["lines"][-2:] == ["line-1", "line-2"], second
    assert not hidden["shown"] and not hidden["polling"]
    assert again["shown"] and again["polling"] and again["lines"] == second["lines"]
    assert "\u202e" not in first["lines"][0] and "\x1b" not in first["lines"][0]
    assert stopped["lines"][0].startswith("job-1 · stopped · "), stopped
    assert stopped["lines"][-2:] == ["line-1", "line-2"] and not stopped["polling"]
