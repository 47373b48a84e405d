"""The broad-workspace check and its setting: which roots are refused, who may allow them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.config.assemble import assemble
from tether.config.files import BROAD_KEY, user_config_path
from tether.config.layers import ConfigError, parse_settings
from tether.workspace.places import (
    BROAD_KEY as PLACES_KEY,
)
from tether.workspace.places import (
    broad_root,
    broad_root_refusal,
    tether_config_file,
    user_places,
)


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home)} | extra


@pytest.mark.parametrize(
    "environ",
    [{"HOME": "/h"}, {"HOME": "/h", "XDG_CONFIG_HOME": "/x/cfg"}, {"XDG_CONFIG_HOME": "/c"}],
)
def test_the_message_names_the_config_file_tether_reads(environ: dict[str, str]) -> None:
    assert tether_config_file(environ) == user_config_path(environ)
    assert PLACES_KEY == BROAD_KEY


@pytest.mark.parametrize(
    ("root", "what"),
    [
        ("/", "the file system's root"),
        ("{home}", "your home folder"),
        ("{home}/", "your home folder"),
        ("{base}", "a folder above your home folder"),
        ("{base_upper}", "a folder above your home folder"),  # a case-insensitive disk's view
    ],
)
def test_a_broad_root_is_named(tmp_path: Path, root: str, what: str) -> None:
    environ = env_for(tmp_path)
    home = Path(environ["HOME"])
    given = Path(root.format(home=home, base=tmp_path, base_upper=str(tmp_path).upper()))
    found = broad_root(given, user_places(environ))
    assert found is not None and found.startswith(what)
    refusal = broad_root_refusal([given], environ, allowed=False)
    assert refusal is not None and what in refusal
    assert f"{BROAD_KEY} = true in {home / '.config' / 'tether' / 'config.toml'}" in refusal
    assert broad_root_refusal([given], environ, allowed=True) is None


def test_a_home_reached_through_a_link_counts(tmp_path: Path) -> None:
    real = tmp_path / "real-home"
    real.mkdir()
    (tmp_path / "home").symlink_to(real)
    environ = {"HOME": str(tmp_path / "home")}
    assert broad_root(real, user_places(environ)) == "your home folder"


@pytest.mark.parametrize("sub", ["proj", "proj/src", ".dotfiles"])
def test_a_folder_inside_the_home_folder_is_a_project(tmp_path: Path, sub: str) -> None:
    environ = env_for(tmp_path)
    root = Path(environ["HOME"]) / sub
    assert broad_root_refusal([root], environ, allowed=False) is None
    assert broad_root_refusal([tmp_path / "elsewhere"], environ, allowed=False) is None


def test_every_root_is_checked(tmp_path: Path) -> None:
    environ = env_for(tmp_path)
    home = Path(environ["HOME"])
    refusal = broad_root_refusal([home / "proj", home], environ, allowed=False)
    assert refusal is not None and "your home folder" in refusal


def write_user(tmp_path: Path, text: str) -> dict[str, str]:
    environ = env_for(tmp_path)
    folder = Path(environ["HOME"]) / ".config" / "tether"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)
    return environ


@pytest.mark.parametrize(("text", "allowed"), [("", False), (f"{BROAD_KEY} = true\n", True)])
def test_the_users_own_file_allows_it(tmp_path: Path, text: str, allowed: bool) -> None:
    environ = write_user(tmp_path, text + 'provider = "scripted"\n')
    settings = assemble(None, environ)
    assert settings.allow_broad_workspace is allowed
    assert settings.config.provider == "scripted"


def test_a_value_that_is_not_true_or_false_is_an_error_naming_it(tmp_path: Path) -> None:
    environ = write_user(tmp_path, f'{BROAD_KEY} = "yes"\n')
    with pytest.raises(ConfigError, match=f"{BROAD_KEY}: expected true or false"):
        assemble(None, environ)


@pytest.mark.parametrize("source", ["initializationOptions", "settings.tether", "flags"])
def test_an_editor_or_a_flag_cannot_set_it(source: str) -> None:
    with pytest.raises(ConfigError, match=f"{BROAD_KEY}: only your own config.toml may set it"):
        parse_settings({BROAD_KEY: True}, source)


@pytest.mark.parametrize("trusted", [False, True])
def test_a_projects_file_cannot_set_it(tmp_path: Path, trusted: bool) -> None:
    environ = write_user(
        tmp_path, f"trustedProjects = [{str(tmp_path / 'p')!r}]\n" if trusted else ""
    )
    project = tmp_path / "p"
    (project / ".tether").mkdir(parents=True)
    (project / ".tether" / "config.toml").write_text(f"{BROAD_KEY} = true\n")
    if trusted:
        with pytest.raises(ConfigError, match="only your own config.toml may set it"):
            assemble(project, environ)
    else:
        settings = assemble(project, environ)
        assert settings.allow_broad_workspace is False
        assert BROAD_KEY in settings.dropped


def test_no_variable_sets_it(tmp_path: Path) -> None:
    environ = env_for(tmp_path, TETHER_ALLOW_BROAD_WORKSPACE="1", ALLOW_BROAD_WORKSPACE="1")
    assert assemble(None, environ).allow_broad_workspace is False
