"""Promise: policy by capability, not by name.

- A read-only session runs no call that may change anything — an edit, a command the
  built-in read-only rules do not allow, an MCP tool its server does not mark read-only (or
  marks destructive) — whatever the tool is called, whoever provides it, and whatever
  ``autoApprove``, the rules, "allow always" or a trusted hint say; it is refused before any
  of them is consulted, without asking, and the model reads why. What only reads still runs.
- An MCP rule or ``autoApprove`` entry written for server A never covers a tool of a server
  B ≠ A, whatever the two names are: separators, dots, underscores, unicode, names the
  model-facing sanitising merges or cuts with a hash.

Calls go through the real tool registry and approval gate, with the real built-in tools in a
real workspace (a call wrongly allowed would really run) and MCP tools made as the hub makes
them (``mcp_tool``, named by ``unique_names``) over a fake server that records its calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from tether.events import RunEvents
from tether.host import NoBuffers
from tether.mcp.names import unique_names
from tether.mcp.server import RemoteTool
from tether.mcp.tools import mcp_tool
from tether.policy.gate import ApprovalGate, ApprovalPolicy
from tether.policy.match import InvalidPattern, check_pattern
from tether.policy.store import RuleStore
from tether.providers.base import ToolCall
from tether.tools import build_tools
from tether.tools.base import ToolDeps, ToolResult
from tether.tools.registry import ToolRegistry
from tether.workspace.folders import Workspace
from tether.writes.disk import DiskEditor
from tether_protocol import ApproveParams, ApproveResult, CommandPreview, Rule, RunEvent

KEPT = "a line\nanother line\n"


@dataclass
class FakeServer:
    """What ``McpTool`` uses of an MCP server; records the calls that reach it."""

    name: str
    trusts_read_only_hints: bool = False
    called: list[str] = field(default_factory=list)

    def where(self) -> str:
        return "a fake server"

    async def call(self, tasks: Any, tool: str, arguments: dict[str, Any]) -> Any:
        self.called.append(tool)
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])


def remote(name: str, *, read_only: bool = False, destructive: bool = False) -> RemoteTool:
    marked = {"destructive_hint": True} if destructive else {}
    return RemoteTool(name, "", {"type": "object"}, read_only, **marked)


def named_by(written: str) -> tuple[str, str] | None:
    """The oracle: the server and tool a rule's ``mcp__<server>__<tool>`` names — the one
    way to cut it at a ``__`` into two non-empty names, or None when there is not exactly
    one (a name that could be read as naming another server names none)."""
    if not written.startswith("mcp__"):
        return None
    rest = written[5:]
    cuts = {
        (rest[:i], rest[i + 2 :])
        for i in range(len(rest))
        if rest[i : i + 2] == "__" and rest[:i] and rest[i + 2 :]
    }
    return cuts.pop() if len(cuts) == 1 else None


class Asker:
    """The user: records every question and answers it ``allow``."""

    def __init__(self) -> None:
        self.asked: list[ApproveParams] = []

    async def ask_approval(self, request: ApproveParams, change: object = None) -> ApproveResult:
        self.asked.append(request)
        return ApproveResult(decision="allow")


@dataclass
class Sink:
    events: list[RunEvent] = field(default_factory=list)

    def publish(self, event: RunEvent) -> None:
        self.events.append(event)


def registry_with(
    servers: Sequence[tuple[FakeServer, RemoteTool]], builtins: bool = True
) -> tuple[ToolRegistry, dict[tuple[str, str], str]]:
    """The built-in tools and the servers' tools, model-facing names given as the hub
    gives them (one ``taken`` set across servers); each MCP tool's name by its identity."""
    tools: list[Any] = []
    if builtins:
        base = build_tools()
        tools = [base.get(name) for name in base.names]
    taken: set[str] = set()
    names: dict[tuple[str, str], str] = {}
    for server, listed in servers:
        for tool, name in unique_names(server.name, [listed.name], taken).items():
            tools.append(mcp_tool(name, server, listed, None))  # type: ignore[arg-type]
            names[(server.name, tool)] = name
    return ToolRegistry(tools), names


