"""What a session log holds besides the events, and how a session is read back.

A log line is either an event exactly as sent in ``agent/event`` (no ``record`` key), or a
record for the server's own use: every message that joins the conversation (``message``),
the whole conversation after a compaction (``history``), and every applied edit with the
changed window and the hashes of the whole texts (for ``agent/undo``: ``edit-intent``
before it is sent, then ``edit-outcome``; older logs hold whole ``before``/``after``
texts, the oldest one ``edit`` record), undo marks (``undone``), and each step that could
change files with its change set and each rewind (``checkpoint``, ``rewound``:
``checkpoint_records.py``). The conversation is rebuilt from these records alone: the log
is the single source of truth.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from tether_protocol import parse_event

from ..host import FileEdit
from ..providers.base import (
    AssistantMessage,
    Message,
    Reasoning,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ..text.window import local_pair
from .checkpoint_records import CheckpointRecord, RewoundRecord
from .hunks import CONTEXT_LINES, HUNK_LIMIT, Hunk, context_around
from .hunks import hunks as window_hunks
from .repair import close_interrupted_calls

log = logging.getLogger(__name__)


class _Record(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class LoggedToolCall(_Record):
    """A tool call inside a logged assistant message."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    arguments_error: str | None = None


class LoggedReasoning(_Record):
    """A reasoning block of a logged assistant message, kept byte for byte: a resumed
    session sends it back as the provider gave it (Anthropic checks its signature)."""

    source: str
    kind: str
    text: str = ""
    signature: str | None = None
    data: str | None = None

    @classmethod
    def of(cls, block: Reasoning) -> LoggedReasoning:
        return cls(
            source=block.source,
            kind=block.kind,
            text=block.text,
            signature=block.signature or None,
            data=block.data or None,
        )

    def block(self) -> Reasoning:
        return Reasoning(self.source, self.kind, self.text, self.signature or "", self.data or "")


class LoggedMessage(_Record):
    """One conversation message, as logged."""

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    tool_calls: list[LoggedToolCall] = Field(default_factory=list)
    reasoning: list[LoggedReasoning] | None = None
    """An assistant message's reasoning blocks (absent when it has none)."""
    call_id: str | None = None
    tool: str | None = None
    content: str | None = None
    is_error: bool = False

    @classmethod
    def of(cls, message: Message) -> LoggedMessage:
        """The logged form of a message."""
        if isinstance(message, UserMessage):
            return cls(role="user", text=message.text)
        if isinstance(message, AssistantMessage):
            calls = [
                LoggedToolCall(
                    call_id=c.call_id,
                    name=c.name,
                    arguments=c.arguments,
                    arguments_error=c.arguments_error,
                )
                for c in message.tool_calls
            ]
            reasoning = [LoggedReasoning.of(b) for b in message.reasoning] or None
            return cls(role="assistant", text=message.text, tool_calls=calls, reasoning=reasoning)
        return cls(
            role="tool",
            call_id=message.call_id,
            tool=message.tool,
            content=message.content,
            is_error=message.is_error,
        )

    def message(self) -> Message:
        """The conversation message again."""
        if self.role == "user":
            return UserMessage(self.text)
        if self.role == "assistant":
            calls = tuple(
                ToolCall(c.call_id, c.name, c.arguments, c.arguments_error) for c in self.tool_calls
            )
            reasoning = tuple(r.block() for r in self.reasoning or ())
            return AssistantMessage(self.text, calls, reasoning)
        return ToolResultMessage(
            self.call_id or "", self.tool or "", self.content or "", self.is_error
        )


class MessageRecord(_Record):
    """A message joined the conversation."""

    record: Literal["message"] = "message"
    run_id: str
    message: LoggedMessage


class HistoryRecord(_Record):
    """The whole conversation, replaced (after a compaction)."""

    record: Literal["history"] = "history"
    run_id: str
    messages: list[LoggedMessage]


HASHED_KEPT = 1 << 16
"""Texts at least this long have their hash remembered (the last one, by identity)."""

HASHED_PIECE = 1 << 16
"""Long texts are encoded for hashing this many characters at a time."""


@dataclass(slots=True)
class _Hashed:
    """A long text's hash and size in UTF-8, with the hasher's state and the bytes hashed
    at every ``HASHED_PIECE`` characters (``states[k]`` has seen ``text[: k *
    HASHED_PIECE]``, ``sizes[k]`` bytes): the hash of a text that differs from it only from
    some offset on goes on from the state before that offset."""

    text: str | None
    """The text; None while it is an edit's text after, not made yet (``FileEdit.after``)."""
    edit: Any
    """That edit (a ``FileEdit``), or None."""
    digest: str
    size: int
    states: list[Any]
    sizes: list[int]

    def hashes(self, text: str) -> bool:
        return self.text is text or (self.edit is not None and self.edit.after is text)


