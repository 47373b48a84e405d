"""The confined writer for Tether's own files (rules, state): never through a link below
the root, never over a change it did not read, and the user's own links followed once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.policy.store import PROJECT_FILE, RulesFileError, RuleStore
from tether.writes.disk import (
    Changed,
    Refused,
    read_confined,
    replace_confined,
    update_confined,
)
from tether_protocol import Rule


def test_a_file_is_replaced_only_over_what_was_read(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "f.txt"
    replace_confined(tmp_path, path, b"one\n", None)  # a new file, its folder made
    assert read_confined(tmp_path, path) == b"one\n"
    with pytest.raises(Changed):
        replace_confined(tmp_path, path, b"two\n", b"not what is there\n")
    with pytest.raises(Changed):
        replace_confined(tmp_path, path, b"two\n", None)  # it exists now
    os.chmod(path, 0o640)
    replace_confined(tmp_path, path, b"two\n", b"one\n")
    assert path.read_bytes() == b"two\n" and path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.txt"]  # no temporary left


def test_no_link_below_the_root_is_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "f.txt").write_text("theirs\n")
    (root / "folder").symlink_to(outside, target_is_directory=True)
    (root / "file.txt").symlink_to(outside / "f.txt")
    for path in (root / "folder" / "f.txt", root / "file.txt"):
        with pytest.raises(Refused, match="symbolic link"):
            read_confined(root, path)
        with pytest.raises(Refused, match="symbolic link"):
            replace_confined(root, path, b"mine\n", b"theirs\n")
    with pytest.raises(Refused, match="outside"):
        replace_confined(root, outside / "f.txt", b"mine\n", b"theirs\n")
    assert (outside / "f.txt").read_text() == "theirs\n"


def test_an_update_is_done_again_over_another_writers_change(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_text("a\n")
    calls = 0

    def append_b(data: bytes | None) -> bytes:
        nonlocal calls
        calls += 1
        if calls == 1:  # another process writes between our read and our rename
            path.write_text("a\nc\n")
        return (data or b"") + b"b\n"

    assert update_confined(tmp_path, path, append_b)
    assert path.read_text() == "a\nc\nb\n" and calls == 2  # neither change lost
    assert not update_confined(tmp_path, path, lambda data: None)


def rule(pattern: str, decision: str = "deny", scope: str = "project") -> Rule:
    return Rule.model_validate(
        {"tool": "bash", "pattern": pattern, "decision": decision, "scope": scope}
    )


def test_a_project_rule_is_refused_through_a_linked_tether_folder(tmp_path: Path) -> None:
    store = RuleStore(tmp_path / "config" / "tether" / "rules.toml")
    store.add(rule("make deploy", "allow", "user"), [])
    mine = store.user_file.read_text()
    root = tmp_path / "clone"
    root.mkdir()
    (root / ".tether").symlink_to(store.user_file.parent, target_is_directory=True)
    with pytest.raises(RulesFileError, match=r"\.tether is a symbolic link"):
        store.add(rule("rm *"), [root])
    with pytest.raises(RulesFileError, match=r"\.tether is a symbolic link"):
        store.remove(rule("make deploy", "allow", "project"), [root])
    assert store.user_file.read_text() == mine


def test_the_users_own_links_to_the_rules_file_are_followed(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "rules.toml"
    dotfiles.parent.mkdir()
    dotfiles.write_text("[settings]\nread_only_defaults = true\n")
    config = tmp_path / "config" / "tether"
    config.mkdir(parents=True)
    (config / "rules.toml").symlink_to(dotfiles)  # a dotfile manager's link
    store = RuleStore(config / "rules.toml")
    store.add(rule("pytest *", "allow", "user"), [])
    assert (config / "rules.toml").is_symlink() and 'pattern = "pytest *"' in dotfiles.read_text()


def test_project_rules_are_written_into_a_new_tether_folder(tmp_path: Path) -> None:
    store = RuleStore(tmp_path / "config" / "tether" / "rules.toml")
    root = tmp_path / "ws"
    root.mkdir()
    store.add(rule("rm *"), [root])
    assert 'pattern = "rm *"' in (root / PROJECT_FILE).read_text()
    assert store.remove(rule("rm *"), [root])
    assert not (root / PROJECT_FILE).exists()  # its last rule gone, the file goes too