async def execute(
    registry: ToolRegistry,
    root: Path,
    policy: ApprovalPolicy,
    name: str,
    arguments: dict[str, Any] | None = None,
) -> tuple[ToolResult, Asker]:
    asker = Asker()
    events = RunEvents("r", [Sink()])
    gate = ApprovalGate(policy, DiskEditor(asker.ask_approval), events)
    deps = ToolDeps(
        workspace=Workspace([root], NoBuffers()),
        run_id="r",
        editor=DiskEditor(asker.ask_approval),
        gate=gate,
    )
    return await registry.execute(ToolCall("c", name, arguments or {}), deps), asker


# --- MCP rules name one server ---------------------------------------------------------

PIECES = (
    *("notes", "beta", "n", "s", "x", "_", "__", "___", ".", "..", "-", "*", "/", " "),
    *("é", "笔记", "\u200b", "ｎotes", "ß", "İ", "\u202e", "s" * 40, "t" * 70),
)
"""What server and tool names are made of: the separators the sanitising merges (``.``,
``_``, ``-``, space, ``/``), the rules' own separators (``__``, ``*``), unicode (which the
sanitising turns into ``_``) and lengths that get a name cut with a hash."""

names_of_pieces = st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map("".join)


PLAIN = ("notes", "n", "beta", "notes-beta", "x1", "s" * 50)
"""Names the sanitising keeps as they are (the prefix a rule names)."""
SEPARATORS = (".", "..", "_", "__", "___", "-", " ", "/", "é", "\u200b", "*")


@st.composite
def two_servers(draw: st.DrawFn) -> tuple[str, str]:
    """Two different server names, often one a near spelling of the other: the other with
    a separator and more after it, a separator before it or after it, or respelled."""
    a = draw(st.one_of(st.sampled_from(PLAIN), names_of_pieces))
    sep = draw(st.sampled_from(SEPARATORS))
    more = draw(st.one_of(st.sampled_from(PLAIN), names_of_pieces))
    b = draw(
        st.one_of(
            names_of_pieces,
            st.sampled_from(
                [
                    a + sep + more,
                    a + sep,
                    more + sep + a,
                    sep + a,
                    a.replace(".", "_"),
                    a.replace("_", "."),
                    a[:-1] or sep,
                    a.upper(),
                ]
            ),
        )
    )
    assume(a != b)
    return a, b


@st.composite
def rule_texts_for(draw: st.DrawFn, server: str) -> str:
    """A rule's ``tool`` as someone would write it for ``server``: every tool, or one."""
    tool = draw(st.one_of(st.just("*"), names_of_pieces))
    return f"mcp__{server}__{tool}"


async def check_servers(
    root: Path, a: str, b: str, tool_a: str, tool_b: str, written: str, way: str, whose: str
) -> None:
    """Server A's rule ``written`` (as ``autoApprove`` or a rule of decision ``way``) and a
    call of ``whose`` tool: B's is asked as if there were no rule; A's is decided by it
    when the rule names it."""
    server_a, server_b = FakeServer(a), FakeServer(b)
    registry, names = registry_with(
        [(server_a, remote(tool_a)), (server_b, remote(tool_b))], builtins=False
    )
    if way == "autoApprove":
        policy = ApprovalPolicy(auto_approve=frozenset({written}))
    else:
        policy = ApprovalPolicy(session_rules=[Rule(tool=written, pattern="*", decision=way)])
    if whose == "B":
        result, asker = await execute(registry, root, policy, names[(b, tool_b)])
        # asked (and allowed by the user): neither allowed nor denied by A's rule
        assert len(asker.asked) == 1, (written, way, names)
        assert result.ok and server_b.called == [tool_b]
    elif named_by(written) in ((a, "*"), (a, tool_a)):
        result, asker = await execute(registry, root, policy, names[(a, tool_a)])
        assert len(asker.asked) == (way == "ask"), (written, way)
        assert result.ok == (way != "deny"), (written, way)
        assert server_a.called == ([tool_a] if way != "deny" else [])