_hashed: list[_Hashed] = []


def _hash_from(
    hasher: Any,
    offset: int,
    size: int,
    segments: list[tuple[str, int, int]],
    states: list[Any],
    sizes: list[int],
) -> int:
    """Feed ``hasher`` (which has seen ``offset`` characters of a text, a multiple of
    ``HASHED_PIECE``, ``size`` bytes) the rest of it, given as ``(text, start, end)``
    slices; its state and the bytes hashed are added to ``states`` and ``sizes`` at every
    ``HASHED_PIECE`` characters; the bytes hashed in all. Encoded a piece at a time: the
    same bytes (UTF-8 encodes each code point alone, a lone surrogate too), without a
    fresh 10 MB buffer whose first touch costs more than the encoding (page faults)."""
    for text, start, end in segments:
        while start < end:
            stop = min(end, start + HASHED_PIECE - offset % HASHED_PIECE)
            piece = text[start:stop].encode("utf-8", "surrogatepass")
            hasher.update(piece)
            size += len(piece)
            offset += stop - start
            start = stop
            if offset % HASHED_PIECE == 0:
                states.append(hasher.copy())
                sizes.append(size)
    return size


def _remember(entry: _Hashed) -> None:
    # Two: an edit's text before, and its text after (the next edit's text before).
    _hashed[:] = [entry, *(e for e in _hashed[:1] if e is not entry)]


def _hashed_entry(text: str) -> _Hashed:
    """The remembered hash of a long ``text``, or a new one (remembered)."""
    for entry in _hashed[:]:  # a copy: edits of other files log from other threads
        if entry.hashes(text):
            return entry
    hasher = hashlib.sha256()
    states, sizes = [hasher.copy()], [0]
    size = _hash_from(hasher, 0, 0, [(text, 0, len(text))], states, sizes)
    entry = _Hashed(text, None, hasher.hexdigest(), size, states, sizes)
    _remember(entry)
    return entry


def text_hash(text: str) -> str:
    """The sha256 of a file text (lone surrogates, which an editor may send, kept as such).

    Remembered for the last long texts, by identity: an edit's text after is the next
    edit's text before (the buffer keeps the approved text, see ``LspBuffers``), and on a
    10 MB text the encoding and hashing take 25–50 ms.
    """
    return text_digest(text)[0]


def text_digest(text: str) -> tuple[str, int]:
    """``text_hash`` and the text's size in UTF-8 (what a file without a BOM holds): what
    a checkpoint names an edited file by (``edited_texts.py``)."""
    if len(text) < HASHED_KEPT:
        data = text.encode("utf-8", "surrogatepass")
        return hashlib.sha256(data).hexdigest(), len(data)
    entry = _hashed_entry(text)
    return entry.digest, entry.size


def _hash_after(base: str, start: int, old: int, new: str, edit: Any) -> str:
    """The hash of ``base`` with its ``old`` characters at ``start`` replaced by ``new``
    (``edit``'s text after, which need not exist), hashed on from ``base``'s state before
    ``start``; remembered for when that text is made."""
    if len(base) < HASHED_KEPT:
        return text_hash(base[:start] + new + base[start + old :])
    entry = _hashed_entry(base)
    k = start // HASHED_PIECE
    hasher = entry.states[k].copy()
    states, sizes = entry.states[: k + 1], entry.sizes[: k + 1]
    offset = k * HASHED_PIECE
    size = _hash_from(
        hasher,
        offset,
        sizes[k],
        [(base, offset, start), (new, 0, len(new)), (base, start + old, len(base))],
        states,
        sizes,
    )
    digest: str = hasher.hexdigest()
    _remember(_Hashed(None, edit, digest, size, states, sizes))
    return digest


