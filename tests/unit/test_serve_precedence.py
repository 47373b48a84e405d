"""`tether serve`'s layers: user file < project file (trust rule) < environment < editor."""

from __future__ import annotations

import json
import re
from pathlib import Path

from lsprotocol import types

from tether.lsp.handlers import create_server
from tether.tools import build_tools


def environment(tmp_path: Path, user: str, **variables: str) -> dict[str, str]:
    (tmp_path / "cfg" / "tether").mkdir(parents=True)
    (tmp_path / "cfg" / "tether" / "config.toml").write_text(user)
    state = str(tmp_path / "state")
    return {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "HOME": str(tmp_path),
        "TETHER_STATE_DIR": state,
    } | variables


def initialize(root: Path, options: dict[str, object] | None = None) -> types.InitializeParams:
    folder = types.WorkspaceFolder(uri=root.as_uri(), name=root.name)
    return types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        workspace_folders=[folder],
        initialization_options=options,
    )


def project(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "p"
    (root / ".tether").mkdir(parents=True)
    (root / ".tether" / "config.toml").write_text(text)
    return root


def test_the_project_file_sits_between_the_user_file_and_the_environment(tmp_path: Path) -> None:
    env = environment(
        tmp_path,
        "maxSteps = 9\ntimeoutSeconds = 10\ncontextBudgetTokens = 5000\n",
        TETHER_APPROVAL_TIMEOUT_SECONDS="7",
    )
    root = project(tmp_path, "maxSteps = 3\ntimeoutSeconds = 20\napprovalTimeoutSeconds = 60\n")
    server = create_server(build_tools(), env)
    server.configure_from_initialize(initialize(root, {"timeoutSeconds": 30}))
    config = server.config
    assert config.max_steps == 3  # project over user
    assert config.context_budget_tokens == 5000  # the user's, the project is silent
    assert config.approval_timeout_seconds == 7  # environment over project
    assert config.timeout_seconds == 30  # editor over all


def test_an_untrusted_project_cannot_choose_the_provider_or_approvals(tmp_path: Path) -> None:
    env = environment(tmp_path, 'provider = "scripted"\n')
    text = 'provider = "openai"\nbaseUrl = "https://elsewhere.example"\n'
    text += 'autoApprove = ["bash"]\nmaxSteps = 2\n'
    root = project(tmp_path, text)
    server = create_server(build_tools(), env)
    server.configure_from_initialize(initialize(root))
    config = server.config
    assert (config.provider, config.base_url, config.auto_approve) == ("scripted", None, ())
    assert config.max_steps == 2

    trusted = f'provider = "scripted"\ntrustedProjects = [{json.dumps(str(root))}]\n'
    (tmp_path / "cfg" / "tether" / "config.toml").write_text(trusted)
    server = create_server(build_tools(), env)
    server.configure_from_initialize(initialize(root))
    assert server.config.provider == "openai" and server.config.auto_approve == ("bash",)


def test_a_bad_project_file_refuses_the_runs_naming_the_file_until_it_is_fixed(
    tmp_path: Path,
) -> None:
    env = environment(tmp_path, "")
    root = project(tmp_path, "maxSteps = 0\n")
    server = create_server(build_tools(), env)
    server.configure_from_initialize(initialize(root))  # initialize is not refused
    problem = server.usable_settings()
    assert problem is not None
    assert re.search(r"\.tether/config\.toml.*max_?[sS]teps", problem), problem
    (root / ".tether" / "config.toml").write_text("maxSteps = 7\n")
    assert server.usable_settings() is None  # read again by the next run
    assert server.config.max_steps == 7
