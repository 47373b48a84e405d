"""What every tool is: a name, a description, an argument model and an async ``run``.

A tool failure is a value (``ToolResult(ok=False)``) the model sees, never an exception
that ends the run: tools raise ``ToolError`` and the registry turns it into a result.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from tether_protocol import PlanEntry, Preview

from ..diagnostics.watch import ProblemWatcher
from ..errors import ToolError
from ..host import Editor, FileEdit
from ..workspace.folders import Workspace

if TYPE_CHECKING:
    from ..policy.capability import Effect
    from ..policy.gate import ApprovalGate
    from ..sandbox import Sandbox

__all__ = [
    "EditJournal",
    "StepCheckpoints",
    "Proposal",
    "Tool",
    "ToolArgs",
    "ToolDeps",
    "ToolError",
    "ToolResult",
]


class ToolArgs(BaseModel):
    """Base of every tool's arguments: snake_case names, unknown arguments refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call produced. ``output`` is what the model reads."""

    ok: bool
    output: str
    error: str | None = None
    edits: tuple[FileEdit, ...] = ()
    """Edits this call applied (for ``changedFiles``, the session log and undo)."""
    blocked: str | None = None
    """Why a call run in the sandbox failed for lack of reach (it may be asked to run
    outside); None otherwise."""
    plan: tuple[PlanEntry, ...] | None = None
    """The plan this call set (the ``plan`` tool), sent to the user as a ``plan`` event."""

    @classmethod
    def failure(cls, message: str) -> ToolResult:
        """A failed call: the message is both the model's observation and the error."""
        return cls(ok=False, output=message, error=message)


class EditJournal(Protocol):
    """Where edits are logged before they are sent, then their outcome (for undo)."""

    async def intended(self, edit: FileEdit) -> str:
        """Log ``edit`` durably before it is applied; the id its outcome refers to."""
        ...

    def outcome(self, edit_id: str, applied: bool) -> None:
        """Log whether the edit logged as ``edit_id`` was applied."""
        ...


class StepCheckpoints(Protocol):
    """Keeps, around each step that can change files, what it found and what it left (the
    session's checkpoints, for rewind)."""

    async def before(
        self, tool: str, call_id: str, title: str, change: FileEdit | None, step: int
    ) -> object:
        """Take what the step can reach: ``change``'s file for an edit, else the workspace;
        what ``after`` needs."""
        ...

    async def after(self, taken: object, edits: tuple[FileEdit, ...]) -> None:
        """The step ended (``edits``: the edits it applied): record what it changed (it
        may finish in the background: ``settle``)."""
        ...

    async def settle(self) -> None:
        """Wait until every step's checkpoint is recorded (the run's end)."""
        ...


class BackgroundJobs(Protocol):
    """A session's background jobs, as ``bash`` starts one (``tools/jobs.JobTable``)."""

    async def launch(
        self,
        command: str,
        cwd: Path,
        *,
        sandbox: Sandbox | None,
        extra_env: Callable[[Mapping[str, str]], Mapping[str, str]] | None,
    ) -> str:
        """Start ``command`` as a job; what the call answers (its id, its first output).
        ``ToolError`` when it cannot start."""
        ...


@dataclass(frozen=True, slots=True)
class ToolDeps:
    """What a tool call depends on: what it may touch while it runs."""

    workspace: Workspace
    run_id: str
    editor: Editor | None = None
    """Applies edits and saves documents; None where nothing may be written."""
    gate: ApprovalGate | None = None
    """Decides calls that need approval; None means every such call is denied."""
    journal: EditJournal | None = None
    """Logs every edit before it is sent (the session log); None: not logged."""
    problems: ProblemWatcher | None = None
    """The editor's problems (diagnostics); None when the editor cannot tell them."""
    progress: Callable[[int, str, str], None] | None = None
    """Told how the call runs (a command: milliseconds so far, its last line, the end of
    its output), for people only; set for each call by the loop, None: nobody watches."""
    checkpoints: StepCheckpoints | None = None
    """Checkpoints each step that can change files (the session's); None: none kept."""
    step: int = 0
    """The run's step the call is made in (set for each call by the loop)."""
    call_id: str = ""
    """The call being made (set for each call by the loop; ``ask_user`` names it)."""
    jobs: BackgroundJobs | None = None
    """The session's background jobs (``tools/jobs.py``); None: no job can start."""
    command_input: str = "end"
    """``commandInput``: ``ask`` puts a command's question to the user
    (``tools/command_input.py``); ``end`` ends the command."""


