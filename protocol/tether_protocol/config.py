"""Capabilities and configuration exchanged at ``initialize`` and after."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, model_validator

from .base import WireModel
from .script import Script

MAX_STEPS_LIMIT = 10_000
"""The most model calls a run may be given."""
MAX_TIMEOUT_SECONDS = 7 * 24 * 3600.0
"""The longest wall-clock limit a run may be given (a week)."""
MIN_MESSAGE_BYTES = 64 * 1024
"""The smallest message cap (an ``initialize`` must fit)."""
MAX_MESSAGE_BYTES_LIMIT = 1024 * 1024 * 1024
"""The largest message cap (1 GiB)."""


class ClientTetherCapabilities(WireModel):
    """What the client declares in ``capabilities.experimental.tether``."""

    model_config = ConfigDict(extra="ignore", strict=False)

    approvals: bool = False
    """The client answers ``agent/approve``."""
    events: bool = False
    """The client wants ``agent/event`` notifications."""
    save_documents: bool = False
    """The client answers ``agent/saveDocuments``."""
    diagnostics: bool = False
    """The client answers ``agent/diagnostics`` (its language servers' problems)."""
    change_sets: bool = False
    """The client's approvals show a change of several files: an ``agent/approve`` whose
    diff preview covers them all (``diff``, one file after another) and has no
    ``proposed`` window. ``rename`` is offered to a client with approvals only then."""
    ask: bool = False
    """The client answers ``agent/ask`` (a person sees the model's question and answers)."""
    code: bool = False
    """The client answers ``agent/code`` with its own language servers (definition,
    references, hover, symbols, rename's edit); the server asks them before its own."""


class ServerTetherCapabilities(WireModel):
    """What the server declares in ``capabilities.experimental.tether``."""

    protocol_version: int
    tools: list[str]
    providers: list[str]


class ModelPrice(WireModel):
    """What one model costs, in US dollars per million tokens."""

    input_per_m_tok: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    """Input (prompt) tokens."""
    output_per_m_tok: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    """Output (completion) tokens."""
    cache_read_per_m_tok: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    """Input tokens read from the provider's prompt cache (default: the input price)."""
    cache_write_per_m_tok: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    """Input tokens written to the prompt cache (Anthropic; default: the input price)."""


LANGUAGE_NAME = r"^[a-z][a-z0-9_+-]{0,31}$"
"""A language's name in ``languageServers``: ``python``, ``typescript``, ``go``, ``cpp``…"""
MAX_LANGUAGE_SERVER_TIMEOUT_SECONDS = 600.0
MCP_SERVER_NAME = r"^[A-Za-z0-9_.-]{1,64}$"
"""An MCP server's name: it becomes part of its tools' names (``mcp__<server>__<tool>``)."""
MAX_MCP_TIMEOUT_SECONDS = 24 * 3600.0


class McpServerSettings(WireModel):
    """One MCP server (``mcpServers.<name>``): a command run over stdio, or a URL
    (streamable HTTP). Set in the user's file or a trusted project's only."""

    command: Annotated[str, Field(min_length=1)] | None = None
    """stdio: the program to run (found on ``PATH``)."""
    args: list[str] | None = None
    """stdio: its arguments."""
    env: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], str] | None = None
    """stdio: variables added to the minimal environment it inherits (``${NAME}`` is
    replaced by Tether's own variable)."""
    cwd: str | None = None
    """stdio: the folder it runs in (relative: to the home folder; default: the home
    folder, never the workspace; a trusted project's own servers: the project folder)."""
    url: Annotated[str, Field(pattern=r"^https?://")] | None = None
    """Streamable HTTP: the endpoint."""
    type: Literal["stdio", "http", "streamable-http"] | None = None
    """As ``.mcp.json`` writes it; implied by ``command`` or ``url``."""
    headers: dict[str, str] | None = None
    """HTTP: request headers (``${NAME}`` is replaced by Tether's own variable)."""
    tool_timeout_seconds: (
        Annotated[float, Field(gt=0, le=MAX_MCP_TIMEOUT_SECONDS, allow_inf_nan=False)] | None
    ) = None
    """Longest one call may take (default 120); longer is a timeout tool error."""
    startup_timeout_seconds: Annotated[float, Field(gt=0, le=600, allow_inf_nan=False)] | None = (
        None
    )
    """Longest the server may take to start and list its tools (default 10)."""
    enabled: bool | None = None
    """``false``: configured but not started."""
    enabled_tools: list[str] | None = None
    """Only these of its tools reach the model (default: all)."""
    disabled_tools: list[str] | None = None
    """These of its tools never reach the model."""
    trust_read_only_hints: bool | None = None
    """``true``: its tools annotated ``readOnlyHint`` run unasked (the hint is the server's
    word; default ``false``: every call is asked)."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("an MCP server needs either command (stdio) or url (HTTP)")
        if self.url is not None and self.type == "stdio":
            raise ValueError("type stdio with a url")
        if self.command is not None and self.type not in (None, "stdio"):
            raise ValueError(f"type {self.type} with a command")
        return self


ReasoningEffort = Literal["off", "low", "medium", "high"]
"""How hard a reasoning model thinks before it answers."""

OpenAIApi = Literal["responses", "chat"]
"""Which OpenAI API the ``openai`` provider speaks."""


class TetherSettings(WireModel):
    """Configuration: ``initializationOptions``, ``settings.tether`` and the environment.

    Every field is optional here; unset fields fall back to the next source and then to the
    server's defaults (see ``docs/configuration.md``).
    """

    provider: str | None = None
    """Model provider: ``openai``, ``anthropic`` or ``scripted``."""
    model: str | None = None
    """Model name passed to the provider."""
    base_url: str | None = None
    """Base URL of an OpenAI-compatible or Anthropic endpoint."""
    script: str | Script | None = None
    """Scripted provider: a path to a script file, or the script object itself."""
    max_steps: Annotated[int, Field(ge=1, le=MAX_STEPS_LIMIT)] | None = None
    """Model calls per run (default 40, at most 10,000)."""
    timeout_seconds: (
        Annotated[float, Field(gt=0, le=MAX_TIMEOUT_SECONDS, allow_inf_nan=False)] | None
    ) = None
    """Wall-clock limit per run in seconds (default 900, at most a week); finite."""
    context_budget_tokens: Annotated[int, Field(ge=1)] | None = None
    """Size the conversation may reach before older turns are compacted."""
    context_window_tokens: Annotated[int, Field(ge=1024)] | None = None
    """Context window of a model the built-in table does not know (default 8192 behind
    ``baseUrl``, else 128000)."""
    reasoning_effort: ReasoningEffort | None = None
    """How hard a reasoning model thinks before it answers (default ``off``): OpenAI's
    ``reasoning.effort`` on the Responses API; Anthropic's extended thinking with a budget
    of 2,048, 6,144 or 16,384 tokens; ignored, with one note in the log, by a model that
    cannot think."""
    openai_api: OpenAIApi | None = None
    """The API the ``openai`` provider speaks: ``responses`` (the default for OpenAI's own
    endpoint: reasoning kept between tool calls) or ``chat`` (Chat Completions, the default
    for any other ``baseUrl``)."""
    auto_approve: list[str] | None = None
    """Tool names that need no approval (default: none)."""
    sandbox: Literal["auto", "bwrap", "landlock", "off"] | None = None
    """``bash`` commands that would be asked run unasked inside a sandbox instead, and every
    allowed command runs inside it too: ``auto`` picks bubblewrap, else Landlock; ``off``
    (the default) never sandboxes."""
    sandbox_env: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] | None = None
    """Environment variables a sandboxed command gets besides the standard ones (``PATH``,
    ``HOME``, ``LANG``, ``LC_*``, …): names, not values; the user's own config only."""
    max_background_jobs: Annotated[int, Field(ge=0, le=64)] | None = None
    """How many background jobs (``bash`` with ``background: true``) may run at once in a
    session (default 4); 0: none. Each job ends with its session."""
    command_input: Literal["end", "ask"] | None = None
    """What happens to a ``bash`` command that stops to ask for input: ``end`` (the
    default) ends it, naming what it asked; ``ask`` puts its question to the user through
    the front's question, types the answer into it, and ends it as ``end`` does when no
    answer comes. Not from an untrusted project."""
    approval_timeout_seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    """How long an approval may wait for the user's answer before the call is denied
    (default 300); the client is told to close it (``$/cancelRequest``)."""
    diagnostics_settle_ms: Annotated[int, Field(ge=0, le=60_000)] | None = None
    """After an applied edit, the editor's problems count as settled once unchanged this
    long (default 300); 0 turns the check after edits off."""
    diagnostics_max_wait_ms: Annotated[int, Field(ge=0, le=60_000)] | None = None
    """The longest an edit's tool result waits for the problems to settle (default 3000)."""
    state_dir: str | None = None
    """Where session logs are kept (default ``$XDG_STATE_HOME/tether``)."""
    max_message_bytes: (
        Annotated[int, Field(ge=MIN_MESSAGE_BYTES, le=MAX_MESSAGE_BYTES_LIMIT)] | None
    ) = None
    """Largest JSON-RPC message body the server reads (default 64 MiB); larger ones are
    skipped unread and refused."""
    prices: dict[str, ModelPrice] | None = None
    """Prices by model name, added to (and overriding) the built-in table; cost is unknown
    for a model in neither."""
    acp_files: Literal["editor", "disk"] | None = None
    """``tether acp``: ``editor`` (the default) reads and writes files through the ACP
    client's ``fs`` methods when it offers them (its unsaved buffers); ``disk`` has Tether
    read the disk and write with its own confined writer, for clients whose methods lose
    text (avante.nvim, whose ``fs`` cannot be turned off)."""
    checkpoint_max_file_bytes: Annotated[int, Field(ge=1024, le=1 << 30)] | None = None
    """Files larger than this (default 10 MB) are recorded by a step's checkpoint as not
    restorable: their content is not kept."""
    checkpoint_store_max_bytes: Annotated[int, Field(ge=1 << 20)] | None = None
    """The checkpoint store's size limit (default 2 GiB): past it, the contents only the
    oldest sessions' checkpoints need are deleted."""
    mcp_servers: dict[Annotated[str, Field(pattern=MCP_SERVER_NAME)], McpServerSettings] | None = (
        None
    )
    """MCP servers whose tools the model may call (each call asked): by name; layers merge
    by name, a later layer's server replacing an earlier one of the same name."""
    language_servers: (
        dict[
            Annotated[str, Field(pattern=LANGUAGE_NAME)],
            list[Annotated[str, Field(min_length=1, max_length=4096)]],
        ]
        | None
    ) = None
    """The language servers Tether starts itself for the code tools (``definition``,
    ``references``, ``hover``, ``symbols``, ``rename``), by language: the program and its
    arguments (``python = ["basedpyright-langserver", "--stdio"]``); an empty list turns a
    language off. Unset languages use a server found on ``PATH``. Layers merge by language;
    a project's file may set it only when you trust the project."""
    language_server_timeout_seconds: (
        Annotated[float, Field(gt=0, le=MAX_LANGUAGE_SERVER_TIMEOUT_SECONDS, allow_inf_nan=False)]
        | None
    ) = None
    """How long a language server may take to answer one request (default 30); longer,
    it is stopped and the call fails."""