ways = st.sampled_from(["autoApprove", "allow", "ask", "deny"])


@st.composite
def written_for_a(draw: st.DrawFn) -> tuple[tuple[str, str], tuple[str, str], str]:
    """Two servers, their tools, and a rule written for the first: for every tool, for
    its tool, or for the name of the other's tool."""
    a, b = draw(two_servers())
    tool_a, tool_b = draw(names_of_pieces), draw(names_of_pieces)
    written = draw(st.one_of(rule_texts_for(a), st.just(f"mcp__{a}__{tool_b}")))
    assume(len(written) <= 200)  # the longest Rule.tool
    return (a, b), (tool_a, tool_b), written


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=written_for_a(), way=ways)
def test_a_rule_for_one_server_never_covers_a_tool_of_another(
    tmp_path_factory: pytest.TempPathFactory,
    case: tuple[tuple[str, str], tuple[str, str], str],
    way: str,
) -> None:
    (a, b), (tool_a, tool_b), written = case
    root = tmp_path_factory.getbasetemp()
    anyio.run(check_servers, root, a, b, tool_a, tool_b, written, way, "B")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=written_for_a(), way=ways)
def test_a_rule_covers_the_tool_of_the_server_it_names(
    tmp_path_factory: pytest.TempPathFactory,
    case: tuple[tuple[str, str], tuple[str, str], str],
    way: str,
) -> None:
    """Not vacuous: a rule naming A's tool unambiguously (the oracle ``named_by``) decides
    it, however A is spelled (its model-facing name sanitised, cut or not)."""
    (a, b), (tool_a, tool_b), written = case
    event(f"the rule names A's tool: {named_by(written) in ((a, '*'), (a, tool_a))}")
    root = tmp_path_factory.getbasetemp()
    anyio.run(check_servers, root, a, b, tool_a, tool_b, written, way, "A")


@pytest.mark.parametrize(
    ("server", "covered_by_notes"),
    [("notes", True), ("notes..beta", False), ("notes__beta", False), ("notes_", False)],
)
def test_the_spellings_of_the_issue(tmp_path: Path, server: str, covered_by_notes: bool) -> None:
    """``mcp__notes__*`` covers the server ``notes`` only — not ``notes..beta`` (whose
    model-facing name is ``mcp__notes__beta__…``), ``notes__beta`` or ``notes_``."""
    fake = FakeServer(server)
    registry, names = registry_with([(fake, remote("write_note"))], builtins=False)
    policy = ApprovalPolicy(auto_approve=frozenset({"mcp__notes__*"}))
    name = names[(server, "write_note")]
    assert name.startswith("mcp__notes__")  # the model-facing names share the prefix
    _, asker = anyio.run(execute, registry, tmp_path, policy, name)
    assert (asker.asked == []) == covered_by_notes


def test_a_rule_that_could_name_two_servers_is_refused() -> None:
    for ambiguous in ("mcp__notes__beta__x", "mcp__notes___x", "mcp__notes____*", "mcp__*"):
        with pytest.raises(InvalidPattern, match="names no one MCP server"):
            check_pattern(ambiguous, "*")
    for fine in ("mcp__notes__*", "mcp__notes.beta__*", "mcp__笔记__write_note", "mcp___x__t"):
        check_pattern(fine, "*")