@dataclass(frozen=True, slots=True)
class Proposal:
    """What a call that needs approval would do, shown to the user before it happens."""

    title: str
    preview: Preview
    payload: Any = None
    """Tool-specific: what ``perform`` needs (e.g. the computed ``FileEdit``)."""
    change: FileEdit | None = None
    """The file change as a whole (the edit tools'), for an editor that shows whole files."""
    sandbox: Sandbox | None = None
    """Perform it inside this sandbox (with the sandbox on, every command)."""
    builtin: bool = False
    """The built-in read-only rules alone allowed it: a command's git then runs with every
    program-running setting off (``tools/git_guard.py``)."""
    read_only: bool = False
    """The tool says the call changes nothing and the user believes it (an MCP server's
    ``readOnlyHint`` under ``trustReadOnlyHints``): the gate passes it unasked, rules aside."""


A = TypeVar("A", bound=ToolArgs)


@functools.cache
def one_line(text: object, limit: int = 80) -> str:
    """``text`` on one line of at most ``limit`` characters (cut with an ellipsis)."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def path_of(arguments: dict[str, Any]) -> str:
    """The ``path`` argument of a call as shown, ``.`` when there is none."""
    path = arguments.get("path")
    return path if isinstance(path, str) and path else "."


@functools.cache
def _schema_of(model: type[ToolArgs]) -> dict[str, Any]:
    """``model``'s JSON Schema without titles, made once per process: pydantic builds it
    anew on every call (~3 ms a tool), and every run asks for every tool's."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


class Tool(Generic[A]):
    """A tool the model can call. Subclasses set the class attributes and ``run``."""

    name: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[ToolArgs]]
    needs_approval: ClassVar[bool] = False
    answers_change: ClassVar[bool] = False
    """The same call may rightly be made again and again, its answer changing with time
    (``job_output``): not taken for a run going round in circles."""
    takes_changed_arguments: ClassVar[bool] = True
    """An approval answer may change the call's arguments (then the call is proposed again
    with them); False: a changed call is not done."""
    label: ClassVar[str | None] = None
    """The tool's name for people when ``name`` is none (an MCP tool's ``notes · echo``)."""
    kind: ClassVar[str] = "other"
    """What a call does, for a front that shows it by kind: ``read``, ``search``, ``edit``,
    ``execute``, ``think`` or ``other`` (ACP's tool kinds)."""
    effect: ClassVar[Effect] = "changes"
    """What a call of a tool that needs approval may do beyond reading, which decides it in
    a read-only session (``policy/capability.py``): ``none``, ``command`` (a shell command:
    reads only when the built-in read-only rules allow it) or ``changes`` (the default: a
    tool that does not say may change anything). A tool that needs no approval changes
    nothing: the registry runs it directly."""
    effect_note: ClassVar[str | None] = None
    """The tool's own words for what it may change, said when a read-only session refuses it."""
    mcp_name: ClassVar[tuple[str, str] | None] = None
    """An MCP server's tool: the server's configured name and the tool's listed name, which
    rules match (never ``name``, the model-facing one, which servers can share)."""

    def title(self, arguments: dict[str, Any]) -> str:
        """What a front shows for a call: what it is about (the file, the command), not
        the tool's name."""
        return self.label or self.name

    def parameters_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, as model APIs take it (a copy: callers may
        change it)."""
        return copy.deepcopy(_schema_of(self.args_model))

    async def run(self, args: A, deps: ToolDeps) -> ToolResult:
        """Do the work; raise ``ToolError`` for failures the model should see."""
        raise NotImplementedError

    async def propose(self, args: A, deps: ToolDeps) -> Proposal:
        """For tools that need approval: what the call would do, without doing it."""
        raise NotImplementedError

    async def perform(self, args: A, proposal: Proposal, deps: ToolDeps) -> ToolResult:
        """For tools that need approval: do what was proposed and allowed."""
        raise NotImplementedError
