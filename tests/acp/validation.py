"""Every ACP message, both directions, checked against the official JSON schema.

The schema is vendored (``schema.json``, ``meta.json``): ACP v1 at the tag ``schema-v1.21.0``
(commit 272bf799f35a258c6a4107a0410ed361e83683d3 of agentclientprotocol/agent-client-protocol),
the current stable v1 (the Python SDK 0.12.1 generated its models from 1.19.0; 1.21 adds
elicitation and terminal authentication). The SDK validates too, but it logs and *drops*
an incoming notification that does not match (claude-agent-acp's ``usage_update`` with
``used: null``), so a client built on it would never notice; this checker sees the raw
message first and reports it as a ``Violation``.

Each message is checked by method: a request's ``params`` against its ``…Request``
definition, the answer's ``result`` against the matching ``…Response`` (the checker
remembers which method each pending id was), an ``error`` against ``Error``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

HERE = Path(__file__).resolve().parent
SCHEMA_PATH = HERE / "schema.json"
META_PATH = HERE / "meta.json"
SCHEMA_TAG = "schema-v1.21.0"
SCHEMA_COMMIT = "272bf799f35a258c6a4107a0410ed361e83683d3"

Direction = Literal["to_agent", "to_client"]
"""``to_agent``: sent by the client; ``to_client``: sent by the agent."""

# method → (params definition, result definition); result None for notifications.
CLIENT_TO_AGENT: dict[str, tuple[str, str | None]] = {
    "initialize": ("InitializeRequest", "InitializeResponse"),
    "authenticate": ("AuthenticateRequest", "AuthenticateResponse"),
    "logout": ("LogoutRequest", "LogoutResponse"),
    "session/new": ("NewSessionRequest", "NewSessionResponse"),
    "session/load": ("LoadSessionRequest", "LoadSessionResponse"),
    "session/resume": ("ResumeSessionRequest", "ResumeSessionResponse"),
    "session/list": ("ListSessionsRequest", "ListSessionsResponse"),
    "session/close": ("CloseSessionRequest", "CloseSessionResponse"),
    "session/delete": ("DeleteSessionRequest", "DeleteSessionResponse"),
    "session/set_mode": ("SetSessionModeRequest", "SetSessionModeResponse"),
    "session/set_config_option": (
        "SetSessionConfigOptionRequest",
        "SetSessionConfigOptionResponse",
    ),
    "session/prompt": ("PromptRequest", "PromptResponse"),
    "session/cancel": ("CancelNotification", None),
}
AGENT_TO_CLIENT: dict[str, tuple[str, str | None]] = {
    "session/request_permission": ("RequestPermissionRequest", "RequestPermissionResponse"),
    "session/update": ("SessionNotification", None),
    "fs/read_text_file": ("ReadTextFileRequest", "ReadTextFileResponse"),
    "fs/write_text_file": ("WriteTextFileRequest", "WriteTextFileResponse"),
    "terminal/create": ("CreateTerminalRequest", "CreateTerminalResponse"),
    "terminal/output": ("TerminalOutputRequest", "TerminalOutputResponse"),
    "terminal/wait_for_exit": ("WaitForTerminalExitRequest", "WaitForTerminalExitResponse"),
    "terminal/kill": ("KillTerminalRequest", "KillTerminalResponse"),
    "terminal/release": ("ReleaseTerminalRequest", "ReleaseTerminalResponse"),
    "elicitation/create": ("CreateElicitationRequest", "CreateElicitationResponse"),
    "elicitation/complete": ("CompleteElicitationNotification", None),
}
EITHER_WAY: dict[str, tuple[str, str | None]] = {
    "$/cancel_request": ("CancelRequestNotification", None),
}


@dataclass(frozen=True)
class Violation:
    """One message (or part of it) that the schema refuses."""

    direction: Direction
    method: str
    where: str
    """``envelope``, ``params``, ``result`` or ``error``."""
    problem: str
    message: dict[str, Any]

    def __str__(self) -> str:
        sender = "client" if self.direction == "to_agent" else "agent"
        text = json.dumps(self.message, ensure_ascii=False)
        text = text if len(text) <= 400 else text[:400] + "…"
        return f"{sender} sent {self.method} with invalid {self.where}: {self.problem} — {text}"


@cache
def load_schema(path: Path = SCHEMA_PATH) -> dict[str, Any]:
    """The vendored schema document."""
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


@cache
def definition_validator(name: str, path: Path = SCHEMA_PATH) -> Draft202012Validator:
    """A validator for ``#/$defs/<name>`` (its references resolve inside the document)."""
    schema = load_schema(path)
    if name not in schema["$defs"]:
        raise KeyError(f"{name} is not defined in {path.name}")
    return Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"})


