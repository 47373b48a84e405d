"""The sensitive-path floor: files whose change is always asked, whatever else allows it.

A change to these runs code or changes how tools run without any further approval (a git
hook on the next commit, a `.envrc` on the next `cd`, editor settings when the folder is
opened, a CI workflow on the next push), or it holds secrets. ``autoApprove`` and an
earlier "allow always" never cover them: the user is asked, and told why.

Whatever the workspace root, the user's own files (``personal.py``: shell start-up files,
``~/.config``, keys, credentials, Tether's own settings) are sensitive too, judged by their
resolved absolute path.

Paths are matched on their resolved workspace-relative form (``Workspace.resolve`` has
already followed symlinks and ``..``), case-insensitively, with what case-insensitive or
Unicode-normalising file systems ignore taken out first: ``.GIT``, ``.git.`` (Windows),
``.git::$DATA`` (NTFS streams) and ``.g\u200cit`` (HFS+) all name ``.git`` somewhere.
The list and the reasons for it are in docs/security.md.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tether_protocol import DiffPreview, Preview

from .folders import path_from_uri
from .personal import write_reason
from .places import UserPlaces, broad_root, normalized, user_places

__all__ = [
    "OUTSIDE",
    "RULES",
    "Rule",
    "normalized",
    "reason_for_path",
    "reason_for_preview",
    "reason_for_relative",
]

Kind = Literal["dir", "path", "name", "prefix", "suffix"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of sensitive path and why it is sensitive.

    ``dir``: a path component equal to ``pattern`` (the folder itself or anything in it);
    ``path``: the components ``pattern`` (slash-separated) in a row, anywhere;
    ``name``/``prefix``/``suffix``: the file name equals, starts or ends with ``pattern``.
    """

    kind: Kind
    pattern: str
    reason: str


GIT = "git internals: configure how git runs (hooks, filters, aliases)"
EDITOR = "editor settings: can run code when the folder is opened"
CI = "a CI pipeline: runs on the next push, often with secrets"
KEY = "a private key or certificate"

RULES: tuple[Rule, ...] = (
    # Most specific first: the first matching rule gives the reason shown.
    Rule("path", ".git/hooks", "a git hook: runs code on git commands"),
    Rule("dir", ".git", GIT),
    Rule("name", ".gitmodules", "git submodules: where git fetches code from"),
    Rule("name", ".gitattributes", "git attributes: select filters and diff drivers"),
    Rule("name", ".gitconfig", GIT),
    Rule("name", ".lfsconfig", "git LFS settings: where large files come from"),
    Rule("dir", ".hg", "Mercurial internals: hooks and settings run code"),
    Rule("dir", ".svn", "Subversion internals"),
    Rule("dir", ".bzr", "Bazaar internals"),
    Rule("dir", ".jj", "Jujutsu internals"),
    Rule("dir", "_darcs", "Darcs internals"),
    Rule("dir", ".husky", "git hooks (husky): run code on commit"),
    Rule("name", ".pre-commit-config.yaml", "pre-commit hooks: run code on commit"),
    Rule("name", "lefthook.yml", "git hooks (lefthook): run code on commit"),
    Rule("name", ".lefthook.yml", "git hooks (lefthook): run code on commit"),
    Rule("dir", ".vscode", EDITOR),
    Rule("suffix", ".code-workspace", EDITOR),
    Rule("dir", ".idea", EDITOR),
    Rule("dir", ".zed", EDITOR),
    Rule("dir", ".fleet", EDITOR),
    Rule("suffix", ".sublime-project", EDITOR),
    Rule("dir", ".devcontainer", "a dev container: its commands run when it is opened"),
    Rule("name", ".nvim.lua", "a Neovim project config: runs code when opened (exrc)"),
    Rule("name", ".nvimrc", "a Neovim project config: runs code when opened (exrc)"),
    Rule("name", ".exrc", "a Vim project config: runs code when opened (exrc)"),
    Rule("name", ".vimrc", "a Vim project config: runs code when opened (exrc)"),
    Rule("name", ".lvimrc", "a Vim local config: runs code when opened"),
    Rule("name", ".dir-locals.el", "Emacs directory variables: can evaluate code"),
    Rule("name", ".dir-locals-2.el", "Emacs directory variables: can evaluate code"),
    Rule("name", ".envrc", "a direnv script: runs when you enter the folder"),
    Rule("dir", ".claude", "coding-agent settings: hooks and tools that run code"),
    Rule("dir", ".cursor", "coding-agent settings: tools that run code"),
    Rule("dir", ".tether", "Tether's own project settings"),
    Rule("path", ".github/workflows", CI),
    Rule("path", ".github/actions", CI),
    Rule("name", ".gitlab-ci.yml", CI),
    Rule("dir", ".circleci", CI),
    Rule("dir", ".buildkite", CI),
    Rule("dir", ".woodpecker", CI),
    Rule("dir", ".teamcity", CI),
    Rule("name", ".travis.yml", CI),
    Rule("name", ".drone.yml", CI),
    Rule("name", ".woodpecker.yml", CI),
    Rule("name", "azure-pipelines.yml", CI),
    Rule("name", "bitbucket-pipelines.yml", CI),
    Rule("name", "appveyor.yml", CI),
    Rule("name", ".appveyor.yml", CI),
    Rule("name", "jenkinsfile", CI),
    Rule("prefix", ".env.", "environment secrets"),
    Rule("suffix", ".env", "environment secrets"),
    Rule("name", ".npmrc", "package manager settings: registry tokens and scripts"),
    Rule("name", ".yarnrc", "package manager settings: registry tokens and scripts"),
    Rule("name", ".yarnrc.yml", "package manager settings: registry tokens and scripts"),
    Rule("name", ".pypirc", "package index credentials"),
    Rule("name", "pip.conf", "package index settings: where code is installed from"),
    Rule("name", ".netrc", "login credentials"),
    Rule("name", ".git-credentials", "git credentials"),
    Rule("dir", ".ssh", "SSH keys and settings"),
    Rule("dir", ".aws", "cloud credentials"),
    Rule("dir", ".gnupg", "GnuPG keys"),
    Rule("prefix", "id_rsa", "an SSH key"),
    Rule("prefix", "id_dsa", "an SSH key"),
    Rule("prefix", "id_ecdsa", "an SSH key"),
    Rule("prefix", "id_ed25519", "an SSH key"),
    *(Rule("suffix", ext, KEY) for ext in (".pem", ".key", ".p12", ".pfx", ".jks", ".ppk")),
    Rule("suffix", ".keystore", KEY),
)