def test_allow_always_stores_a_rule_naming_the_server_as_configured(tmp_path: Path) -> None:
    """The rule "allow always" stores names the server by its configured name (not the
    model-facing ``mcp__notes_beta__…``); a server no rule can name is offered none."""

    async def allowed_always(server: str) -> tuple[ApprovalPolicy, ApproveParams]:
        fake = FakeServer(server)
        registry, names = registry_with([(fake, remote("write_note"))], builtins=False)
        policy = ApprovalPolicy()
        asked: list[ApproveParams] = []

        async def always(request: ApproveParams) -> ApproveResult:
            asked.append(request)
            patterns = request.suggested_patterns or []
            rule = {"pattern": patterns[0]} if patterns else None
            return ApproveResult.model_validate({"decision": "allow-always", "rule": rule})

        gate = ApprovalGate(policy, DiskEditor(always), RunEvents("r", [Sink()]))
        deps = ToolDeps(workspace=Workspace([tmp_path], NoBuffers()), run_id="r", gate=gate)
        call = ToolCall("c", names[(server, "write_note")], {})
        assert (await registry.execute(call, deps)).ok
        return policy, asked[0]

    policy, asked = anyio.run(allowed_always, "notes.beta")
    assert asked.tool == "mcp__notes_beta__write_note" and asked.suggested_patterns == ["*"]
    assert [r.tool for r in policy.session_rules] == ["mcp__notes.beta__write_note"]
    policy, asked = anyio.run(allowed_always, "notes__beta")
    assert asked.suggested_patterns is None and policy.session_rules == []


# --- read-only sessions ----------------------------------------------------------------

WRITING_COMMANDS = (
    "touch made.txt",
    "echo made > made.txt",
    "rm -f kept.txt",
    "sed -i s/a/b/ kept.txt",
    "cp kept.txt made.txt",
    "mkdir made",
    'python3 -c \'open("made.txt", "w")\'',
    "ls; touch made.txt",
    "cat kept.txt > made.txt",
    "git init -q",
    "find . -delete",
    "env touch made.txt",
)
"""Commands that change the workspace (each would leave a trace)."""


@dataclass(frozen=True)
class Configured:
    """What the user allowed before the session was made read-only."""

    auto_approve: frozenset[str]
    rules: tuple[Rule, ...]
    always_tools: frozenset[str]
    always_commands: bool
    trusted_hints: bool


ALLOWS = ("bash", "edit_file", "write_file", "mcp__notes__*", "mcp__notes__write_note")
RULES = (
    Rule(tool="bash", pattern="touch *", decision="allow"),
    Rule(tool="bash", pattern="rm *", decision="allow"),
    Rule(tool="bash", pattern="ls", decision="allow"),
    Rule(tool="edit_file", pattern="**", decision="allow"),
    Rule(tool="write_file", pattern="**", decision="allow"),
    Rule(tool="mcp__notes__*", pattern="*", decision="allow"),
    Rule(tool="mcp__notes__erase_notes", pattern="*", decision="allow"),
)

configurations = st.builds(
    Configured,
    auto_approve=st.frozensets(st.sampled_from(ALLOWS)),
    rules=st.lists(st.sampled_from(RULES), unique=True).map(tuple),
    always_tools=st.frozensets(st.sampled_from(("edit_file", "write_file"))),
    always_commands=st.booleans(),
    trusted_hints=st.booleans(),
)
changing_calls = st.one_of(
    st.sampled_from(WRITING_COMMANDS).map(lambda c: ("bash", {"command": c})),
    st.just(("edit_file", {"path": "kept.txt", "old_text": "a line", "new_text": "b"})),
    st.just(("write_file", {"path": "made.txt", "content": "made\n"})),
    st.just(("write_file", {"path": "kept.txt", "content": "over\n"})),
    st.just(("mcp__notes__write_note", {"text": "x"})),
    st.just(("mcp__notes__erase_notes", {})),
)


