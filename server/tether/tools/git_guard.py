"""Built-in git runs no program a repository's config names.

A repository's own config (``.git/config``, what it includes, ``config.worktree``) is
written by whoever wrote the repository — a sandboxed command that ran unasked (``git
init``, a nested repository) or a tool the user ran — and git runs programs it names:
``core.fsmonitor`` on every ``git status``, hooks (``post-index-change``), diff and filter
drivers, ``gpg.program`` for ``log.showSignature``, transports for a lazy fetch. A command
the built-in read-only rules allowed (``git status``, ``git diff``, ``git log``, ``git
show``) therefore runs in two steps:

1. every setting that can be neutralised is, for the whole command and every git it
   starts (submodules included), through ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``, which
   win over every config file: no fsmonitor, no hooks, no pager, editor, askpass, gpg or
   credential helper, no transport at all (``GIT_ALLOW_PROTOCOL`` empty), no embedded bare
   repository (``safe.bareRepository=explicit``), no look into submodules;
2. what cannot be neutralised that way — drivers, whose names are the repository's choice
   (``diff.<driver>.textconv``, ``filter.<driver>.clean``), and ``diff.external`` — is
   refused: before the command runs, the repository-scoped settings are listed, and any
   that is neither neutralised above nor on an allow-list of settings known to run
   nothing (``ALLOWED``) stops the command, named in the result. The user's own
   (global, system) config is the user's choice and is not judged.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

NEUTRALISED: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "/dev/null"),
    ("sequence.editor", "/dev/null"),
    ("core.askPass", "/dev/null"),
    ("core.sshCommand", "/dev/null"),
    ("credential.helper", ""),  # the empty value empties the list of helpers
    ("gpg.program", "/dev/null"),
    ("gpg.openpgp.program", "/dev/null"),
    ("gpg.x509.program", "/dev/null"),
    ("gpg.ssh.program", "/dev/null"),
    ("log.showSignature", "false"),
    ("protocol.allow", "never"),
    ("safe.bareRepository", "explicit"),
    ("diff.ignoreSubmodules", "all"),  # no git started inside a submodule
    ("diff.submodule", "short"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
)
"""Settings given on git's command line (they win over every file), for every git."""

ENVIRONMENT: Mapping[str, str] = {
    "GIT_ALLOW_PROTOCOL": "",  # no transport, whatever protocol.<name>.allow says
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}

ALLOWED = tuple(
    re.compile(pattern)
    for pattern in (
        r"core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|"
        r"precomposeunicode|symlinks|autocrlf|safecrlf|eol|quotepath|checkstat|trustctime|"
        r"untrackedcache|splitindex|abbrev|commentchar|compression|loosecompression|"
        r"bigfilethreshold|whitespace|preloadindex|sparsecheckout|sparsecheckoutcone|"
        r"multipackindex|commitgraph|longpaths)",
        r"extensions\.(objectformat|worktreeconfig|partialclone|preciousobjects|noop)",
        r"remote\..+\.(url|pushurl|fetch|push|tagopt|prune|prunetags|mirror|"
        r"skipdefaultupdate|skipfetchall|promisor|partialclonefilter)",
        r"branch\..+\.(remote|merge|rebase|pushremote|description)",
        r"submodule\..+\.(url|active|branch|ignore|shallow|fetchrecursesubmodules)",
        r"submodule\.active",
        r"(user|author|committer|init|color|advice|i18n|column|pull|push|fetch|rebase|merge|"
        r"diff|log|status|gc|pack|index|feature|maintenance|lfs|commit|tag|rerere|format|"
        r"blame|checkout|clone|worktree|grep|help|transfer|receive|uploadpack)\.[^.]+",
        r"color\..+",
        r"(alias|include)\..+",  # an alias cannot replace a git command; includes are listed
        r"includeif\..+\.path",
        r"(http|url)\..+",  # for transports, and there are none
        r"(difftool|mergetool)\..+",  # run by git difftool / mergetool only
    )
)
"""Repository settings known to run nothing in ``git status/diff/log/show`` (keys as git
lists them: section and name in lower case)."""

REFUSED_TWO_LEVEL = frozenset({"diff.external", "uploadpack.packobjectshook"})
"""Two-level names the broad patterns above would let through."""

STANDARD_VALUES: Mapping[str, str] = {
    "filter.lfs.clean": "git-lfs clean -- %f",
    "filter.lfs.smudge": "git-lfs smudge -- %f",
    "filter.lfs.process": "git-lfs filter-process",
    "filter.lfs.required": "true",
}
"""Settings allowed with exactly these values (what ``git lfs install --local`` writes)."""

REPOSITORY_SCOPES = frozenset({"local", "worktree"})
LIST_TIMEOUT_SECONDS = 10.0


def git_environment(base: Mapping[str, str]) -> dict[str, str]:
    """The variables a built-in command gets on top of ``base``: the neutralised settings
    appended to any ``GIT_CONFIG_COUNT`` already there (later ones win)."""
    try:
        start = max(int(base.get("GIT_CONFIG_COUNT", "0")), 0)
    except ValueError:
        start = 0
    env = dict(ENVIRONMENT)
    for i, (key, value) in enumerate(NEUTRALISED, start):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env["GIT_CONFIG_COUNT"] = str(start + len(NEUTRALISED))
    return env


def _neutralised() -> frozenset[str]:
    return frozenset(key.lower() for key, _ in NEUTRALISED)


def tolerated(key: str, value: str | None) -> bool:
    """Whether a repository setting may stand in a built-in git command's repository."""
    name = _normal(key)
    if name in _neutralised():
        return True
    if name in STANDARD_VALUES:
        return value == STANDARD_VALUES[name]
    if name in REFUSED_TWO_LEVEL:
        return False
    return any(p.fullmatch(name) for p in ALLOWED)


def _normal(key: str) -> str:
    """Section and name in lower case, a subsection kept (as git compares them)."""
    section, _, rest = key.partition(".")
    sub, dot, name = rest.rpartition(".")
    return (
        f"{section.lower()}.{sub}{dot}{name.lower()}"
        if dot
        else f"{section.lower()}.{rest.lower()}"
    )


def refused_settings(cwd: Path, env: Mapping[str, str]) -> list[str]:
    """The repository settings in ``cwd`` that built-in git does not run with (blocking:
    runs ``git config``, which runs no program). An unreadable config is refused too."""
    git = shutil.which("git", path=env.get("PATH"))
    if git is None:
        return []  # the command's git will not be found either
    try:
        listed = subprocess.run(
            [git, "config", "--list", "--show-scope", "--includes", "-z"],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=LIST_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [f"(the config could not be read: {exc})"]
    if listed.returncode != 0:
        why = listed.stderr.decode(errors="replace").strip().splitlines()
        return [f"(the config could not be read: {why[-1] if why else listed.returncode})"]
    fields = listed.stdout.decode(errors="replace").split("\0")
    refused: list[str] = []
    for scope, entry in zip(fields[::2], fields[1::2], strict=False):
        if scope not in REPOSITORY_SCOPES:
            continue
        key, newline, value = entry.partition("\n")
        if not tolerated(key, value if newline else None) and key not in refused:
            refused.append(key)
    return refused


def refusal(settings: list[str]) -> str:
    """What the model is told when built-in git was not run."""
    return (
        "Not run: this repository's own git config has settings that can run programs, "
        f"and built-in read-only git commands never run with them: {', '.join(settings)}. "
        "Ask the user before running git here."
    )