OUTSIDE = "a file outside the workspace folders"


def _matches(rule: Rule, parts: Sequence[str]) -> bool:
    name = parts[-1]
    if rule.kind == "dir":
        return rule.pattern in parts
    if rule.kind == "path":
        want = rule.pattern.split("/")
        return any(list(parts[i : i + len(want)]) == want for i in range(len(parts)))
    if rule.kind == "name":
        return name == rule.pattern
    if rule.kind == "prefix":
        return name.startswith(rule.pattern)
    return name.endswith(rule.pattern)


def reason_for_relative(relative: str) -> str | None:
    """Why the workspace-relative ``relative`` path is sensitive; None when it is not."""
    names = [p for p in relative.replace("\\", "/").split("/") if p not in ("", ".")]
    if not names:
        return None
    # Sensitive under either reading: on Linux `x:.pem` is a key file named `x:.pem`, on
    # NTFS `.git::$INDEX_ALLOCATION` is `.git`; a name never escapes by taking the other one.
    readings = (False, True) if any(":" in n for n in names) else (False,)
    for streams in readings:  # the NTFS reading differs only for a name with a colon
        parts = [normalized(p, streams=streams) for p in names]
        reason = next((rule.reason for rule in RULES if _matches(rule, parts)), None)
        if reason is not None:
            return reason
    return None


def reason_for_path(
    path: Path, roots: Sequence[Path], places: UserPlaces | None = None
) -> str | None:
    """Why the resolved absolute ``path`` is sensitive: by its place on the machine (the
    user's own files, ``personal.py``: whatever the workspace root), else by its place in
    its workspace folder. ``places``: the user's (by default, as this process's environment
    says).

    A path in no root is sensitive: the floor fails closed. A ``..`` left in ``path`` is
    read both ways (as written and removed), and either reading that is sensitive counts.
    """
    spellings = list(dict.fromkeys([path, Path(os.path.normpath(path))]))
    placed = [next((r for r in roots if p.is_relative_to(r)), None) for p in spellings]
    if None in placed:
        return OUTSIDE
    places = user_places() if places is None else places
    for spelled, root in zip(spellings, placed, strict=True):
        assert root is not None
        broad = broad_root(root, places) is not None
        reason = write_reason(spelled, places, broad=broad)
        if reason is not None:
            return reason
    for spelled, root in zip(spellings, placed, strict=True):
        assert root is not None
        reason = reason_for_relative(spelled.relative_to(root).as_posix())
        if reason is not None:
            return reason
    return None


def reason_for_preview(
    preview: Preview | None, roots: Sequence[Path], places: UserPlaces | None = None
) -> str | None:
    """Why the change a preview shows touches a sensitive path; None for commands."""
    if not isinstance(preview, DiffPreview):
        return None
    path = path_from_uri(preview.uri)
    if path is None:
        return OUTSIDE
    return reason_for_path(path, roots, places)
