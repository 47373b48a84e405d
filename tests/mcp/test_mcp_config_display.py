"""What Tether shows of an MCP server — ``tether config``'s list, the approval's "in MCP
server …" — keeps its credentials out: a URL's user and password, token-like query values,
header and variable values, a token in the command line. What identifies the server stays."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tether.mcp.server import McpServer
from tether.text.redact import redact_args, redact_text, redact_url
from tether_protocol import McpServerSettings

SECRETS = (
    "alice",
    "s3cr3t-pass",
    "tok-123456",
    "ak-9999",
    "sig-5555",
    "sk-live-abcdef",
    "k-7777",
    "cli-token-1234",
    "cli-key-5678",
    "pw-4321",
    "ghp_abcdef",
    "base-pw-8888",
)
USER_FILE = """
baseUrl = "https://me:base-pw-8888@llm.example.invalid/v1"

[mcpServers.docs]
url = "https://alice:s3cr3t-pass@mcp.example.invalid/mcp?token=tok-123456&team=core&api_key=ak-9999#sig=sig-5555"
headers = { Authorization = "Bearer sk-live-abcdef", X-Api-Key = "k-7777" }

[mcpServers.tool]
command = "mcp-tool"
args = [
  "--token", "cli-token-1234", "--api-key=cli-key-5678", "https://bob:pw-4321@h.invalid/x",
  "--verbose",
]
env = { GITHUB_TOKEN = "ghp_abcdef" }
"""


@pytest.mark.slow
def test_tether_config_shows_mcp_servers_without_their_credentials(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "tether").mkdir(parents=True)
    (home / ".config" / "tether" / "config.toml").write_text(USER_FILE)
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "XDG_"))}
    env |= {"HOME": str(home), "TETHER_STATE_DIR": str(tmp_path / "state"), "TETHER_DAEMON": "0"}
    shown = subprocess.run(
        [sys.executable, "-m", "tether", "config"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout + shown.stderr
    for secret in SECRETS:
        assert secret not in out, (secret, out)
    docs = next(line for line in out.splitlines() if line.strip().startswith("docs "))
    assert "https://***@mcp.example.invalid/mcp?token=***&team=core&api_key=***#sig=***" in docs
    assert "headers Authorization, X-Api-Key" in docs
    tool = next(line for line in out.splitlines() if line.strip().startswith("tool "))
    assert "mcp-tool --token '***' '--api-key=***' 'https://***@h.invalid/x' --verbose" in tool
    assert "env GITHUB_TOKEN" in tool
    assert "https://***@llm.example.invalid/v1" in out


async def test_the_approval_names_the_server_without_its_credentials() -> None:
    url = "https://alice:s3cr3t-pass@mcp.example.invalid/mcp?token=tok-123456&team=core"
    http = McpServer("docs", McpServerSettings(url=url), None, {})
    assert http.where() == "https://***@mcp.example.invalid/mcp?token=***&team=core"
    args = ["--token", "cli-token-1234", "--verbose"]
    stdio = McpServer("tool", McpServerSettings(command="mcp-tool", args=args), None, {})
    assert stdio.where() == "mcp-tool --token '***' --verbose"


def test_what_is_redacted_and_what_is_kept() -> None:
    assert redact_url("https://h.invalid/mcp") == "https://h.invalid/mcp"
    assert redact_url("https://TOKEN@github.invalid/x") == "https://***@github.invalid/x"
    assert redact_url("http://h:8080/p?q=1&access_token=a&X-Amz-Signature=b") == (
        "http://h:8080/p?q=1&access_token=***&X-Amz-Signature=***"
    )
    assert redact_url("not a url") == "not a url"
    said = "Client error '401' for url 'https://u:p@h.invalid/mcp?key=v' (Bearer abc.def)"
    assert (
        redact_text(said)
        == "Client error '401' for url 'https://***@h.invalid/mcp?key=***' (Bearer ***)"
    )
    assert redact_args(["-p", "8080", "--password", "x", "--client-secret=y", "plain"]) == [
        "-p",
        "8080",
        "--password",
        "***",
        "--client-secret=***",
        "plain",
    ]
