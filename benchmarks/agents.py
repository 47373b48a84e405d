"""The ACP agents the benchmarks and the peer checks can drive, and how to point each one
at the fake model with no real key.

The peers are optional: installed with npm into a cache folder outside the repository
(never committed, not in CI)::

    npm install --prefix ~/.cache/tether-acp-peers \\
        @zed-industries/codex-acp@0.16.0 @zed-industries/claude-agent-acp@0.23.1 acpx@0.19.1

(``TETHER_ACP_PEERS`` names another folder). An agent that is not there is reported as
"not installed". ``tether acp`` is listed too (the ACP front of this checkout).

How each is configured (read from their sources):

- **codex-acp** loads Codex's config with ``-c key=value`` overrides: a custom
  ``model_providers.fake`` with ``base_url`` and ``wire_api = "responses"`` and a key from
  ``env_key``; with a provider other than ``openai`` it needs no login. ``CODEX_HOME`` is
  a fresh folder (outside ``/tmp``: Codex refuses to put its helper binaries there). The
  model is ``gpt-5.2-codex``, one Codex knows, so it offers ``apply_patch`` and does not
  warn about missing model metadata.
- **claude-agent-acp** runs Claude Code (``@anthropic-ai/claude-agent-sdk``'s ``cli.js``),
  which reads ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY``; ``CLAUDE_CONFIG_DIR`` is a
  fresh folder; ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`` keeps it off the network.
  ``IS_SANDBOX`` must not be set to anything but ``1``: as root, claude-agent-acp then
  passes ``--allow-dangerously-skip-permissions`` and Claude Code exits unless it is ``1``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .task_model import Dialect

PEERS_DIR = Path(os.environ.get("TETHER_ACP_PEERS", "~/.cache/tether-acp-peers")).expanduser()
INSTALL = (
    f"npm install --prefix {PEERS_DIR} @zed-industries/codex-acp@0.16.0 "
    "@zed-industries/claude-agent-acp@0.23.1 acpx@0.19.1"
)
REPO = Path(__file__).resolve().parent.parent


def _base_env(home: Path) -> dict[str, str]:
    """PATH and friends, with no key, no TETHER_* and a fresh HOME."""
    keep = ("PATH", "LANG", "LC_ALL", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["HOME"] = str(home)
    return env


@dataclass(frozen=True)
class AgentSpec:
    """One ACP agent command and what it needs to run against the fake model."""

    name: str
    dialect: Dialect
    build: Callable[[str, Path], tuple[list[str], dict[str, str]]]
    """(argv, environment) for a fake model at this base URL, with this home folder."""
    available: Callable[[], bool]

    def command(self, base_url: str, home: Path) -> tuple[list[str], dict[str, str]]:
        home.mkdir(parents=True, exist_ok=True)
        return self.build(base_url, home)


def _bin(name: str) -> Path:
    return PEERS_DIR / "node_modules" / ".bin" / name


def codex_fake_model(base_url: str, model: str) -> list[str]:
    """The ``-c`` flags that point a Codex (codex-acp, codex app-server) at the fake model
    as a custom provider (Responses wire, no login), asking for ``model``."""
    provider = {
        "name": "fake",
        "base_url": base_url,
        "wire_api": "responses",
        "env_key": "FAKE_MODEL_KEY",
    }
    inline = "{" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in provider.items()) + "}"
    return ["-c", 'model_provider="fake"', "-c", f"model_providers.fake={inline}"] + [
        "-c",
        f"model={json.dumps(model)}",
    ]


def _codex(base_url: str, home: Path) -> tuple[list[str], dict[str, str]]:
    argv = [str(_bin("codex-acp")), *codex_fake_model(base_url, "gpt-5.2-codex")]
    env = {**_base_env(home), "CODEX_HOME": str(home / "codex"), "FAKE_MODEL_KEY": "bench-key"}
    (home / "codex").mkdir(exist_ok=True)
    return argv, env


def _claude(base_url: str, home: Path) -> tuple[list[str], dict[str, str]]:
    env = {
        **_base_env(home),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "bench-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    return [str(_bin("claude-agent-acp"))], env


def _tether(provider: str) -> Callable[[str, Path], tuple[list[str], dict[str, str]]]:
    def build(base_url: str, home: Path) -> tuple[list[str], dict[str, str]]:
        key = "OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"
        env = {
            **_base_env(home),
            "PYTHONPATH": str(REPO),
            "TETHER_STATE_DIR": str(home / "state"),
            "TETHER_PROVIDER": provider,
            "TETHER_BASE_URL": base_url,
            "TETHER_MODEL": "bench-model",
            key: "bench-key",
        }
        return [sys.executable, "-m", "tether", "acp"], env

    return build


@cache
def tether_has_acp() -> bool:
    """``tether acp`` exists in this checkout (the ACP front)."""
    done = subprocess.run(
        [sys.executable, "-m", "tether", "acp", "--help"],
        capture_output=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    return done.returncode == 0


AGENTS: tuple[AgentSpec, ...] = (
    AgentSpec(
        "codex-acp", Dialect("responses", "codex"), _codex, lambda: _bin("codex-acp").exists()
    ),
    AgentSpec(
        "claude-agent-acp",
        Dialect("messages", "claude"),
        _claude,
        lambda: _bin("claude-agent-acp").exists(),
    ),
    AgentSpec("tether acp (openai)", Dialect("chat", "tether"), _tether("openai"), tether_has_acp),
    AgentSpec(
        "tether acp (anthropic)",
        Dialect("messages", "tether"),
        _tether("anthropic"),
        tether_has_acp,
    ),
)


def agent(name: str) -> AgentSpec:
    """The agent of that name."""
    return next(spec for spec in AGENTS if spec.name == name)
