"""Property: no file changes and no command runs without an allow.

Random scripted runs (edits and writes of ordinary and sensitive files, commands, each
leaving a trace) meet random answers from the user (allow, allow-always, deny, errors,
nonsense) and a random ``autoApprove``; an independent model of the policy says which
calls may happen, and the disk must show exactly those. The model knows which paths are
sensitive from its own list, not from the server's.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tether.events import RunEvents
from tether.host import NoBuffers
from tether.policy.gate import ApprovalGate, ApprovalPolicy
from tether.providers.scripted import ScriptedProvider
from tether.run.loop import AgentLoop, Limits
from tether.tools.base import ToolDeps
from tether.tools.edits import EditFile, WriteFile
from tether.tools.registry import ToolRegistry
from tether.tools.shell import Bash
from tether.workspace.folders import Workspace
from tether.writes.disk import DiskEditor
from tether_protocol import ApprovalEvent, ApproveParams, ApproveResult, RunEvent, Script

TOOLS = ("edit_file", "write_file", "bash")
ANSWERS = st.sampled_from(["allow", "allow-always", "deny", "error", "none", "nonsense"])

# (template, sensitive?) — the oracle's own judgement of each target, by hand.
WRITE_TARGETS = (
    ("w{i}.txt", False),
    ("src/w{i}.py", False),
    (".github/w{i}.md", False),  # .github itself is not sensitive, its workflows are
    ("envs/w{i}.txt", False),
    (".git/hooks/w{i}", True),
    (".VSCode/w{i}.json", True),
    ("sub/../.github/workflows/w{i}.yml", True),
    (".env.w{i}", True),
    ("keys/w{i}.PEM", True),
    ("./.git/../.git/w{i}", True),
)
EDIT_TARGETS = (("shared.txt", False), (".vscode/settings.json", True))
COMMANDS = ("echo x >> b0.txt", "echo x >> b1.txt", "echo x >> b2.txt")


@dataclass(frozen=True)
class Step:
    tool: str
    target: int  # an index into the tool's targets (or COMMANDS)

    def call(self, i: int) -> dict[str, Any]:
        if self.tool == "edit_file":
            path = EDIT_TARGETS[self.target % len(EDIT_TARGETS)][0]
            return {
                "name": self.tool,
                "arguments": {"path": path, "old_text": f"T{i}.", "new_text": f"E{i}."},
            }
        if self.tool == "write_file":
            template = WRITE_TARGETS[self.target % len(WRITE_TARGETS)][0]
            return {
                "name": self.tool,
                "arguments": {"path": template.format(i=i), "content": f"W{i}\n"},
            }
        return {"name": self.tool, "arguments": {"command": COMMANDS[self.target % 3]}}

    @property
    def sensitive(self) -> bool:
        if self.tool == "edit_file":
            return EDIT_TARGETS[self.target % len(EDIT_TARGETS)][1]
        if self.tool == "write_file":
            return WRITE_TARGETS[self.target % len(WRITE_TARGETS)][1]
        return False

    def happened(self, root: Path, i: int) -> bool:
        if self.tool == "edit_file":
            path = EDIT_TARGETS[self.target % len(EDIT_TARGETS)][0]
            return f"E{i}." in (root / path).read_text()
        if self.tool == "write_file":
            template = WRITE_TARGETS[self.target % len(WRITE_TARGETS)][0]
            return (root / template.format(i=i)).exists()
        raise AssertionError("commands are counted per command")


STEPS = st.builds(Step, st.sampled_from(TOOLS), st.integers(0, 9))


class Sink:
    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def publish(self, event: RunEvent) -> None:
        self.events.append(event)


async def play(
    root: Path, steps: list[Step], answers: list[str], auto: frozenset[str]
) -> tuple[list[str], list[str], str]:
    """Run the steps: the titles the user was asked with, the decisions, the outcome."""
    pending = list(answers)
    titles: list[str] = []

    async def ask(request: ApproveParams) -> ApproveResult | None:
        titles.append(request.title)
        answer = pending.pop(0) if pending else "deny"
        if answer == "error":
            raise RuntimeError("the editor went away")
        if answer in ("none", "nonsense"):
            return None if answer == "none" else "yes"  # type: ignore[return-value]
        return ApproveResult(decision=answer)  # type: ignore[arg-type]

    turns = [{"toolCalls": [step.call(i)]} for i, step in enumerate(steps)]
    sink = Sink()
    events = RunEvents("r", [sink])
    editor = DiskEditor(ask)
    loop = AgentLoop(
        provider=ScriptedProvider(Script.model_validate({"turns": turns})),
        tools=ToolRegistry([EditFile(), WriteFile(), Bash()]),
        deps=ToolDeps(
            workspace=Workspace([root], NoBuffers()),
            run_id="r",
            editor=editor,
            gate=ApprovalGate(ApprovalPolicy(auto_approve=auto), editor, events),
        ),
        events=events,
        limits=Limits(max_steps=len(turns) + 1),
        system="",
        history=[],
    )
    state = await loop.run("go", "s")
    decisions = [e.decision for e in sink.events if isinstance(e, ApprovalEvent)]
    return titles, decisions, state.outcome or ""


def prepare(root: Path, count: int) -> None:
    text = "".join(f"T{i}.\n" for i in range(count))
    (root / "shared.txt").write_text(text)
    (root / ".vscode").mkdir()
    (root / ".vscode" / "settings.json").write_text(text)
    for folder in ("src", "sub", "keys", "envs", ".github/workflows", ".git/hooks"):
        (root / folder).mkdir(parents=True, exist_ok=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(STEPS, min_size=1, max_size=7),
    answers=st.lists(ANSWERS, max_size=7),
    auto=st.frozensets(st.sampled_from(TOOLS), max_size=3),
)
# A sensitive write under autoApprove must be asked (and is denied here).
@example(steps=[Step("write_file", 4)], answers=["deny"], auto=frozenset({"write_file"}))
# "allow always" on an ordinary edit does not cover a sensitive one.
@example(
    steps=[Step("edit_file", 0), Step("edit_file", 1)], answers=["allow-always"], auto=frozenset()
)
# "allow always" on one command covers that command only.
@example(
    steps=[Step("bash", 0), Step("bash", 1), Step("bash", 0)],
    answers=["allow-always", "deny"],
    auto=frozenset(),
)
def test_nothing_happens_without_an_allow(
    steps: list[Step], answers: list[str], auto: frozenset[str]
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        prepare(root, len(steps))
        titles, decisions, outcome = anyio.run(play, root, steps, answers, auto)
        # the third identical call ends the run (no-progress) before it is decided
        seen: dict[str, int] = {}
        for cut, step in enumerate(steps):
            key = repr(step.call(cut))
            seen[key] = seen.get(key, 0) + 1
            if seen[key] == 3:
                steps = steps[:cut]
                assert outcome == "no-progress"
                break
        else:
            assert outcome == "done"
        # the oracle: the policy as the contract states it, independent of the code
        always_tools: set[str] = set()
        always_commands: set[str] = set()
        pending = list(answers)
        runs = {command: 0 for command in COMMANDS}
        asked_sensitive = 0
        for i, step in enumerate(steps):
            command = COMMANDS[step.target % 3] if step.tool == "bash" else ""
            if step.sensitive:
                free = False  # never without asking, whatever autoApprove or always says
            elif step.tool == "bash":
                free = step.tool in auto or command in always_commands
            else:
                free = step.tool in auto or step.tool in always_tools
            if free:
                allowed = True
            else:
                asked_sensitive += step.sensitive
                answer = pending.pop(0) if pending else "deny"
                allowed = answer in ("allow", "allow-always")
                if answer == "allow-always" and not step.sensitive:
                    (always_commands if step.tool == "bash" else always_tools).add(
                        command or step.tool
                    )
            if step.tool == "bash":
                runs[command] += allowed
            else:
                assert step.happened(root, i) == allowed, (i, step, answers, auto)
            assert (decisions[i] in ("allow", "allow-always", "auto")) == allowed, (i, step)
        for number, command in enumerate(COMMANDS):
            ran = root / f"b{number}.txt"
            lines = ran.read_text().count("x\n") if ran.exists() else 0
            assert lines == runs[command], (command, steps, answers, auto)
        # every sensitive question says why it is asked
        assert sum(" — " in title for title in titles) == asked_sensitive, titles
