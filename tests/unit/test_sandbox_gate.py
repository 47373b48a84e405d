"""The gate with a sandbox: only a command that would have been asked runs unasked inside
it; a deny, an ask, an unreadable command and every edit keep their way; an allowed command
runs inside it too (issue 24: one runner); without a sandbox the gate asks as before
(issue 17 item 4)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from tether.events import RunEvents
from tether.policy.gate import ApprovalGate, ApprovalPolicy, Verdict
from tether.sandbox import Sandbox
from tether_protocol import ApprovalEvent, ApproveResult, DiffPreview, Preview, ProposedRule, Rule

from .test_rules_gate import Asker, Events, bash
from .test_rules_gate import decide as decide_with


def fake_sandbox(roots: Sequence[Path]) -> Sandbox:
    return Sandbox("landlock", tuple(roots), {}, Path("/nonexistent/c"), Path("/nonexistent/s"))


def decide(
    policy: ApprovalPolicy, tool: str, preview: Preview, root: Path, *, sandbox: bool = True
) -> tuple[Verdict, ApprovalEvent, Asker]:
    """``decide`` of the rules tests, the gate holding a (fake) sandbox unless told not to."""
    return decide_with(policy, tool, preview, root, sandbox=fake_sandbox if sandbox else None)


def rules(*spec: tuple[str, str]) -> ApprovalPolicy:
    policy = ApprovalPolicy()
    policy.session_rules = [Rule(tool="bash", pattern=p, decision=d) for p, d in spec]  # type: ignore[arg-type]
    return policy


def test_a_command_no_rule_decides_runs_unasked_in_the_sandbox(tmp_path: Path) -> None:
    verdict, event, asker = decide(rules(), "bash", bash("make build", tmp_path), tmp_path)
    assert verdict.decision == "auto" and verdict.sandbox is not None
    assert verdict.sandbox.roots == (tmp_path,)
    assert (event.decision, event.sandbox, event.rules) == ("auto", "landlock", None)
    assert asker.asked == []


@pytest.mark.parametrize(
    ("command", "policy", "decision"),
    [
        ("rm -rf x", rules(("rm *", "deny")), "denied-by-default"),
        ("ls && rm x", rules(("rm *", "deny")), "denied-by-default"),
        ("make deploy", rules(("make *", "ask")), "deny"),  # asked; the asker denies
        ("for f in *; do rm $f; done", rules(), "deny"),  # unreadable: asked
    ],
)
def test_deny_ask_and_unreadable_commands_keep_their_way(
    tmp_path: Path, command: str, policy: ApprovalPolicy, decision: str
) -> None:
    verdict, event, asker = decide(policy, "bash", bash(command, tmp_path), tmp_path)
    assert verdict.decision == decision and verdict.sandbox is None and event.sandbox is None
    assert len(asker.asked) == (0 if decision == "denied-by-default" else 1)


def test_an_allowed_command_runs_inside_the_sandbox_too(tmp_path: Path) -> None:
    by_rule, event, _ = decide(rules(("make *", "allow")), "bash", bash("make", tmp_path), tmp_path)
    assert by_rule.decision == "auto" and by_rule.sandbox is not None and event.rules
    assert event.sandbox == "landlock" and not by_rule.builtin
    listed = ApprovalPolicy(auto_approve=frozenset({"bash"}))
    by_setting, _, _ = decide(listed, "bash", bash("make", tmp_path), tmp_path)
    assert by_setting.decision == "auto" and by_setting.sandbox is not None


def test_an_asked_and_allowed_command_runs_inside_the_sandbox(tmp_path: Path) -> None:
    policy = rules(("make *", "ask"))
    verdict, event, asker = decide_with(
        policy,
        "bash",
        bash("make", tmp_path),
        tmp_path,
        Asker(ApproveResult(decision="allow")),
        sandbox=fake_sandbox,
    )
    assert verdict.decision == "allow" and verdict.sandbox is not None
    assert event.sandbox == "landlock" and len(asker.asked) == 1


def test_only_the_built_in_rules_alone_make_a_built_in_command(tmp_path: Path) -> None:
    builtin = Rule(tool="bash", pattern="git status *", decision="allow", scope="builtin")
    mine = Rule(tool="bash", pattern="make *", decision="allow", scope="user")
    alone = ApprovalPolicy(session_rules=[builtin])
    verdict, _, _ = decide(alone, "bash", bash("git status", tmp_path), tmp_path)
    assert verdict.builtin and verdict.sandbox is not None
    mixed = ApprovalPolicy(session_rules=[builtin, mine])
    verdict, _, _ = decide(mixed, "bash", bash("make && git status", tmp_path), tmp_path)
    assert verdict.decision == "auto" and not verdict.builtin


def test_edits_are_never_sandboxed(tmp_path: Path) -> None:
    preview = DiffPreview(uri=(tmp_path / "a.py").as_uri(), diff="--- a\n+++ b\n")
    verdict, _, asker = decide(rules(), "write_file", preview, tmp_path)
    assert verdict.decision == "deny" and len(asker.asked) == 1


def test_without_a_sandbox_the_command_is_asked(tmp_path: Path) -> None:
    verdict, event, asker = decide(
        rules(), "bash", bash("make build", tmp_path), tmp_path, sandbox=False
    )
    assert verdict.decision == "deny" and event.sandbox is None and len(asker.asked) == 1


def reconsider(policy: ApprovalPolicy, command: str, root: Path, asker: Asker) -> Verdict:
    """A command the sandbox stopped, asked again through a gate with a sandbox."""
    gate = ApprovalGate(policy, asker, RunEvents("r", [Events()]), sandbox=fake_sandbox)  # type: ignore[arg-type]

    async def go() -> Verdict:
        return await gate.reconsider(
            call_id="c",
            tool="bash",
            title="Run " + command,
            arguments={"command": command},
            preview=bash(command, root),
            roots=[root],
            reason="it needs the network",
        )

    return anyio.run(go)


def test_a_command_the_sandbox_stopped_offers_the_exact_command_at_most(tmp_path: Path) -> None:
    # Issue 28 item 5: `echo *` would let every other echo out of the sandbox too.
    asker = Asker(ApproveResult(decision="deny"))
    reconsider(ApprovalPolicy(), "echo hi", tmp_path, asker)
    [asked] = asker.asked
    assert asked.suggested_patterns == ["echo hi"]
    assert asked.title == "Run echo hi — outside the sandbox: in it, it needs the network"
    # Nothing a pattern can say exactly: nothing offered (a plain Allow Always remains).
    asker = Asker(ApproveResult(decision="deny"))
    reconsider(ApprovalPolicy(), "echo 'a b'", tmp_path, asker)
    assert asker.asked[0].suggested_patterns is None


@pytest.mark.parametrize(("picked", "stored"), [("echo *", False), ("echo hi", True)])
def test_a_wider_rule_picked_for_a_command_the_sandbox_stopped_is_not_stored(
    tmp_path: Path, picked: str, stored: bool
) -> None:
    policy = ApprovalPolicy()
    answer = ApproveResult(
        decision="allow-always", rule=ProposedRule(pattern=picked, scope="session")
    )
    verdict = reconsider(policy, "echo hi", tmp_path, Asker(answer))
    assert verdict.allowed  # the call itself is allowed once either way
    assert [r.pattern for r in policy.session_rules] == ([picked] if stored else [])
