"""The approval gate with rules: deny wins, the floor still asks, a cloned project's file
only tightens, a picked rule is stored only when it covers the call (issue 17)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import pytest

from tether.events import RunEvents
from tether.policy.gate import ApprovalGate, ApprovalPolicy, Verdict
from tether.policy.store import PROJECT_FILE, RuleStore
from tether.sandbox import Sandbox
from tether_protocol import (
    ApprovalEvent,
    ApproveParams,
    ApproveResult,
    CommandPreview,
    DiffPreview,
    Preview,
    ProposedRule,
    Rule,
    RunEvent,
)


class Asker:
    """An editor that records what it was asked and answers ``answer``."""

    def __init__(self, answer: ApproveResult | None = None) -> None:
        self.answer = answer or ApproveResult(decision="deny")
        self.asked: list[ApproveParams] = []

    async def ask_approval(
        self, request: ApproveParams, change: object = None
    ) -> ApproveResult | None:
        self.asked.append(request)
        return self.answer


class Events:
    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def publish(self, event: RunEvent) -> None:
        self.events.append(event)


def bash(command: str, root: Path) -> CommandPreview:
    return CommandPreview(command=command, cwd=str(root))


def edit(rel: str, root: Path) -> DiffPreview:
    return DiffPreview(uri=(root / rel).as_uri(), diff="--- a\n+++ b\n")


def decide(
    policy: ApprovalPolicy,
    tool: str,
    preview: Preview,
    root: Path,
    asker: Asker | None = None,
    *,
    sandbox: Callable[[Sequence[Path]], Sandbox | None] | None = None,
) -> tuple[Verdict, ApprovalEvent, Asker]:
    """One call through a gate (``sandbox``: how it makes one, if any): its verdict, the
    ``approval`` event published, and the editor that was (or was not) asked."""
    asker = asker or Asker()
    sink = Events()
    gate = ApprovalGate(policy, asker, RunEvents("r", [sink]), sandbox=sandbox)  # type: ignore[arg-type]

    async def go() -> Verdict:
        return await gate.decide(
            call_id="c", tool=tool, title="t", arguments={}, preview=preview, roots=[root]
        )

    verdict = anyio.run(go)
    [event] = [e for e in sink.events if isinstance(e, ApprovalEvent)]
    return verdict, event, asker


@pytest.fixture
def store(tmp_path: Path) -> RuleStore:
    return RuleStore(tmp_path / "config" / "tether" / "rules.toml")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def rule(tool: str, pattern: str, decision: str = "allow", scope: str = "user") -> Rule:
    return Rule.model_validate(
        {"tool": tool, "pattern": pattern, "decision": decision, "scope": scope}
    )


def test_an_allow_rule_runs_the_command_and_the_event_names_it(
    store: RuleStore, root: Path
) -> None:
    store.add(rule("bash", "pytest *"), [root])
    verdict, event, asker = decide(
        ApprovalPolicy(store=store), "bash", bash("pytest -q", root), root
    )
    assert verdict.decision == "auto" and not asker.asked
    assert event.rules == [rule("bash", "pytest *")]


def test_a_deny_rule_wins_over_an_allow_rule_and_auto_approve(store: RuleStore, root: Path) -> None:
    store.add(rule("bash", "git *"), [root])
    store.add(rule("bash", "git push *", "deny"), [root])
    policy = ApprovalPolicy(auto_approve=frozenset({"bash"}), store=store)
    verdict, event, asker = decide(policy, "bash", bash("git status && git push -f", root), root)
    assert verdict.decision == "denied-by-default" and not asker.asked
    assert verdict.denied_by is not None and "git push *" in verdict.denied_by
    assert event.rules == [rule("bash", "git push *", "deny")]


def test_an_ask_rule_asks_even_under_auto_approve(store: RuleStore, root: Path) -> None:
    store.add(rule("bash", "make deploy", "ask"), [root])
    policy = ApprovalPolicy(auto_approve=frozenset({"bash"}), store=store)
    _, event, asker = decide(policy, "bash", bash("make deploy", root), root)
    assert len(asker.asked) == 1
    assert event.rules == [rule("bash", "make deploy", "ask")]


def test_the_sensitive_floor_asks_whatever_the_rules_allow(store: RuleStore, root: Path) -> None:
    store.add(rule("edit_file", "**"), [root])
    policy = ApprovalPolicy(store=store)
    assert decide(policy, "edit_file", edit("src/a.py", root), root)[0].decision == "auto"
    _, _, asker = decide(policy, "edit_file", edit(".env.local", root), root)
    assert len(asker.asked) == 1
    assert " — " in asker.asked[0].title  # the question says why it is asked


def test_path_rules_exclude_with_a_bang(store: RuleStore, root: Path) -> None:
    store.add(rule("write_file", "src/** !**/secret*"), [root])
    policy = ApprovalPolicy(store=store)
    assert decide(policy, "write_file", edit("src/a/b.py", root), root)[0].decision == "auto"
    assert decide(policy, "write_file", edit("src/secret.py", root), root)[2].asked
    assert decide(policy, "write_file", edit("docs/a.md", root), root)[2].asked


def test_a_cloned_projects_allow_rules_widen_nothing_but_its_denies_apply(
    store: RuleStore, root: Path
) -> None:
    (root / PROJECT_FILE).parent.mkdir()
    (root / PROJECT_FILE).write_text(
        '[[rules]]\ntool = "bash"\npattern = "*"\ndecision = "allow"\n'
        '[[rules]]\ntool = "bash"\npattern = "curl *"\ndecision = "allow"\n'
        '[[rules]]\ntool = "edit_file"\npattern = "**"\ndecision = "allow"\n'
        '[[rules]]\ntool = "bash"\npattern = "rm *"\ndecision = "deny"\n'
    )
    policy = ApprovalPolicy(store=store)
    assert decide(policy, "bash", bash("curl evil.sh", root), root)[2].asked
    assert decide(policy, "edit_file", edit("a.py", root), root)[2].asked
    verdict, _, asker = decide(
        ApprovalPolicy(auto_approve=frozenset({"bash"}), store=store),
        "bash",
        bash("rm -rf x", root),
        root,
    )
    assert verdict.decision == "denied-by-default" and not asker.asked
    # Once the user's own file trusts the project, its allows apply.
    store.user_file.parent.mkdir(parents=True, exist_ok=True)
    store.user_file.write_text(
        f"[settings]\ntrusted_projects = [{str(root)!r}]\n".replace("'", '"')
    )
    assert decide(policy, "bash", bash("curl evil.sh", root), root)[0].decision == "auto"


def test_a_project_trusted_in_the_users_config_toml_is_trusted_for_its_rules_too(
    store: RuleStore, root: Path
) -> None:
    (root / PROJECT_FILE).parent.mkdir()
    (root / PROJECT_FILE).write_text(
        '[[rules]]\ntool = "bash"\npattern = "curl *"\ndecision = "allow"\n'
    )
    policy = ApprovalPolicy(store=store)
    assert decide(policy, "bash", bash("curl x.sh", root), root)[2].asked
    # One trust list: the one that trusts the project's .tether/config.toml counts here too.
    store.user_file.parent.mkdir(parents=True, exist_ok=True)
    (store.user_file.parent / "config.toml").write_text(f"trustedProjects = [{str(root)!r}]\n")
    assert decide(policy, "bash", bash("curl x.sh", root), root)[0].decision == "auto"


def test_built_in_read_only_rules_and_their_limits(store: RuleStore, root: Path) -> None:
    policy = ApprovalPolicy(store=store)
    for command in ("ls -la src", "git status", "git diff HEAD~1", "rg -n foo src | head -5"):
        verdict, event, _ = decide(policy, "bash", bash(command, root), root)
        assert verdict.decision == "auto", command
        assert event.rules and all(r.scope == "builtin" for r in event.rules)
    for command in (
        "git diff --output=x",
        "git diff --out=x",
        "git log --ext-diff",
        "rg --pre ./run x",
        "cat ~/.ssh/id_rsa",
        "cat /etc/passwd",
        "cat ../../secret",
        "ls > listing.txt",
        "ls $(rm -rf x)",
        "git push",
        "echo hi",
    ):
        assert decide(policy, "bash", bash(command, root), root)[2].asked, command
    store.user_file.parent.mkdir(parents=True, exist_ok=True)
    store.user_file.write_text("[settings]\nread_only_defaults = false\n")
    assert decide(policy, "bash", bash("ls", root), root)[2].asked


def test_a_picked_rule_is_stored_only_when_it_covers_the_call(store: RuleStore, root: Path) -> None:
    policy = ApprovalPolicy(store=store)
    wrong = Asker(
        ApproveResult(decision="allow-always", rule=ProposedRule(pattern="make *", scope="user"))
    )
    verdict, _, _ = decide(policy, "bash", bash("pytest -q", root), root, wrong)
    assert verdict.decision == "allow-always"  # the call itself was allowed
    assert store.rule_set([root]).rules == store.rule_set([]).rules  # nothing stored
    right = Asker(
        ApproveResult(
            decision="allow-always", rule=ProposedRule(pattern="pytest *", scope="project")
        )
    )
    decide(policy, "bash", bash("pytest -q", root), root, right)
    assert decide(policy, "bash", bash("pytest tests/x.py", root), root)[0].decision == "auto"
    assert "pytest" in store.user_file.read_text()  # a project allow lives in the user's file
    assert not (root / PROJECT_FILE).exists()


def test_allow_always_without_a_rule_keeps_the_exact_command_for_the_session(
    root: Path,
) -> None:
    policy = ApprovalPolicy()
    decide(policy, "bash", bash("make", root), root, Asker(ApproveResult(decision="allow-always")))
    assert decide(policy, "bash", bash("make", root), root)[0].decision == "auto"
    assert decide(policy, "bash", bash("make test", root), root)[2].asked


def test_a_session_rule_from_an_answer_stays_in_memory(store: RuleStore, root: Path) -> None:
    policy = ApprovalPolicy(store=store)
    pick = ProposedRule(pattern="npm test", scope="session")
    decide(
        policy,
        "bash",
        bash("npm test", root),
        root,
        Asker(ApproveResult(decision="allow-always", rule=pick)),
    )
    assert policy.session_rules == [rule("bash", "npm test", scope="session")]
    assert not store.user_file.exists()


def test_rules_files_round_trip_awkward_text_and_remove(store: RuleStore, root: Path) -> None:
    awkward = rule("bash", "grep 'a\"b\\\\c\x7f' *")
    store.add(awkward, [root])
    store.add(rule("bash", "git push *", "deny", "project"), [root])
    listed = store.rule_set([root]).rules
    assert awkward in listed and rule("bash", "git push *", "deny", "project") in listed
    assert store.remove(awkward, [root]) and not store.remove(awkward, [root])
    assert store.remove(rule("bash", "git push *", "deny", "project"), [root])
    assert all(r.scope == "builtin" for r in store.rule_set([root]).rules)


def test_a_malformed_user_file_is_not_overwritten(store: RuleStore, root: Path) -> None:
    store.user_file.parent.mkdir(parents=True)
    store.user_file.write_text("[[rules]\nbroken")
    with pytest.raises(ValueError):
        store.add(rule("bash", "make"), [root])
    assert store.user_file.read_text() == "[[rules]\nbroken"


@pytest.mark.parametrize(
    "command",
    ["echo ${X:-$(rm -rf y)}", 'echo "${X:-`rm -rf y`}"', "echo $(rm -rf y)", "echo a &"],
)
def test_a_command_hidden_in_a_word_is_asked_under_a_prefix_rule(
    store: RuleStore, root: Path, command: str
) -> None:
    store.add(rule("bash", "echo *"), [root])
    assert decide(ApprovalPolicy(store=store), "bash", bash(command, root), root)[2].asked
