"""``tether rules``: list, add and remove approval rules, in this process.

The requests are the server's own ``agent/rules/*`` (``policy.requests``), answered here
with no server started: the same files, the same trust of a cloned project, the same
checks of a pattern and the same confined writer as from an editor, and none of the
transport or the SDKs imported (a second of CPU less). Imports stay inside the functions:
building the parser must cost nothing (``tether run`` starts up through the same parser).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

SCOPES = ("project", "user", "session")
"""A session rule lives in one running session's memory: named to say so, not added."""


def add_rules_command(commands: Any) -> None:
    """``tether rules [list|add|remove]`` on the CLI's sub-command parsers."""
    parser = commands.add_parser(
        "rules",
        help="list, add or remove approval rules (docs/approvals.md)",
        description="Approval rules: which bash commands and edits run without asking, "
        "are denied, or are always asked. Without an action: list them.",
    )
    _common_flags(parser)
    parser.set_defaults(cwd=".", json=False)
    actions = parser.add_subparsers(dest="action")
    _common_flags(actions.add_parser("list", help="every rule in force, numbered"))
    add = actions.add_parser("add", help="add a rule (an allow unless --deny or --ask)")
    _common_flags(add)
    add.add_argument(
        "tool", help="bash, edit_file, write_file, mcp__SERVER__TOOL or mcp__SERVER__*"
    )
    add.add_argument(
        "pattern",
        help="bash: the command's words, a last * for any arguments; edits: globs; MCP: *",
    )
    decision = add.add_mutually_exclusive_group()
    decision.add_argument(
        "--deny", action="store_const", const="deny", dest="decision", help="deny, unasked"
    )
    decision.add_argument(
        "--ask", action="store_const", const="ask", dest="decision", help="always ask"
    )
    add.add_argument(
        "--scope",
        choices=SCOPES,
        default="project",
        help="project (default): this folder, kept in your user file for an allow; user: "
        "every folder; session: only inside a running session (an editor's)",
    )
    remove = actions.add_parser("remove", help="revoke a rule by its number or its pattern")
    _common_flags(remove)
    remove.add_argument("rule", help="the number `tether rules` shows, or the pattern")
    remove.add_argument("--tool", help="with a pattern: only the rule of this tool")


def _common_flags(parser: argparse.ArgumentParser) -> None:
    # Accepted before and after the action (`tether rules --json list`, `… list --json`);
    # SUPPRESS keeps an action's parser from resetting what was given before it.
    parser.add_argument(
        "--cwd", default=argparse.SUPPRESS, help="the workspace folder (default: here)"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print the rules (or what changed) as JSON, for scripts",
    )


def rules_command(args: argparse.Namespace) -> int:
    """Run ``tether rules``; the exit status."""
    import anyio

    if getattr(args, "scope", None) == "session":
        print(
            "tether: a session rule lives in the memory of one running session (an "
            "editor's adds it there); from here, use --scope project or user",
            file=sys.stderr,
        )
        return 2
    root = Path(args.cwd).resolve()
    if not root.is_dir():
        print(f"tether: --cwd {args.cwd}: not a folder", file=sys.stderr)
        return 2
    if not args.log_level:  # what a server of a terminal command logs (client.spawn)
        logging.getLogger().setLevel(logging.ERROR)
    return anyio.run(_rules, args, root)


async def _rules(args: argparse.Namespace, root: Path) -> int:
    from tether_protocol import (
        AGENT_RULES_ADD_METHOD,
        AGENT_RULES_LIST_METHOD,
        AGENT_RULES_REMOVE_METHOD,
    )

    from ..policy.requests import RulesRequestError, RulesService
    from ..policy.store import RuleStore
    from .words import terminal_words

    service = RulesService(RuleStore.from_environment(os.environ))
    method = AGENT_RULES_LIST_METHOD

    async def ask(asked: str, params: dict[str, Any]) -> dict[str, Any]:
        nonlocal method
        method = asked
        return await service.answer(asked, params, [root], lambda _: None)

    try:
        if args.action == "add":
            rule = {
                "tool": args.tool,
                "pattern": args.pattern,
                "decision": args.decision or "allow",
                "scope": args.scope,
            }
            added = await ask(AGENT_RULES_ADD_METHOD, {"rule": rule})
            return _show_added(added["rule"], args.json)
        listed = await ask(AGENT_RULES_LIST_METHOD, {})
        if args.action == "remove":
            found = pick(listed["rules"], args.rule, args.tool)
            if isinstance(found, str):
                print(f"tether: {found}", file=sys.stderr)
                return 2
            answer = await ask(AGENT_RULES_REMOVE_METHOD, {"rule": found})
            return _show_removed(found, bool(answer["removed"]), args.json)
    except RulesRequestError as exc:  # the server's invalid-params answer, in plain words
        text = terminal_words(f"{method}: {exc}")
        for wire in (f"{AGENT_RULES_ADD_METHOD}: ", f"{AGENT_RULES_REMOVE_METHOD}: ", "rule."):
            text = text.replace(wire, "", 1)
        print(f"tether: {text}", file=sys.stderr)
        return 2
    print(json.dumps(listed) if args.json else table(listed))
    return 0


def _show_added(rule: dict[str, Any], as_json: bool) -> int:
    print(json.dumps({"rule": rule}) if as_json else f"added: {describe(rule)}")
    return 0


def _show_removed(rule: dict[str, Any], removed: bool, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"removed": removed, "rule": rule}))
    elif removed:
        print(f"removed: {describe(rule)}")
    else:
        print(f"tether: not removed (no longer stored): {describe(rule)}", file=sys.stderr)
    return 0 if removed else 1


def describe(rule: dict[str, Any]) -> str:
    """One rule in a line: ``allow bash `pytest *` (project)``."""
    return f"{rule['decision']} {rule['tool']} `{rule['pattern']}` ({rule['scope']})"


def table(listed: dict[str, Any]) -> str:
    """The rules in force as a numbered table (the numbers ``remove`` takes)."""
    rules = listed.get("rules") or []
    lines = [f"{'#':>3}  {'tool':10} {'decision':8} {'scope':8} pattern"]
    for number, rule in enumerate(rules, 1):
        lines.append(
            f"{number:>3}  {rule['tool']:10} {rule['decision']:8} {rule['scope']:8} "
            f"{rule['pattern']}"
        )
    if not rules:
        lines.append("  (no rules)")
    defaults = "on" if listed.get("readOnlyDefaults") else "off"
    lines.append(f"\nbuilt-in read-only commands: {defaults} (settings.read_only_defaults)")
    return "\n".join(lines)


def pick(rules: list[dict[str, Any]], which: str, tool: str | None) -> dict[str, Any] | str:
    """The listed rule ``which`` names (a number or a pattern), or why there is none."""
    if which.isdigit():
        number = int(which)
        if not 1 <= number <= len(rules):
            return f"no rule number {number}: `tether rules` lists {len(rules)}"
        found = rules[number - 1]
    else:
        matching = [
            r
            for r in rules
            if r["pattern"] == which and r["scope"] != "builtin" and tool in (None, r["tool"])
        ]
        if not matching:
            return f"no rule with the pattern {which!r} (`tether rules` lists them)"
        if len(matching) > 1:
            numbers = ", ".join(str(rules.index(r) + 1) for r in matching)
            return f"several rules have the pattern {which!r}: remove one by its number ({numbers})"
        [found] = matching
    if found["scope"] == "builtin":
        return (
            f"{describe(found)} is built in: turn the read-only defaults off with "
            "read_only_defaults = false under [settings] in your user rules file"
        )
    return found