def read_only_policy(configured: Configured, store: RuleStore | None) -> ApprovalPolicy:
    policy = ApprovalPolicy(
        auto_approve=configured.auto_approve,
        always=set(configured.always_tools),
        session_rules=list(configured.rules),
        store=store,
        read_only=True,
    )
    if configured.always_commands:  # "allow always" on these very calls, earlier
        for command in WRITING_COMMANDS:
            policy.remember("bash", CommandPreview(command=command, cwd="."))
        for tool, arguments in (("write_note", '{"text": "x"}'), ("erase_notes", "{}")):
            shown = CommandPreview(command=f"notes › {tool} {arguments}", cwd=".")
            policy.remember(f"mcp__notes__{tool}", shown, mcp=("notes", tool))
    return policy


def notes_tools(trusted: bool) -> tuple[FakeServer, list[tuple[FakeServer, RemoteTool]]]:
    server = FakeServer("notes", trusts_read_only_hints=trusted)
    listed = [
        remote("write_note"),
        remote("read_note", read_only=True),
        remote("erase_notes", read_only=True, destructive=True),
    ]
    return server, [(server, r) for r in listed]


def fresh_workspace(base: Path) -> Path:
    root = base / "ws"
    if root.exists():
        import shutil

        shutil.rmtree(root)
    root.mkdir()
    (root / "kept.txt").write_text(KEPT)
    return root


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configured=configurations, called=changing_calls)
def test_in_a_read_only_session_nothing_that_may_change_runs_whatever_was_allowed(
    tmp_path_factory: pytest.TempPathFactory,
    configured: Configured,
    called: tuple[str, dict[str, Any]],
) -> None:
    base = tmp_path_factory.mktemp("ro", numbered=True)
    root = fresh_workspace(base)
    server, listed = notes_tools(configured.trusted_hints)
    registry, _ = registry_with(listed)
    store = RuleStore(base / "rules.toml")  # no file: the built-in read-only rules on
    policy = read_only_policy(configured, store)
    name, arguments = called
    result, asker = anyio.run(execute, registry, root, policy, name, arguments)
    assert not result.ok and asker.asked == [], (called, configured)
    assert result.output.startswith("Not done: the session is read-only, and ")
    assert "nothing was changed" in result.output
    assert sorted(p.name for p in root.iterdir()) == ["kept.txt"]
    assert (root / "kept.txt").read_text() == KEPT and server.called == []


@pytest.mark.parametrize(
    ("name", "arguments", "said"),
    [
        ("bash", {"command": "ls"}, "kept.txt"),
        ("bash", {"command": "cat kept.txt"}, "another line"),
        ("bash", {"command": "grep -n another kept.txt"}, "2:another line"),
        ("read_file", {"path": "kept.txt"}, "another line"),
        ("mcp__notes__read_note", {}, "done"),
    ],
)
def test_what_only_reads_still_runs_in_a_read_only_session(
    tmp_path: Path, name: str, arguments: dict[str, Any], said: str
) -> None:
    """Proven reads run unasked (the built-in rules on; the MCP tool ``autoApprove``d),
    and a command runs as the built-in rules run theirs."""
    root = fresh_workspace(tmp_path)
    server, listed = notes_tools(False)
    registry, _ = registry_with(listed)
    policy = ApprovalPolicy(
        auto_approve=frozenset({"mcp__notes__*"}), store=RuleStore(tmp_path / "r.toml")
    )
    policy.read_only = True
    result, asker = anyio.run(execute, registry, root, policy, name, arguments)
    assert result.ok and said in result.output and asker.asked == []
    assert (root / "kept.txt").read_text() == KEPT


def test_a_read_only_command_allowed_by_autoapprove_runs_as_a_built_in(tmp_path: Path) -> None:
    """``autoApprove: ["bash"]`` with the built-in rules off: in a read-only session a
    command they prove runs with git's program-running settings off (``builtin``)."""
    root = fresh_workspace(tmp_path)
    (tmp_path / "rules.toml").write_text("[settings]\nread_only_defaults = false\n")
    policy = ApprovalPolicy(
        auto_approve=frozenset({"bash"}), store=RuleStore(tmp_path / "rules.toml")
    )

    async def decide(read_only: bool) -> Any:
        policy.read_only = read_only
        gate = ApprovalGate(policy, DiskEditor(), RunEvents("r", [Sink()]))
        return await gate.decide(
            call_id="c",
            tool="bash",
            title="Run",
            arguments={},
            preview=CommandPreview(command="cat kept.txt", cwd=str(root)),
            roots=[root],
            effect="command",
        )

    assert anyio.run(decide, False).builtin is False
    verdict = anyio.run(decide, True)
    assert verdict.allowed and verdict.builtin


