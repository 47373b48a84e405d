"""The peers' benchmark task, played by a fake model for any agent in its own tools.

The task is the same for every system: read ``src/app.py``, write it back changed, answer
"Done: it says hi now." Each agent asks for it with its own tools over its own wire format:

| agent | wire format | read | write |
|---|---|---|---|
| Tether (openai / anthropic) | Chat Completions / Messages | ``read_file`` | ``write_file`` |
| codex-acp | Responses | ``exec_command`` ``cat`` | ``apply_patch`` (free-form) |
| claude-agent-acp | Messages | ``Read`` | ``Write`` |

The model is stateless: the step is the number of tool results in the request (0 → read,
1 → write, 2 → answer), so an agent's retries and side requests (Claude Code's title and
quota calls, which carry no tools) never shift the script. Every request's arrival is
stamped, for the benchmark's breakdown.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tests.providers.fake_responses import responses_stream, tool_outputs
from tests.providers.fakes import (
    FakeApi,
    Recorded,
    Reply,
    Sse,
    Status,
    anthropic_stream,
    openai_stream,
)

APP = "def greet(name):\n    return 'hello ' + name\n"
CHANGED = "def greet(name):\n    return 'hi ' + name\n"
PROMPT = "make it say hi"
ANSWER = "it says hi now."
FIRST_WORDS = "Let me read it."

Wire = Literal["chat", "messages", "responses"]
Tools = Literal["tether", "codex", "claude"]


@dataclass(frozen=True)
class Dialect:
    """How one agent talks to its model: the wire format and the tools it offers."""

    wire: Wire
    tools: Tools

    @property
    def read_tool(self) -> str:
        return {"tether": "read_file", "codex": "exec_command", "claude": "Read"}[self.tools]

    def read_call(self, root: Path) -> tuple[str, str]:
        """(tool name, input) of reading ``src/app.py``."""
        if self.tools == "tether":
            return "read_file", json.dumps({"path": "src/app.py"})
        if self.tools == "codex":
            return "exec_command", json.dumps({"cmd": "cat src/app.py", "workdir": str(root)})
        return "Read", json.dumps({"file_path": str(root / "src" / "app.py")})

    def write_call(self, root: Path) -> tuple[str, str]:
        """(tool name, input) of writing the changed file."""
        if self.tools == "tether":
            return "write_file", json.dumps({"path": "src/app.py", "content": CHANGED})
        if self.tools == "codex":
            patch = (
                "*** Begin Patch\n*** Update File: src/app.py\n@@ def greet(name):\n"
                "-    return 'hello ' + name\n+    return 'hi ' + name\n*** End Patch\n"
            )
            return "apply_patch", patch
        return "Write", json.dumps({"file_path": str(root / "src" / "app.py"), "content": CHANGED})


def steps_done(wire: Wire, body: dict[str, Any]) -> int:
    """How many tool results the request carries back to the model."""
    if wire == "responses":
        return tool_outputs(body)
    if wire == "chat":
        return sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
    return sum(
        1
        for message in body.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    )


def offers_tool(wire: Wire, body: dict[str, Any], name: str) -> bool:
    """The request offers the tool ``name`` (the agent's main loop, not a side request)."""
    for tool in body.get("tools") or []:
        found = tool.get("function", {}).get("name") if wire == "chat" else tool.get("name")
        if found == name:
            return True
    return False


class TaskModel(FakeApi):
    """A fake model API that plays the task for one dialect (use as a context manager)."""

    def __init__(self, dialect: Dialect, root: Path, *, bare_usage: bool = False) -> None:
        super().__init__()
        self.dialect = dialect
        self.root = root
        self.bare_usage = bare_usage
        """Messages usage with only input and output tokens (the cache counts are optional
        in the API, and gateways leave them out)."""
        self.arrivals: list[int] = []
        self.side_requests = 0

    @property
    def base_url(self) -> str:
        """What to configure as the agent's base URL."""
        return self.url + ("/v1" if self.dialect.wire in ("chat", "responses") else "")

    def record(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.arrivals.append(time.monotonic_ns())
        if request.path.endswith("/count_tokens"):
            return Status(200, {"input_tokens": 100})
        wire = self.dialect.wire
        if not offers_tool(wire, request.body, self.dialect.read_tool):
            self.side_requests += 1
            return Sse(self._stream(["ok"]))
        step = steps_done(wire, request.body)
        if step == 0:
            return Sse(self._stream([FIRST_WORDS], self.dialect.read_call(self.root), "c1"))
        if step == 1:
            return Sse(self._stream(["Now the change."], self.dialect.write_call(self.root), "c2"))
        return Sse(self._stream(["Done: ", ANSWER]))

    def _stream(
        self, texts: list[str], call: tuple[str, str] | None = None, call_id: str = ""
    ) -> list[str]:
        wire = self.dialect.wire
        if wire == "responses":
            if call is None:
                return responses_stream(*texts, response_id=f"resp_{len(self.requests)}")
            name, given = call
            custom = [(call_id, name, given)] if name == "apply_patch" else []
            calls = [] if custom else [(call_id, name, [given])]
            rid = f"resp_{len(self.requests)}"
            return responses_stream(*texts, calls=calls, custom_calls=custom, response_id=rid)
        stream = openai_stream if wire == "chat" else anthropic_stream
        calls = [(call_id, call[0], [call[1]])] if call else []
        frames = stream(*texts, calls=calls)
        return [_bare(frame) for frame in frames] if self.bare_usage else frames


def _bare(frame: str) -> str:
    """A ``message_start`` frame without the optional cache token counts."""
    if not frame.startswith("event: message_start"):
        return frame
    head, data = frame.split("data: ", 1)
    body = json.loads(data)
    for key in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        body["message"]["usage"].pop(key, None)
    return f"{head}data: {json.dumps(body)}\n\n"


def make_workspace(root: Path) -> Path:
    """A fresh ``src/app.py`` under ``root`` (made if needed); ``root``."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "app.py").write_text(APP)
    return root


def task_done(root: Path) -> bool:
    """The write reached the disk."""
    return (root / "src" / "app.py").read_text() == CHANGED
