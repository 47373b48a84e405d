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
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tether_protocol import Rule

from ..config.files import TRUST_KEY
from ..config.layers import ConfigError, parse_toml, read_toml
from ..writes.disk import Changed, Refused, own_folder, remove_confined, update_confined
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


def _table(data: bytes | None, path: Path) -> dict[str, Any] | None:
    """The table of a rules file's bytes (None: no file); ``RulesFileError`` if not TOML."""
    if data is None:
        return None
    try:
        return parse_toml(data, path)
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


def _text(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


def _rewrite(
    root: Path, path: Path, change: Callable[[bytes | None], bytes | None], private: bool = False
) -> bool:
    """``path`` rewritten as ``change`` says, through the confined writer: reached from
    ``root`` without following a link (a ``.tether`` that links elsewhere is refused),
    replaced at once, and only if no one else wrote it since it was read. ``private``: the
    user's own file (made 0600), not a project's."""
    try:
        return update_confined(root, path, change, private=private)
    except Refused as exc:
        raise RulesFileError(f"{path} was not written: {exc}") from None
    except Changed:
        raise RulesFileError(f"{path} kept changing while it was written; try again") from None
    except OSError as exc:
        raise RulesFileError(f"{path} was not written: {exc.strerror or exc}") from None


GITIGNORE = PROJECT_FILE.parent / ".gitignore"
GITIGNORED = b"""\
# Written by Tether: the files it keeps here stay out of `git status` (docs/approvals.md).
# Delete this file (or a line) to share them with the repository.
.gitignore
rules.toml
"""


def _keep_out_of_git(root: Path) -> None:
    """A ``.gitignore`` inside ``.tether`` for the rules file, unless one is there (best
    effort: the rules are written either way)."""
    with suppress(Refused, Changed, OSError):
        update_confined(root, root / GITIGNORE, lambda data: None if data else GITIGNORED)


def _project_lines(rules: Sequence[Rule]) -> list[str]:
    lines = ["# Tether approval rules of this project (docs/approvals.md)."]
    for rule in rules:
        lines += _rule_lines(rule, None)
    return lines


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
        return self._user_from(_read_toml(self.user_file))

    def _user_from(self, table: dict[str, Any] | None) -> UserFile:
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

    @staticmethod
    def _user_lines(user: UserFile) -> list[str]:
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
        return lines

    def _update_user(self, change: Callable[[UserFile], bool]) -> bool:
        """Rewrite the user's file when ``change`` changes what was read (True). Links the
        user made to the file or its folder are the user's own and followed, once."""
        try:
            own_folder(self.user_file.parent)
            target = self.user_file.resolve()
            folder = own_folder(target.parent, narrowed=False)  # a link's: the user's choice
        except OSError as exc:
            raise RulesFileError(f"{self.user_file} was not written: {exc}") from None

        def changed(data: bytes | None) -> bytes | None:
            user = self._user_from(_table(data, self.user_file))
            return _text(self._user_lines(user)) if change(user) else None

        return _rewrite(folder, folder / target.name, changed, private=True)

    @staticmethod
    def _update_project(root: Path, change: Callable[[list[Rule]], list[Rule] | None]) -> bool:
        """Rewrite ``root``'s project file when ``change`` gives new rules (True)."""
        path = root / PROJECT_FILE

        emptied = False

        def changed(data: bytes | None) -> bytes | None:
            nonlocal emptied
            table = _table(data, path)
            rules = [] if table is None else [r for r, _ in _rules_of(table, path, "project")]
            new = change(rules)
            emptied = new == []
            return None if new is None else _text(_project_lines(new))

        written = _rewrite(root, path, changed)
        if written and emptied:  # no rule left: no file (its folder may hold nothing else)
            remove_confined(root, path)
        elif written:
            _keep_out_of_git(root)
        return written

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

                def with_rule(existing: list[Rule]) -> list[Rule] | None:
                    return None if any(same_rule(r, rule) for r in existing) else [*existing, rule]

                self._update_project(self._project_root(roots), with_rule)
                return rule
            project = str(self._project_root(roots)) if rule.scope == "project" else None

            def added(user: UserFile) -> bool:
                if any(same_rule(r, rule) and p == project for r, p in user.rules):
                    return False
                user.rules.append((rule, project))
                return True

            self._update_user(added)
            return rule

    def remove(self, rule: Rule, roots: Sequence[Path]) -> bool:
        """Remove a stored ``user`` or ``project`` rule; False when there was none."""
        keys = {str(r) for r in roots}

        def removed_from(user: UserFile) -> bool:
            kept = [
                (r, p)
                for r, p in user.rules
                if not (
                    same_rule(r, rule) and ((p is None) if rule.scope == "user" else (p in keys))
                )
            ]
            if len(kept) == len(user.rules):
                return False
            user.rules = kept
            return True

        def without_rule(existing: list[Rule]) -> list[Rule] | None:
            left = [r for r in existing if not same_rule(r, rule)]
            return None if len(left) == len(existing) else left

        with self._lock:
            removed = self._update_user(removed_from)
            if rule.scope == "project":
                for root in roots:
                    removed = self._update_project(root, without_rule) or removed
            return removed

    @staticmethod
    def _project_root(roots: Sequence[Path]) -> Path:
        if not roots:
            raise RulesFileError("no workspace folder for a project rule")
        return roots[0]