class EditWindow(_Record):
    """The part of a file an edit changed: ``old`` at ``start`` became ``new``.

    With the hashes of the whole texts before and after, this is all undo needs: the file
    still is the edit's result when its hash is ``after_sha256``, and putting ``old`` back
    at ``start`` gives the text before. A one-line change of a 1 MB file logs one line.
    """

    start: int
    """Offset (in characters) of the changed part in the texts before and after."""
    old: str
    new: str | None = None
    """None for a created file: undo deletes it, so its text need not be kept."""
    before_sha256: str
    after_sha256: str
    lead: str | None = None
    trail: str | None = None
    """A few unchanged lines before and after the window (``session/hunks.py``), so undo can
    put back the hunks the user did not touch when the file changed since. None in older
    logs and for windows over ``HUNK_LIMIT``: then a changed file is left alone."""

    @classmethod
    def between(
        cls,
        before: str,
        after: str,
        created: bool = False,
        known: tuple[int, int] | None = None,
    ) -> EditWindow:
        """The smallest window turning ``before`` into ``after``.

        ``known`` is (prefix, suffix): lengths of a common prefix and suffix the caller
        knows (an edit's changes lie between), where the comparison starts; the window is
        the same without it."""
        if created:
            return cls(
                start=0,
                old=before,
                new=None,
                before_sha256=text_hash(before),
                after_sha256=text_hash(after),
            )
        prefix, old, new = _trimmed(before, after, *(known or (0, 0)))
        lead: str | None = None
        trail: str | None = None
        if len(old) + len(new) <= HUNK_LIMIT:
            lead, trail = context_around(after, prefix, prefix + len(new))
        return cls(
            start=prefix,
            old=old,
            new=new,
            before_sha256=text_hash(before),
            after_sha256=text_hash(after),
            lead=lead,
            trail=trail,
        )

    @classmethod
    def of_edit(cls, edit: FileEdit) -> EditWindow:
        """``between`` the edit's texts, from the lines around its changes
        (``window.local_pair``) and its text before: its text after is not made (its hash
        goes on from the text before's, see ``_hash_after``)."""
        changes = edit.changes
        base = edit.base_text
        if edit.create or edit.after is not None or not changes:
            known = (changes[0].start, len(base) - changes[-1].end) if changes else None
            return cls.between(base, edit.new_text, edit.create, known)
        at, before, after = local_pair(base, changes, CONTEXT_LINES + 2)
        end = at + len(before)
        prefix, old, new = _trimmed(before, after, changes[0].start - at, end - changes[-1].end)
        lead: str | None = None
        trail: str | None = None
        if len(old) + len(new) <= HUNK_LIMIT:
            lead, trail = context_around(after, prefix, prefix + len(new))
            cut_before = at > 0 and len(lead) == prefix
            cut_after = end < len(base) and prefix + len(new) + len(trail) == len(after)
            if cut_before or cut_after:  # the context may reach beyond the lines taken
                known = (changes[0].start, len(base) - changes[-1].end)
                return cls.between(base, edit.new_text, False, known)
        return cls(
            start=at + prefix,
            old=old,
            new=new,
            before_sha256=text_hash(base),
            after_sha256=_hash_after(base, at + prefix, len(old), new, edit),
            lead=lead,
            trail=trail,
        )

    def hunks(self) -> list[Hunk] | None:
        """The window's hunks with their context; None when the log has no context."""
        if self.new is None or self.lead is None or self.trail is None:
            return None
        return window_hunks(self.lead, self.old, self.new, self.trail)


COMPARED_CHARS = 1 << 16
"""Texts are compared this many characters at a time (a short hold of the interpreter)."""


def _trimmed(before: str, after: str, known_prefix: int, known_suffix: int) -> tuple[int, str, str]:
    """Where ``before`` and ``after`` first differ, and the differing middles of each (the
    common ends found from ``known_prefix`` / ``known_suffix``, lengths known to be equal)."""
    prefix = _common_prefix(before, after, known_prefix)
    limit = min(len(before), len(after)) - prefix
    suffix = _common_suffix(before, after, limit, known_suffix)
    return prefix, before[prefix : len(before) - suffix], after[prefix : len(after) - suffix]


def _common_prefix(a: str, b: str, known: int = 0) -> int:
    """Length of the common prefix: equal slices skipped a block at a time, then halving;
    from ``known``, a length they are known to share."""
    limit = min(len(a), len(b))
    low = max(0, min(known, limit))
    while (
        low + COMPARED_CHARS <= limit
        and a[low : low + COMPARED_CHARS] == b[low : low + COMPARED_CHARS]
    ):
        low += COMPARED_CHARS
    high = min(limit, low + COMPARED_CHARS)
    while low < high:  # a[:low] == b[:low]; they differ before high, or high is the end
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, limit: int, known: int = 0) -> int:
    """Length of the common suffix, at most ``limit``, found as ``_common_prefix`` finds
    the prefix (from ``known``, a length they are known to share)."""
    end_a, end_b = len(a), len(b)
    low = max(0, min(known, limit))
    while low + COMPARED_CHARS <= limit and (
        a[end_a - low - COMPARED_CHARS : end_a - low]
        == b[end_b - low - COMPARED_CHARS : end_b - low]
    ):
        low += COMPARED_CHARS
    high = min(limit, low + COMPARED_CHARS)
    while low < high:
        middle = (low + high + 1) // 2
        if a[end_a - middle : end_a - low] == b[end_b - middle : end_b - low]:
            low = middle
        else:
            high = middle - 1
    return low


