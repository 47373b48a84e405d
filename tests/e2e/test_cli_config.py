"""Config files for the CLI and `tether serve`: the user's file, a project's (untrusted
unless the user says so), precedence, and `tether config`."""

from __future__ import annotations

import json
from pathlib import Path

from tether.config.assemble import assemble

from .cli import configured_project, tether


def inline(text: str) -> str:
    """A TOML inline script whose one turn answers ``text``."""
    return f'{{ turns = [ {{ text = "{text}" }} ] }}'


def test_the_user_file_configures_a_run(tmp_path: Path) -> None:
    user = f'provider = "scripted"\nscript = {inline("from my file")}\n'
    root, env = configured_project(tmp_path, user)
    out = tether(["run", "hi"], root, env)
    assert out.returncode == 0, out.stderr
    assert "from my file" in out.stdout


def test_an_untrusted_project_cannot_choose_the_provider_or_script(tmp_path: Path) -> None:
    user = f'provider = "scripted"\nscript = {inline("user script")}\n'
    project = 'provider = "openai"\nbaseUrl = "https://elsewhere.example"\n'
    project += f"script = {inline('project script')}\nmaxSteps = 1\n"
    root, env = configured_project(tmp_path, user, project)
    out = tether(["run", "hi"], root, env)
    assert out.returncode == 0, out.stderr
    assert "user script" in out.stdout and "project script" not in out.stdout
    assert "ignoring baseUrl, provider, script" in out.stderr and "trustedProjects" in out.stderr
    assert out.stderr.count("ignoring") == 1  # the server says it; the CLI does not repeat it

    trusted = user + f"trustedProjects = [{json.dumps(str(root))}]\n"
    trusted = trusted.replace('provider = "scripted"', 'provider = "anthropic"')
    (tmp_path / "home" / ".config" / "tether" / "config.toml").write_text(trusted)
    project = project.replace('"openai"', '"scripted"').replace(
        'baseUrl = "https://elsewhere.example"\n', ""
    )
    (root / ".tether" / "config.toml").write_text(project)
    out = tether(["run", "hi"], root, env)
    assert out.returncode == 0, out.stderr
    assert "project script" in out.stdout and "ignoring" not in out.stderr


def test_flags_beat_the_environment_beats_the_files(tmp_path: Path) -> None:
    user = f'provider = "openai"\nmaxSteps = 7\nscript = {inline("x")}\n'
    root, env = configured_project(tmp_path, user, "timeoutSeconds = 30\nmaxSteps = 5\n")
    env |= {"TETHER_PROVIDER": "scripted", "OPENAI_API_KEY": "sk-abcdefghijklmnop1234"}
    out = tether(["config", "--max-steps", "3"], root, env)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line for line in out.stdout.splitlines() if line.strip()}
    assert rows["provider"].split()[1:] == ["'scripted'", "environment"]
    assert rows["maxSteps"].split()[1:] == ["3", "flags"]
    assert rows["timeoutSeconds"].endswith(str(root / ".tether" / "config.toml"))
    assert "1234" in rows["OPENAI_API_KEY"] and "abcdefgh" not in out.stdout  # masked


def test_a_bad_config_file_is_one_line(tmp_path: Path) -> None:
    root, env = configured_project(tmp_path, "provider = \n")
    for argv in (["run", "hi"], ["config"]):
        out = tether(argv, root, env)
        assert out.returncode == 2
        assert "config.toml: not valid TOML" in out.stderr
        assert len(out.stderr.splitlines()) == 1


def test_the_server_reads_the_user_file_under_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "tether" / "config.toml"
    path.parent.mkdir()
    path.write_text('provider = "openai"\nmodel = "m-file"\nmaxSteps = 4\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path), "TETHER_MODEL": "m-env"}
    settings = assemble(None, env).settings
    assert (settings.provider, settings.model, settings.max_steps) == ("openai", "m-env", 4)


def test_auto_approving_a_tool_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    root, env = configured_project(tmp_path, f'provider = "scripted"\nscript = {inline("x")}\n')
    (tmp_path / "home" / ".config" / "tether" / "config.toml").write_text(
        f'provider = "scripted"\nscript = {inline("x")}\nautoApprove = ["edit"]\n'
    )
    out = tether(["run", "hi"], root, env)
    assert out.returncode == 2
    assert "autoApprove: no tool named edit" in out.stderr and "edit_file" in out.stderr


def test_errors_speak_of_flags_not_protocol_fields(tmp_path: Path) -> None:
    root, env = configured_project(tmp_path, "")
    out = tether(["run", "hi", "--provider", "openai"], root, env)
    assert out.returncode == 2
    assert "OPENAI_API_KEY" in out.stderr and "--base-url" in out.stderr
    assert "tether serve" not in out.stderr and "baseUrl" not in out.stderr
    out = tether(["run", "hi", "--provider", "scripted", "--session", "s-gone"], root, env)
    assert out.returncode == 2 and "--session: unknown session 's-gone'" in out.stderr


def test_every_setting_with_a_default_is_shown_with_it(tmp_path: Path) -> None:
    root, env = configured_project(tmp_path, "diagnosticsMaxWaitMs = 5000\n")
    out = tether(["config"], root, env)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines() if line.strip()}
    assert rows["diagnosticsSettleMs"] == ["300", "default"]
    assert rows["diagnosticsMaxWaitMs"][0] == "5000"  # the file's value, not the default
    assert rows["approvalTimeoutSeconds"] == ["300.0", "default"]
    assert rows["sandbox"] == ["'off'", "default"]
    assert rows["maxMessageBytes"] == [str(64 * 1024 * 1024), "default"]
