"""The params of the ACP methods ``tether acp`` serves, as pydantic models: what a client
sends is checked here, and a bad field is ``-32602`` naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tether_protocol import McpServerSettings

from .wire import INVALID_PARAMS, RpcError


class _Params(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class _NameValue(_Params):
    name: str
    value: str


class McpServer(_Params):
    """An MCP server the client asks the session to use (ACP's ``McpServer``: stdio
    without a ``type``; ``http`` and ``sse`` with one)."""

    name: str = Field(min_length=1)
    type: str | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: list[_NameValue] = Field(default_factory=list)
    url: str | None = None
    headers: list[_NameValue] = Field(default_factory=list)

    @field_validator("env", "headers", mode="before")
    @classmethod
    def _pairs(cls, value: Any) -> Any:
        """ACP sends ``[{name, value}]``; some clients (codecompanion's servers inherited
        from its config) send an object of strings: taken as the same pairs."""
        if isinstance(value, dict):
            return [{"name": name, "value": item} for name, item in value.items()]
        return value

    def settings(self) -> McpServerSettings:
        """As Tether's ``mcpServers`` entry; ``ValueError`` when it cannot be one."""
        if self.type not in (None, "stdio", "http"):
            raise ValueError(f"{self.type!r} servers are not supported (stdio and http are)")
        if self.type == "http" or (self.type is None and self.url and not self.command):
            fields: dict[str, Any] = {"url": self.url, "type": "http"}
            if self.headers:
                fields["headers"] = {h.name: h.value for h in self.headers}
        else:
            fields = {"command": self.command, "args": self.args}
            if self.env:
                fields["env"] = {e.name: e.value for e in self.env}
        try:
            return McpServerSettings.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "server"
            raise ValueError(f"{where}: {first['msg']}") from exc


class NewSessionParams(_Params):
    cwd: str
    mcp_servers: list[McpServer] = Field(alias="mcpServers")
    additional_directories: list[str] = Field(default_factory=list, alias="additionalDirectories")


class LoadSessionParams(NewSessionParams):
    session_id: str = Field(alias="sessionId", min_length=1)


class ResumeSessionParams(LoadSessionParams):
    mcp_servers: list[McpServer] = Field(default_factory=list, alias="mcpServers")


class ListSessionsParams(_Params):
    cwd: str | None = None
    cursor: str | None = None


class SessionParams(_Params):
    session_id: str = Field(alias="sessionId", min_length=1)


class SetModeParams(SessionParams):
    mode_id: str = Field(alias="modeId")


class ContentBlock(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str


class PromptParams(SessionParams):
    prompt: list[ContentBlock] = Field(min_length=1)


def parsed(model: type[Any], raw: Any, method: str) -> Any:
    """Wire params → model, or ``-32602`` naming the first bad field."""
    try:
        return model.model_validate(raw if raw is not None else {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "params"
        raise RpcError(INVALID_PARAMS, f"{method}: {where}: {first['msg']}"[:500]) from exc


def folder(cwd: str, method: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise RpcError(INVALID_PARAMS, f"{method}: cwd must be an absolute path, not {cwd!r}")
    if not path.is_dir():
        raise RpcError(INVALID_PARAMS, f"{method}: cwd {cwd!r} is not a folder")
    return path.resolve()
