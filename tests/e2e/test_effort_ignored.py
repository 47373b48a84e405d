"""``/effort`` through a real ``tether serve`` (``agent/command``, as every front runs it)
when the session's provider cannot use the effort — the scripted model, Chat Completions to a
compatible server at ``baseUrl``, a model that does not think: the effort is set all the
same, and the answer says why it is not used yet and when it will be."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.providers.fakes import FakeApi
from tether.client.headless import connect

DOES_NOT_THINK = "does not think: it applies when you pick one that does"


def _settings(fake: FakeApi, tmp_path: Path, kind: str) -> dict[str, object]:
    state = {"stateDir": str(tmp_path / "state")}
    if kind == "scripted":
        return {"provider": "scripted", **state}
    if kind == "compatible":
        return {"provider": "openai", "baseUrl": fake.url + "/v1", "model": "qwen3", **state}
    if kind == "old claude":
        return {
            "provider": "anthropic",
            "baseUrl": fake.url,
            "model": "claude-3-5-haiku-20241022",
            **state,
        }
    return {"provider": "openai", "baseUrl": fake.url + "/v1", "openaiApi": "responses", **state}


@pytest.mark.parametrize(
    ("kind", "note"),
    [
        ("scripted", "the scripted model does not think: it applies with a model that does"),
        (
            "compatible",
            "Chat Completions to the server at baseUrl carries no effort (its own settings "
            'decide): it applies on OpenAI\'s API, or with openaiApi "responses"',
        ),
        ("old claude", f"the current model, claude-3-5-haiku-20241022, {DOES_NOT_THINK}"),
    ],
)
async def test_effort_says_when_the_session_cannot_use_it_and_sets_it_all_the_same(
    workspace: Path, tmp_path: Path, fake: FakeApi, kind: str, note: str
) -> None:
    async with connect(workspace, _settings(fake, tmp_path, kind)) as client:
        picked = await client.request("agent/command", {"name": "effort", "argument": "low"})
        shown = await client.request("agent/command", {"name": "effort"})
        off = await client.request("agent/command", {"name": "effort", "argument": "off"})
    assert picked["message"] == f"effort: low from the next message on; {note}"
    assert shown["message"] == f"effort: low; /effort off|low|medium|high changes it; {note}"
    assert off["message"] == "effort: off from the next message on"  # nothing to ignore


async def test_a_model_picked_that_does_not_think_is_named_escaped(
    workspace: Path, tmp_path: Path, fake: FakeApi
) -> None:
    async with connect(workspace, _settings(fake, tmp_path, "responses")) as client:
        thinks = await client.request("agent/command", {"name": "effort", "argument": "high"})
        await client.request("agent/command", {"name": "model", "argument": "gpt-4.1\x1b[2J"})
        ignored = await client.request("agent/command", {"name": "effort", "argument": "high"})
        await client.request("agent/command", {"name": "model", "argument": "gpt-5.4"})
        again = await client.request("agent/command", {"name": "effort", "argument": "high"})
    assert thinks["message"] == again["message"] == "effort: high from the next message on"
    assert ignored["message"] == (
        f"effort: high from the next message on; the current model, gpt-4.1\\x1b[2J, "
        f"{DOES_NOT_THINK}"
    )
