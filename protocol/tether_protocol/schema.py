"""Generate the JSON Schema of every wire shape into ``protocol/schema/``.

Run ``python -m tether_protocol.schema`` after changing a model; ``--check`` exits 1 when the
checked-in files differ from the models (CI runs it through the test suite).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from . import (
    ApproveParams,
    ApproveResult,
    AskParams,
    AskResult,
    CancelParams,
    CancelResult,
    CheckpointsParams,
    CheckpointsResult,
    ClientTetherCapabilities,
    CommandParams,
    CommandResult,
    CommandsParams,
    CommandsResult,
    DiagnosticsParams,
    DiagnosticsResult,
    HistoryParams,
    HistoryResult,
    JobOutputParams,
    JobOutputResult,
    JobsParams,
    JobsResult,
    JobStopParams,
    JobStopResult,
    RewindParams,
    RewindResult,
    RulesAddParams,
    RulesAddResult,
    RulesListParams,
    RulesListResult,
    RulesRemoveParams,
    RulesRemoveResult,
    RunEvent,
    RunParams,
    RunResult,
    SaveDocumentsParams,
    SaveDocumentsResult,
    Script,
    ServerTetherCapabilities,
    SessionsParams,
    SessionsResult,
    SteerParams,
    SteerResult,
    TetherSettings,
    UndoParams,
    UndoResult,
)
from .code import CodeParams, CodeResult

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"

SHAPES: dict[str, Any] = {
    "agent-run.params": RunParams,
    "agent-run.result": RunResult,
    "agent-cancel.params": CancelParams,
    "agent-cancel.result": CancelResult,
    "agent-steer.params": SteerParams,
    "agent-steer.result": SteerResult,
    "agent-undo.params": UndoParams,
    "agent-undo.result": UndoResult,
    "agent-checkpoints.params": CheckpointsParams,
    "agent-checkpoints.result": CheckpointsResult,
    "agent-rewind.params": RewindParams,
    "agent-rewind.result": RewindResult,
    "agent-commands.params": CommandsParams,
    "agent-commands.result": CommandsResult,
    "agent-command.params": CommandParams,
    "agent-command.result": CommandResult,
    "agent-sessions.params": SessionsParams,
    "agent-sessions.result": SessionsResult,
    "agent-history.params": HistoryParams,
    "agent-history.result": HistoryResult,
    "agent-rules-list.params": RulesListParams,
    "agent-rules-list.result": RulesListResult,
    "agent-rules-add.params": RulesAddParams,
    "agent-rules-add.result": RulesAddResult,
    "agent-rules-remove.params": RulesRemoveParams,
    "agent-rules-remove.result": RulesRemoveResult,
    "agent-event.params": RunEvent,
    "agent-approve.params": ApproveParams,
    "agent-approve.result": ApproveResult,
    "agent-saveDocuments.params": SaveDocumentsParams,
    "agent-saveDocuments.result": SaveDocumentsResult,
    "agent-diagnostics.params": DiagnosticsParams,
    "agent-diagnostics.result": DiagnosticsResult,
    "agent-ask.params": AskParams,
    "agent-ask.result": AskResult,
    "agent-code.params": CodeParams,
    "agent-code.result": CodeResult,
    "agent-jobs.params": JobsParams,
    "agent-jobs.result": JobsResult,
    "agent-jobStop.params": JobStopParams,
    "agent-jobStop.result": JobStopResult,
    "agent-jobOutput.params": JobOutputParams,
    "agent-jobOutput.result": JobOutputResult,
    "client-capabilities": ClientTetherCapabilities,
    "server-capabilities": ServerTetherCapabilities,
    "settings": TetherSettings,
    "script": Script,
}


def render() -> dict[str, str]:
    """File name → JSON text of each shape's schema (wire names, validation mode)."""
    files: dict[str, str] = {}
    for name, shape in SHAPES.items():
        schema = TypeAdapter(shape).json_schema(by_alias=True, mode="validation")
        schema = {"$id": f"tether/protocol-v1/{name}.json", **schema}
        files[f"{name}.json"] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return files


def main(argv: list[str] | None = None) -> int:
    """Write the schema files, or with ``--check`` report drift and exit 1."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the files are stale")
    parser.add_argument("--out", type=Path, default=SCHEMA_DIR)
    args = parser.parse_args(argv)
    files = render()
    if args.check:
        stale = [
            n
            for n, text in files.items()
            if not (args.out / n).exists() or (args.out / n).read_text() != text
        ]
        extra = sorted(p.name for p in args.out.glob("*.json") if p.name not in files)
        for name in stale + extra:
            print(f"schema drift: {args.out / name}", file=sys.stderr)
        return 1 if stale or extra else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("*.json"):
        if old.name not in files:
            old.unlink()
    for name, text in files.items():
        (args.out / name).write_text(text)
    print(f"wrote {len(files)} schema files to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
