"""Where rules live: the user's ``rules.toml``, each project's ``.tether/rules.toml``.

A project file comes with the repository, so it can only tighten: its ``deny`` and ``ask``
rules apply, its ``allow`` rules only when the user trusts that project: in this file
(``trusted_projects``) or in ``config.toml`` beside it (``trustedProjects``, the list that
also trusts the project's ``.tether/config.toml``). A project ``allow`` the user adds
(``agent/rules/add`` or an approval answer) is kept in the user's file with the project's
path, where a clone cannot forge it; a project ``deny``/``ask`` goes to the project file,
to be shared.

Every method reads or writes files: call them from a worker thread.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tether_protocol import Rule

from ..config.layers import TRUST_KEY, ConfigError, read_toml
from .builtin import BUILTIN_RULES
from .match import check_pattern

log = logging.getLogger(__name__)

PROJECT_FILE = Path(".tether") / "rules.toml"


class RulesFileError(ValueError):
    """A rules file that cannot be read or written; the message names it."""


def user_rules_file(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/tether/rules.toml``, else ``~/.config/tether/rules.toml``."""
    base = environ.get("XDG_CONFIG_HOME") or str(
        Path(environ.get("HOME") or Path.home()) / ".config"
    )
    return Path(base) / "tether" / "rules.toml"


@dataclass(slots=True)
class UserFile:
    """The user's rules file: settings, user rules, and project allows by project path."""

    read_only_defaults: bool = True
    trusted_projects: list[str] = field(default_factory=list)
    rules: list[tuple[Rule, str | None]] = field(default_factory=list)
    """Each rule with the project path it belongs to (None: a user rule)."""


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The rules in force for a workspace."""

    rules: tuple[Rule, ...]
    read_only_defaults: bool


def _read_toml(path: Path) -> dict[str, Any] | None:
    """The file's table, None when there is none; ``RulesFileError`` when unreadable."""
    try:
        return read_toml(path)  # the one TOML reader (settings files too)
    except ConfigError as exc:
        raise RulesFileError(str(exc)) from exc


def _rules_of(table: dict[str, Any], path: Path, scope: str) -> list[tuple[Rule, str | None]]:
    found: list[tuple[Rule, str | None]] = []
    entries = table.get("rules", [])
    if not isinstance(entries, list):
        raise RulesFileError(f"{path}: 'rules' must be an array of tables ([[rules]])")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise RulesFileError(f"{path}: rules[{i}] is not a table")
        project = entry.get("project")
        try:
            rule = Rule.model_validate(
                {k: v for k, v in entry.items() if k != "project"} | {"scope": scope}
            )
            check_pattern(rule.tool, rule.pattern)
        except (ValidationError, ValueError) as exc:
            log.warning("%s: rules[%d] skipped: %s", path, i, str(exc).splitlines()[0])
            continue
        found.append((rule, project if isinstance(project, str) else None))
    return found


def _toml_string(text: str) -> str:
    # JSON's escapes are TOML's, but for DEL, which TOML wants escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _rule_lines(rule: Rule, project: str | None) -> list[str]:
    lines = ["", "[[rules]]", f"tool = {_toml_string(rule.tool)}"]
    lines += [
        f"pattern = {_toml_string(rule.pattern)}",
        f"decision = {_toml_string(rule.decision)}",
    ]
    if project is not None:
        lines.append(f"project = {_toml_string(project)}")
    return lines


