"""A repository whose ``.tether`` is a link out of the workspace, against ``tether rules``.

The link points at the user's own config folder: a project rule written through it would
replace the user's ``rules.toml`` with a project file, and the user's allows bound to other
projects would come back from it as rules of every project. Promise: Tether writes no
project file through a link; it refuses, saying why, and the user's file is unchanged.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.cli import tether
from tests.e2e.test_cli_terminal import assert_nothing_left, environment

USER_RULES = """[settings]
read_only_defaults = true
trusted_projects = []

[[rules]]
tool = "bash"
pattern = "make deploy"
decision = "allow"
project = "/home/me/work/infra"
"""


def test_a_project_rule_is_not_written_through_a_linked_tether_folder(tmp_path: Path) -> None:
    env = environment(tmp_path)  # HOME is tmp_path
    config = tmp_path / ".config" / "tether"
    config.mkdir(parents=True)
    (config / "rules.toml").write_text(USER_RULES)
    root = tmp_path / "clone"
    root.mkdir()
    (root / ".tether").symlink_to(config, target_is_directory=True)

    out = tether(["rules", "add", "bash", "rm *", "--deny"], root, env)
    assert (config / "rules.toml").read_text() == USER_RULES
    assert out.returncode == 2, out.stdout
    assert "symbolic link" in out.stderr and ".tether" in out.stderr
    assert len(out.stderr.splitlines()) == 1
    assert_nothing_left(env)