class EditRecord(_Record):
    """An applied edit, with what undoing it needs: the changed window and hashes, or (as
    older logs hold them) the whole texts before and after."""

    record: Literal["edit"] = "edit"
    run_id: str
    uri: str
    path: str
    before: str | None = None
    after: str | None = None
    window: EditWindow | None = None
    created: bool = False
    confirmed: bool = True
    """False: logged as intended but no outcome followed (the server stopped meanwhile)."""

    def is_after(self, text: str | None) -> bool:
        """Whether ``text`` is the file as this edit left it."""
        if text is None:
            return False
        if self.window is not None:
            return text_hash(text) == self.window.after_sha256
        return text == self.after

    def is_before(self, text: str | None) -> bool:
        """Whether ``text`` is the file as it was before this edit."""
        if text is None:
            return False
        if self.window is not None:
            return text_hash(text) == self.window.before_sha256
        return text == self.before

    def text_before(self, after: str) -> str:
        """The text before the edit, from the text it left (``is_after(after)`` holds)."""
        if self.window is None:
            return self.before or ""
        start, window = self.window.start, self.window
        if window.new is None:  # a created file: it was not there before
            return window.old
        return after[:start] + window.old + after[start + len(window.new or "") :]


class EditIntentRecord(_Record):
    """An edit about to be sent, logged before it is (a crash right after cannot lose it)."""

    record: Literal["edit-intent"] = "edit-intent"
    edit_id: str
    run_id: str
    uri: str
    path: str
    before: str | None = None
    after: str | None = None
    """Whole texts: only in older logs (newer ones log the ``window``)."""
    window: EditWindow | None = None
    created: bool = False


class EditOutcomeRecord(_Record):
    """Whether the intended edit ``edit_id`` was applied."""

    record: Literal["edit-outcome"] = "edit-outcome"
    edit_id: str
    run_id: str
    applied: bool


class UndoneRecord(_Record):
    """A run's edits were undone."""

    record: Literal["undone"] = "undone"
    run_id: str
    note: str | None = None
    """What the session's model is told, before its next prompt (older logs: none)."""


class RunErrorRecord(_Record):
    """Why a run ended ``error`` (the text its result carried), so a replay can say it."""

    record: Literal["run-error"] = "run-error"
    run_id: str
    error: str


class WorkspaceRecord(_Record):
    """The folders a run worked in (the first is the session's ``cwd`` for ACP's session
    list), written as the run is put together."""

    record: Literal["workspace"] = "workspace"
    run_id: str
    roots: list[str]


LogRecord = (
    MessageRecord
    | HistoryRecord
    | EditRecord
    | EditIntentRecord
    | EditOutcomeRecord
    | UndoneRecord
    | RunErrorRecord
    | WorkspaceRecord
)


@dataclass
class SessionData:
    """A session read back from its log."""

    session_id: str
    events: list[dict[str, Any]] = field(default_factory=list)
    history: list[Message] = field(default_factory=list)
    edits: list[EditRecord] = field(default_factory=list)
    """Applied edits in order, and intended ones whose outcome was never logged."""
    intents: dict[str, EditRecord] = field(default_factory=dict)
    """Intended edits by id, until their outcome is read."""
    run_messages: dict[str, list[Message]] = field(default_factory=dict)
    """Each run's own messages, in order (as logged, before any compaction)."""
    undone: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    """Undo notes logged since the conversation's last prompt: the next run's model reads
    them before its prompt (``RunManager``), so none lands between a call and its result."""
    errors: dict[str, str] = field(default_factory=dict)
    """Each failed run's error text, by run id."""
    roots: list[str] = field(default_factory=list)
    """The folders the latest run worked in (none: no run said)."""
    skipped_lines: int = 0
    skipped: list[str] = field(default_factory=list)
    """The first few skipped lines: their number and why (``"line 3: not an object"``)."""
    interrupted_calls: int = 0
    """Tool calls that had no result in the log (the server died) and were given one."""
    checkpoints: list[CheckpointRecord] = field(default_factory=list)
    """The steps that could change files, in order, with what they changed (rewinds too)."""
    call_at: dict[str, int] = field(default_factory=dict)
    """Where in ``history`` the assistant message making each call is (a conversation
    rewind cuts it there)."""


MAX_REASONS = 5
"""Skipped lines described in the one warning a log gets; the rest are only counted."""
REASON_CHARS = 160


