"""The user's own places the floor must know whatever the workspace root, and the ways a
path to one can be spelled: shared by the generated tests (``test_paths_sensitive.py``) and
the real servers' (``tests/e2e/test_sensitive_paths.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

SHELL = "shell start-up"
TETHER = "Tether's own settings"
LOGIN = "your login"
CREDENTIALS = "credentials"

FLOOR_WRITES: dict[str, str] = {
    ".config/tether/config.toml": TETHER,
    ".config/tether/rules.toml": TETHER,
    ".bashrc": SHELL,
    ".bash_profile": SHELL,
    ".bash_login": SHELL,
    ".profile": SHELL,
    ".zshrc": SHELL,
    ".zshenv": SHELL,
    ".zprofile": SHELL,
    ".zlogin": SHELL,
    ".inputrc": SHELL,
    ".config/fish/config.fish": SHELL,
    ".config/systemd/user/evil.service": LOGIN,
    ".config/autostart/evil.desktop": LOGIN,
    ".local/bin/ls": "on your PATH",
    ".local/share/applications/evil.desktop": "desktop entry",
    ".config/nvim/init.lua": "your programs' settings",
    ".ssh/authorized_keys": "SSH keys",
    ".gnupg/gpg-agent.conf": "GnuPG keys",
    ".netrc": CREDENTIALS,
    ".git-credentials": CREDENTIALS,
    ".aws/credentials": CREDENTIALS,
    ".docker/config.json": CREDENTIALS,
    ".kube/config": CREDENTIALS,
    ".pypirc": CREDENTIALS,
    ".npmrc": CREDENTIALS,
    ".cargo/credentials.toml": CREDENTIALS,
}
"""A path under the home folder whose change is always asked, and what the reason says."""

SECRET_READS: tuple[str, ...] = (
    ".ssh/id_rsa",
    ".ssh/id_ed25519",
    ".gnupg/private-keys-v1.d/key.key",
    ".netrc",
    ".git-credentials",
    ".aws/credentials",
    ".docker/config.json",
    ".kube/config",
    ".pypirc",
    ".npmrc",
    ".cargo/credentials.toml",
    ".bash_history",
    ".config/gh/hosts.yml",
    ".config/tether/config.toml",
)
"""A path under the home folder the built-in read-only commands never read unasked."""

SECRET_TEXT = "SECRET-1c6b0e"
"""What every planted secret file holds: never in anything the model is sent."""

DOOR = "door"
"""The name of the links in the home folder a spelling goes through (``through_link``)."""


def plant(home: Path) -> None:
    """The home folder with every floor place in it, each secret holding ``SECRET_TEXT``."""
    for rel in (*FLOOR_WRITES, *SECRET_READS):
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(f"{SECRET_TEXT}\n")
    (home / "Documents").mkdir(exist_ok=True)


def _upper_first(rel: str) -> str:
    first, _, rest = rel.partition("/")
    return "/".join(p for p in (first.upper(), rest) if p)


def through_link(home: Path, rel: str) -> str:
    """``rel`` reached through a link in the home folder (made here) to its folder."""
    folder = Path(rel).parent
    door = home / f"{DOOR}_{folder.as_posix().replace('/', '_')}"
    if not door.is_symlink():
        door.symlink_to(home / folder)
    return f"{door.name}/{Path(rel).name}"


Spelling = Callable[[Path, str], str]
SPELLINGS: dict[str, Spelling] = {
    "plain": lambda home, rel: rel,
    "dot-dot": lambda home, rel: f"Documents/../{rel}",
    "case": lambda home, rel: _upper_first(rel),
    "trailing-slash": lambda home, rel: f"{rel}/",
    "absolute": lambda home, rel: str(home / rel),
    "link": through_link,
}
"""Ways to name ``home / rel``, relative to the home folder (or absolute)."""


def placed(base: Path, root_kind: str, spelled: str) -> tuple[Path, str]:
    """The workspace root of ``root_kind`` — ``home`` (``base / "home"``), ``above`` (``base``)
    or ``/`` — and ``spelled`` (relative to the home folder, or absolute) as a path given in
    that root."""
    home = base / "home"
    if spelled.startswith("/") or root_kind == "home":
        given = spelled
    elif root_kind == "above":
        given = f"home/{spelled}"
    else:
        given = f"{home}/{spelled}"
    root = {"home": home, "above": base, "/": Path("/")}[root_kind]
    return root, given