def test_every_tool_says_what_it_may_do() -> None:
    """The built-in tools that need approval declare their effect; the others run without
    approval, which is what makes them reads. An MCP tool's effect is its annotations'."""
    tools = build_tools()
    effects = {
        name: tool.effect
        for name in tools.names
        if (tool := tools.get(name)) is not None and tool.needs_approval
    }
    assert effects == {"bash": "command", "edit_file": "changes", "write_file": "changes"}
    made = {
        (read_only, destructive): mcp_tool(
            "mcp__s__t",
            FakeServer("s"),  # type: ignore[arg-type]
            remote("t", read_only=read_only, destructive=destructive),
            None,  # type: ignore[arg-type]
        )
        for read_only in (False, True)
        for destructive in (False, True)
    }
    assert {k: t.effect for k, t in made.items()} == {
        (False, False): "changes",
        (False, True): "changes",
        (True, False): "none",
        (True, True): "changes",
    }
    assert all(t.mcp_name == ("s", "t") for t in made.values())


def test_a_read_only_call_changed_in_the_answer_is_not_run(tmp_path: Path) -> None:
    """A command the built-in rules prove reads only, asked (they are off as allows), and
    allowed with other arguments: the changed call was never checked, so it does not run."""
    root = fresh_workspace(tmp_path)
    (tmp_path / "rules.toml").write_text("[settings]\nread_only_defaults = false\n")
    policy = ApprovalPolicy(store=RuleStore(tmp_path / "rules.toml"), read_only=True)
    asked: list[ApproveParams] = []

    async def changed(request: ApproveParams) -> ApproveResult:
        asked.append(request)
        return ApproveResult(decision="allow", arguments={"command": "touch made.txt"})

    async def run() -> ToolResult:
        gate = ApprovalGate(policy, DiskEditor(changed), RunEvents("r", [Sink()]))
        deps = ToolDeps(workspace=Workspace([root], NoBuffers()), run_id="r", gate=gate)
        call = ToolCall("c", "bash", {"command": "cat kept.txt"})
        return await build_tools().execute(call, deps)

    result = anyio.run(run)
    assert len(asked) == 1 and not result.ok
    assert "read-only" in result.output and "nothing was changed" in result.output
    assert sorted(p.name for p in root.iterdir()) == ["kept.txt"]


def test_a_read_only_command_changed_when_asked_to_run_outside_the_sandbox_is_refused(
    tmp_path: Path,
) -> None:
    """The question whether a command the sandbox stopped may run outside it, answered
    "allow" with another command: in a read-only session that command was never checked."""
    root = fresh_workspace(tmp_path)

    async def changed(request: ApproveParams) -> ApproveResult:
        return ApproveResult(decision="allow", arguments={"command": "touch made.txt"})

    async def reconsider() -> Any:
        policy = ApprovalPolicy(read_only=True)
        gate = ApprovalGate(policy, DiskEditor(changed), RunEvents("r", [Sink()]))
        return await gate.reconsider(
            call_id="c",
            tool="bash",
            title="Run cat kept.txt",
            arguments={"command": "cat kept.txt"},
            preview=CommandPreview(command="cat kept.txt", cwd=str(root)),
            roots=[root],
            reason="writing outside the workspace",
        )

    verdict = anyio.run(reconsider)
    assert not verdict.allowed and verdict.refused is not None
    assert "read-only" in verdict.refused