class BadLine(ValueError):
    """A log line that is JSON, but not an event or record Tether wrote."""


def read_session(path: Path, session_id: str) -> SessionData:
    """Read a log; lines that are not an event or record Tether wrote are skipped.

    A crash mid-write tears a line; a tool or a person may have mangled others (wrong types,
    unknown records, bytes that are not UTF-8). Each is skipped and the rest still read;
    the file gets one warning with the count. Tool calls left without a result (the server
    died during them) are given one, so the conversation can be sent to a model again.
    """
    data = SessionData(session_id)
    with path.open("rb") as handle:
        lines = handle.read().split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw.decode("utf-8"))  # bytes would be guessed as UTF-16/32
            if not isinstance(item, dict):
                raise BadLine(f"not a JSON object but {type(item).__name__}")
            _apply(data, item)
        except (ValueError, ValidationError) as exc:  # UnicodeDecodeError is a ValueError
            data.skipped_lines += 1
            if len(data.skipped) < MAX_REASONS:
                data.skipped.append(f"line {number}: {_reason(exc)}")
    data.history, added, dropped = close_interrupted_calls(data.history)
    data.interrupted_calls = added
    if data.skipped_lines:
        more = data.skipped_lines - len(data.skipped)
        log.warning(
            "%s: skipped %d unreadable line(s): %s%s",
            path,
            data.skipped_lines,
            "; ".join(data.skipped),
            f"; and {more} more" if more else "",
        )
    if added or dropped:
        log.warning(
            "%s: %d tool call(s) had no result (interrupted) and were closed; "
            "%d result(s) without their call were dropped",
            path,
            added,
            dropped,
        )
    return data


def _reason(exc: Exception) -> str:
    """Why a line was skipped, in one short line (never the whole, maybe huge, line)."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        text = f"{first['msg']} at {where or 'top level'} ({exc.error_count()} error(s))"
    elif isinstance(exc, UnicodeDecodeError):
        text = f"not UTF-8 (byte {exc.start})"
    else:
        text = str(exc)
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


def _apply(data: SessionData, item: dict[str, Any]) -> None:
    kind = item.get("record")
    if kind is None:
        parse_event(item)  # an event the editor could not read is no event
        data.events.append(item)
    elif kind == "message":
        record = MessageRecord.model_validate(item)
        message = record.message.message()
        if isinstance(message, UserMessage):  # a prompt: the notes before it come first
            data.history += [UserMessage(note) for note in data.notes]
            data.notes.clear()
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                data.call_at[call.call_id] = len(data.history)
        data.history.append(message)
        data.run_messages.setdefault(record.run_id, []).append(record.message.message())
    elif kind == "history":
        data.history = [m.message() for m in HistoryRecord.model_validate(item).messages]
        data.call_at = {
            call.call_id: at
            for at, message in enumerate(data.history)
            if isinstance(message, AssistantMessage)
            for call in message.tool_calls
        }
    elif kind == "edit":
        data.edits.append(EditRecord.model_validate(item))
    elif kind == "edit-intent":
        intent = EditIntentRecord.model_validate(item)
        edit = EditRecord.model_validate(intent.model_dump(exclude={"record", "edit_id"}))
        edit.confirmed = False
        data.intents[intent.edit_id] = edit
        data.edits.append(edit)
    elif kind == "edit-outcome":
        outcome = EditOutcomeRecord.model_validate(item)
        intended = data.intents.pop(outcome.edit_id, None)
        if intended is not None and outcome.applied:
            intended.confirmed = True
        elif intended is not None:  # not applied: nothing to undo
            data.edits = [e for e in data.edits if e is not intended]
    elif kind == "undone":
        undone = UndoneRecord.model_validate(item)
        data.undone.add(undone.run_id)
        if undone.note:
            data.notes.append(undone.note)
    elif kind == "checkpoint":
        data.checkpoints.append(CheckpointRecord.model_validate(item))
    elif kind == "rewound":
        rewound = RewoundRecord.model_validate(item)
        cut = data.call_at.get(rewound.call_id or "")
        if cut is not None:  # the later turns stay in the log, out of the conversation
            data.history = data.history[:cut]
            data.call_at = {c: at for c, at in data.call_at.items() if at < cut}
            data.notes.clear()
        if rewound.note:
            data.notes.append(rewound.note)
    elif kind == "run-error":
        failed = RunErrorRecord.model_validate(item)
        data.errors[failed.run_id] = failed.error
    elif kind == "workspace":
        data.roots = WorkspaceRecord.model_validate(item).roots
    else:
        raise BadLine(f"unknown record kind {_short(kind)}")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