def explain(error: ValidationError) -> str:
    """A readable reason; a ``oneOf``/``anyOf`` is narrowed to the branch whose
    discriminator (``const``) matched, so ``usage_update`` errors name ``used``."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        branches: dict[Any, list[ValidationError]] = defaultdict(list)
        for sub in error.context:
            branches[sub.relative_schema_path[0]].append(sub)
        matching = [
            errors
            for errors in branches.values()
            if not any(sub.validator in ("const", "enum") for sub in errors)
        ]
        if len(matching) == 1:
            return "; ".join(explain(sub) for sub in matching[0])
    where = ".".join(str(part) for part in error.absolute_path) or "(top)"
    return f"{where}: {error.message}"


def problems(definition: str, value: Any) -> list[str]:
    """Why ``value`` does not match ``#/$defs/<definition>`` (empty: it matches)."""
    validator = definition_validator(definition)
    return [explain(error) for error in validator.iter_errors(value)]


class SchemaChecker:
    """Checks a conversation message by message; remembers pending requests per side."""

    def __init__(self) -> None:
        self._pending: dict[tuple[Direction, str], str] = {}
        self._early: dict[tuple[Direction, str], tuple[Direction, dict[str, Any]]] = {}
        """Answers seen before their request: the SDK tells observers of an outgoing
        request only after writing it, and a fast agent's answer can be read first."""

    def check(self, direction: Direction, message: Any, *, exempt: bool = False) -> list[Violation]:
        """The violations in one message sent in ``direction`` (empty: it is valid).

        ``exempt``: a message a test sent malformed on purpose; its id is still remembered
        so that the answer is checked."""
        found = self._check(direction, message)
        return [] if exempt else found

    def _check(self, direction: Direction, message: Any) -> list[Violation]:
        if not isinstance(message, dict):
            return [Violation(direction, "?", "envelope", "not a JSON object", {"raw": message})]
        method = message.get("method")
        found = self._envelope(direction, message)
        if isinstance(method, str):
            found += self._call(direction, method, message)
        elif "id" in message:
            found += self._answer(direction, message)
        return found

    def _envelope(self, direction: Direction, message: dict[str, Any]) -> list[Violation]:
        method = str(message.get("method", "(answer)"))
        reasons = []
        if message.get("jsonrpc") != "2.0":
            reasons.append('"jsonrpc" must be "2.0"')
        if "id" in message:
            reasons += problems("RequestId", message["id"])
        if "method" not in message and "id" in message:
            if ("result" in message) == ("error" in message):
                reasons.append("an answer carries exactly one of result and error")
        elif "method" not in message:
            reasons.append("neither a call (method) nor an answer (id)")
        return [Violation(direction, method, "envelope", r, message) for r in reasons]

    def _call(self, direction: Direction, method: str, message: dict[str, Any]) -> list[Violation]:
        table = CLIENT_TO_AGENT if direction == "to_agent" else AGENT_TO_CLIENT
        is_request = "id" in message
        found = self._remember(direction, method, message) if is_request else []
        if method.startswith("_"):
            spec: tuple[str, str | None] | None = (
                ("ExtRequest", "ExtResponse") if is_request else ("ExtNotification", None)
            )
        else:
            spec = table.get(method) or EITHER_WAY.get(method)
        if spec is None:
            other = "agent" if direction == "to_agent" else "client"
            problem = f"not a method the {other} serves in ACP v1"
            return [Violation(direction, method, "envelope", problem, message), *found]
        params_definition, result_definition = spec
        if is_request != (result_definition is not None):
            kind = "a request" if result_definition is not None else "a notification"
            found.append(Violation(direction, method, "envelope", f"{method} is {kind}", message))
        found += [
            Violation(direction, method, "params", problem, message)
            for problem in problems(params_definition, message.get("params"))
        ]
        return found

    def _remember(
        self, direction: Direction, method: str, message: dict[str, Any]
    ) -> list[Violation]:
        """Note the pending request; check an answer that was read before it."""
        key = (direction, json.dumps(message["id"]))
        self._pending[key] = method
        early = self._early.pop(key, None)
        return self._answer(*early) if early is not None else []

    def unanswered_early(self) -> list[Violation]:
        """Answers whose request never came (call once the conversation is over)."""
        found = [
            Violation(d, "(answer)", "envelope", f"answers id {m['id']!r}, never requested", m)
            for d, m in self._early.values()
        ]
        self._early.clear()
        return found

    def _answer(self, direction: Direction, message: dict[str, Any]) -> list[Violation]:
        asked: Direction = "to_client" if direction == "to_agent" else "to_agent"
        key = (asked, json.dumps(message["id"]))
        method = self._pending.pop(key, None)
        if method is None:
            self._early[key] = (direction, message)
            return []
        if "error" in message:
            return [
                Violation(direction, method, "error", problem, message)
                for problem in problems("Error", message["error"])
            ]
        if method.startswith("_"):
            definition: str | None = "ExtResponse"
        else:
            table = CLIENT_TO_AGENT if asked == "to_agent" else AGENT_TO_CLIENT
            definition = (table.get(method) or EITHER_WAY.get(method) or ("", None))[1]
        if definition is None:
            return []
        return [
            Violation(direction, method, "result", problem, message)
            for problem in problems(definition, message.get("result"))
        ]
