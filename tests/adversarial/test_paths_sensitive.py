"""Promise: a file that holds secrets or runs code is sensitive under every reading of its
name. NTFS reads ``.git::$INDEX_ALLOCATION`` as ``.git``; Linux reads ``x:.pem`` as a key
file named ``x:.pem``. Taking only the first reading let ``x:.pem`` and ``a:b/.env`` pass as
ordinary files (attached by an @mention, edited unasked under ``autoApprove``).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.host import NoBuffers
from tether.policy.builtin import BUILTIN_RULES
from tether.policy.match import judge
from tether.workspace.folders import Workspace
from tether.workspace.places import user_places
from tether.workspace.sensitive import reason_for_path, reason_for_relative
from tether_protocol import CommandPreview

from .floor_places import FLOOR_WRITES, SECRET_READS, SPELLINGS, placed, plant

ENDINGS = [".pem", ".key", ".p12", ".env"]
"""Names sensitive by how they end: any prefix keeps them so (``cert.pem``, ``x.env``)."""
PREFIX = st.text(st.sampled_from("ab.-_ x"), max_size=4)


@given(PREFIX, PREFIX, st.sampled_from(ENDINGS), st.sampled_from(["", "src/", "a:b/"]))
def test_a_name_with_a_colon_before_a_sensitive_ending_stays_sensitive(
    before: str, after: str, ending: str, folder: str
) -> None:
    name = f"{folder}{before}:{after}{ending}"
    assert reason_for_relative(name) is not None, name


@given(st.sampled_from([".git", ".vscode", ".tether"]), st.text("$:ABC_", max_size=12))
def test_an_ntfs_stream_of_a_sensitive_folder_is_that_folder(folder: str, stream: str) -> None:
    assert reason_for_relative(f"{folder}::{stream}/config") is not None


def test_the_names_found_by_hand() -> None:
    assert reason_for_relative("x:.pem") is not None
    assert reason_for_relative("a:b/.env") is not None
    assert reason_for_relative("notes:.txt") is None


# --- the user's own places, whatever the workspace root ------------------------------------
# Promise: a change to the user's own start-up files, settings (Tether's first), keys and
# credentials is always asked, with its reason, whatever folder is the workspace — the home
# folder, a folder above it, `/` — and however the path is spelled (a link into the place,
# `..`, another case, a trailing slash, absolute); the built-in read-only commands never read
# a secret unasked from such a root, nor walk a folder holding one. Before, the floor knew
# only project paths: `~/.bashrc` or `~/.config/tether/config.toml` under a root of `~` was
# an ordinary file, and `cat ~/.ssh/id_rsa` under a root of `/` a workspace read.

WORDS = ("cat", "head -n 1", "wc -c", "grep -n x", "tail -n 2")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder above a planted home folder (``base / "home"``), and a project in it."""
    folder = tmp_path_factory.mktemp("floor").resolve()
    plant(folder / "home")
    (folder / "home" / "proj").mkdir()
    (folder / "home" / "proj" / "notes.txt").write_text("ordinary\n")
    (folder / "home" / "notes.txt").write_text("ordinary\n")
    return folder


ROOT_KINDS = st.sampled_from(["home", "above", "/"])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(FLOOR_WRITES)), st.sampled_from(sorted(SPELLINGS)), ROOT_KINDS)
def test_a_change_to_the_users_own_files_is_sensitive_however_spelled_whatever_the_root(
    base: Path, rel: str, spelling: str, root_kind: str
) -> None:
    home = base / "home"
    root, given = placed(base, root_kind, SPELLINGS[spelling](home, rel))
    ws = Workspace([root], NoBuffers())
    places = user_places({"HOME": str(home)})
    reason = reason_for_path(ws.resolve(given), ws.roots, places)
    assert reason is not None and FLOOR_WRITES[rel] in reason, (root, given, reason)


def test_tethers_own_config_where_xdg_config_home_says_is_sensitive_inside_a_project(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    (project / "cfg" / "tether").mkdir(parents=True)
    places = user_places({"HOME": str(tmp_path / "h"), "XDG_CONFIG_HOME": str(project / "cfg")})
    for name in ("config.toml", "rules.toml"):
        reason = reason_for_path(project / "cfg" / "tether" / name, [project], places)
        assert reason is not None and "Tether's own settings" in reason
    assert reason_for_path(project / "src" / "app.py", [project], places) is None


def test_a_project_inside_the_home_folder_is_not_sensitive_for_being_there(base: Path) -> None:
    places = user_places({"HOME": str(base / "home")})
    project = base / "home" / "proj"
    assert reason_for_path(project / "src" / "app.py", [project], places) is None
    assert reason_for_path(project / "notes.txt", [project], places) is None
    # under a broad root, an ordinary file of the home folder is ordinary too
    assert reason_for_path(base / "home" / "Documents" / "a.txt", [base], places) is None


def judged(command: str, root: Path, home: Path) -> str:
    """The rules' verdict on ``command`` in ``root`` with only the built-ins, for a server
    whose home folder is ``home``."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))
        env.delenv("XDG_CONFIG_HOME", raising=False)
        preview = CommandPreview(command=command, cwd=str(root))
        return judge("bash", preview, BUILTIN_RULES, [root]).outcome


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(SECRET_READS),
    st.sampled_from(sorted(SPELLINGS)),
    ROOT_KINDS,
    st.sampled_from(WORDS),
)
def test_the_built_in_reads_never_read_a_secret_however_spelled_whatever_the_root(
    base: Path, rel: str, spelling: str, root_kind: str, words: str
) -> None:
    home = base / "home"
    root, given = placed(base, root_kind, SPELLINGS[spelling](home, rel))
    assert judged(f"{words} {shlex.quote(given)}", root, home) != "allow", (root, given)


@pytest.mark.parametrize("root_kind", ["home", "above", "/"])
@pytest.mark.parametrize(
    "path",
    ["/proc/self/environ", "/proc/self/mem", "/proc/1/environ", "/proc/thread-self/environ"],
)
def test_the_built_in_reads_never_read_a_process_environment_or_memory(
    base: Path, root_kind: str, path: str
) -> None:
    root, _ = placed(base, root_kind, "x")
    for words in WORDS:
        assert judged(f"{words} {path}", root, base / "home") != "allow", (words, path)


@pytest.mark.parametrize("root_kind", ["home", "above", "/"])
@pytest.mark.parametrize("command", ["grep -r SECRET .", "grep -rn SECRET", "rg SECRET", "rg x ."])
def test_a_walk_of_a_folder_holding_secrets_is_asked(
    base: Path, root_kind: str, command: str
) -> None:
    root, _ = placed(base, root_kind, "x")
    assert judged(command, root, base / "home") != "allow"


@pytest.mark.parametrize(
    "command", ["grep -r SECRET .", "rg SECRET", "cat notes.txt", "head notes.txt"]
)
def test_the_built_in_reads_still_pass_in_a_project_of_the_home_folder(
    base: Path, command: str
) -> None:
    assert judged(command, base / "home" / "proj", base / "home") == "allow"


def test_an_ordinary_file_of_the_home_folder_is_still_read_under_a_broad_root(base: Path) -> None:
    assert judged("cat notes.txt", base / "home", base / "home") == "allow"
    assert judged("cat home/notes.txt", base, base / "home") == "allow"
    assert judged(f"cat {base}/home/proj/notes.txt", Path("/"), base / "home") == "allow"