def _write(path: Path, lines: list[str]) -> None:
    """Replace ``path`` at once (a crash leaves the old file or the new, never half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def same_rule(a: Rule, b: Rule) -> bool:
    """The same rule, scope aside."""
    return (a.tool, a.pattern.strip(), a.decision) == (b.tool, b.pattern.strip(), b.decision)


class RuleStore:
    """The user's and the projects' rules files (see the module docstring)."""

    def __init__(self, user_file: Path) -> None:
        self.user_file = user_file
        self._lock = threading.Lock()

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> RuleStore:
        """The store of the user config folder ``environ`` names."""
        return cls(user_rules_file(environ))

    def _trusted_in_config(self) -> set[Path]:
        """The projects the user's ``config.toml`` (beside this rules file) trusts: one
        trust list for both project files, so trusting a project in either counts."""
        path = self.user_file.parent / "config.toml"
        try:
            data = read_toml(path)
        except ConfigError as exc:
            log.warning("trusted projects of %s not used: %s", path, exc)
            return set()
        listed = (data or {}).get(TRUST_KEY, [])
        if not isinstance(listed, list):
            return set()
        return {Path(p).expanduser().resolve() for p in listed if isinstance(p, str)}

    def read_user(self) -> UserFile:
        """The user's file (defaults when there is none)."""
        table = _read_toml(self.user_file)
        if table is None:
            return UserFile()
        settings = table.get("settings", {})
        if not isinstance(settings, dict):
            raise RulesFileError(f"{self.user_file}: 'settings' must be a table")
        defaults = settings.get("read_only_defaults", True)
        trusted = settings.get("trusted_projects", [])
        if not isinstance(defaults, bool) or not isinstance(trusted, list):
            raise RulesFileError(
                f"{self.user_file}: settings.read_only_defaults is true or false, "
                "settings.trusted_projects a list of paths"
            )
        return UserFile(
            defaults,
            [str(p) for p in trusted if isinstance(p, str)],
            _rules_of(table, self.user_file, "user"),
        )

    def _write_user(self, user: UserFile) -> None:
        lines = [
            "# Tether approval rules (docs/approvals.md). Tether rewrites this file when",
            "# rules are added or removed through the protocol.",
            "",
            "[settings]",
            f"read_only_defaults = {'true' if user.read_only_defaults else 'false'}",
            "trusted_projects = ["
            + ", ".join(_toml_string(p) for p in user.trusted_projects)
            + "]",
        ]
        for rule, project in user.rules:
            lines += _rule_lines(rule, project)
        _write(self.user_file, lines)

    @staticmethod
    def read_project(root: Path) -> list[Rule]:
        """Every rule of the project file under ``root`` (trusted or not)."""
        path = root / PROJECT_FILE
        table = _read_toml(path)
        return [] if table is None else [r for r, _ in _rules_of(table, path, "project")]

    def rule_set(self, roots: Sequence[Path]) -> RuleSet:
        """The rules in force for a workspace of ``roots``; an unreadable file is logged
        and left out (its rules could only have tightened, or the user's own allowed)."""
        try:
            user = self.read_user()
        except RulesFileError as exc:
            log.warning("user rules not used: %s", exc)
            user = UserFile()
        keys = {str(r) for r in roots}
        trusted_in_config = self._trusted_in_config()
        rules: list[Rule] = []
        for root in roots:
            trusted = str(root) in user.trusted_projects or root.resolve() in trusted_in_config
            try:
                project = self.read_project(root)
            except RulesFileError as exc:
                log.warning("project rules not used: %s", exc)
                continue
            rules += [r for r in project if trusted or r.decision != "allow"]
        for rule, project_path in user.rules:
            if project_path is None:
                rules.append(rule)
            elif project_path in keys:
                rules.append(rule.model_copy(update={"scope": "project"}))
        if user.read_only_defaults:
            rules += BUILTIN_RULES
        return RuleSet(tuple(rules), user.read_only_defaults)

    def add(self, rule: Rule, roots: Sequence[Path]) -> Rule:
        """Store a ``user`` or ``project`` rule (once); returns it as stored."""
        check_pattern(rule.tool, rule.pattern)
        rule = rule.model_copy(update={"pattern": rule.pattern.strip()})
        with self._lock:
            if rule.scope == "project" and rule.decision != "allow":
                root = self._project_root(roots)
                existing = self.read_project(root)
                if not any(same_rule(r, rule) for r in existing):
                    lines = ["# Tether approval rules of this project (docs/approvals.md)."]
                    for r in [*existing, rule]:
                        lines += _rule_lines(r, None)
                    _write(root / PROJECT_FILE, lines)
                return rule
            user = self.read_user()
            project = str(self._project_root(roots)) if rule.scope == "project" else None
            if not any(same_rule(r, rule) and p == project for r, p in user.rules):
                user.rules.append((rule, project))
                self._write_user(user)
            return rule

    def remove(self, rule: Rule, roots: Sequence[Path]) -> bool:
        """Remove a stored ``user`` or ``project`` rule; False when there was none."""
        with self._lock:
            removed = False
            user = self.read_user()
            keys = {str(r) for r in roots}
            kept = [
                (r, p)
                for r, p in user.rules
                if not (
                    same_rule(r, rule) and ((p is None) if rule.scope == "user" else (p in keys))
                )
            ]
            if len(kept) != len(user.rules):
                user.rules = kept
                self._write_user(user)
                removed = True
            if rule.scope == "project":
                for root in roots:
                    existing = self.read_project(root)
                    left = [r for r in existing if not same_rule(r, rule)]
                    if len(left) != len(existing):
                        lines = ["# Tether approval rules of this project (docs/approvals.md)."]
                        for r in left:
                            lines += _rule_lines(r, None)
                        _write(root / PROJECT_FILE, lines)
                        removed = True
            return removed

    @staticmethod
    def _project_root(roots: Sequence[Path]) -> Path:
        if not roots:
            raise RulesFileError("no workspace folder for a project rule")
        return roots[0]
