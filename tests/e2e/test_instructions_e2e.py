"""AGENTS.md reaches the model: an editor's run (its unsaved buffer wins) and a CLI run,
both against the fake OpenAI API; `tether config` lists the files found."""

from __future__ import annotations

from pathlib import Path

from tests.providers.fakes import FakeApi, Sse, openai_stream, system_text

from .cli import cli_env, tether
from .conftest import Editor

RULES = "Always run `make check` before answering.\n"


async def test_an_editor_run_tells_the_model_the_project_instructions(
    editor: Editor, workspace: Path, fake: FakeApi
) -> None:
    (workspace / "AGENTS.md").write_text("saved rules that the buffer replaces\n")
    fake.queue(Sse(openai_stream("ok", usage=(10, 2))))
    options = {"provider": "openai", "baseUrl": fake.url + "/v1", "model": "gpt-5.4"}
    await editor.open_session(workspace, options=options)
    editor.open_document(workspace / "AGENTS.md", RULES)
    result = await editor.run(prompt="hello", runId="r1")
    assert result["outcome"] == "done", result
    [request] = fake.requests
    system = system_text(request.body)
    assert f'<project-instructions file="AGENTS.md">\n{RULES}</project-instructions>' in system
    assert "saved rules" not in system


def test_a_cli_run_tells_the_model_the_project_instructions(tmp_path: Path, fake: FakeApi) -> None:
    home, root = tmp_path / "home", tmp_path / "home" / "code" / "p"
    root.mkdir(parents=True)
    (home / ".git").mkdir()  # the repository's root: read from there down
    (home / "AGENTS.md").write_text("House style: short names.\n")
    (root / "AGENTS.md").write_text(RULES)
    env = cli_env(tmp_path, home=home, OPENAI_API_KEY="sk-test", TETHER_BASE_URL=fake.url + "/v1")
    fake.queue(Sse(openai_stream("ok", usage=(10, 2))))
    out = tether(["run", "--provider", "openai", "--model", "gpt-5.4", "hi"], root, env)
    assert out.returncode == 0, out.stderr
    system = system_text(fake.requests[0].body)
    outer = system.index(f'<project-instructions file="{home / "AGENTS.md"}">')
    assert outer < system.index('<project-instructions file="AGENTS.md">\n' + RULES)

    shown = tether(["config"], root, env)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    start = lines.index(f"project instructions ({26 + len(RULES)} bytes):")
    assert lines[start + 1 : start + 3] == [
        f"  {home / 'AGENTS.md'}  26 bytes",
        f"  {root / 'AGENTS.md'}  {len(RULES)} bytes",
    ]
