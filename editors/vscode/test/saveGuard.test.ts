import * as assert from "assert";
import type { AgentEventParams } from "../src/protocol";
import { SaveGuard } from "../src/saveGuard";

const APP = "file:///work/app/src/app.py";
const OTHER = "file:///work/app/src/other.py";

function event(kind: string, fields: Record<string, unknown>): AgentEventParams {
  return { runId: "r-1", seq: 1, kind, ...fields } as unknown as AgentEventParams;
}

describe("SaveGuard: the save after the agent's edit keeps the user's unsaved typing unsaved", () => {
  let dirty: string[];
  let notes: string[];
  let guard: SaveGuard;

  beforeEach(() => {
    dirty = [];
    notes = [];
    guard = new SaveGuard(
      () => dirty,
      (note) => notes.push(note),
    );
  });

  it("skips a file the user allowed an edit of while it held unsaved typing, and says so", () => {
    dirty = [APP];
    guard.protect("call-1", APP);
    assert.deepStrictEqual(guard.filter([APP]), []);
    assert.deepStrictEqual(notes, [
      "Tether changed app.py; not saved, as it holds your unsaved changes (undo: Ctrl+Z)",
    ]);
    // The tool's result ends the edit: the save before a command saves it as documented.
    guard.handle(event("tool-result", { callId: "call-1", tool: "edit_file", ok: true, output: "" }));
    assert.deepStrictEqual(guard.filter([APP]), [APP]);
  });

  it("saves a file that was clean when the edit was allowed (only the agent's change is in it)", () => {
    guard.protect("call-1", APP);
    assert.deepStrictEqual(guard.filter([APP]), [APP]);
    assert.deepStrictEqual(notes, []);
  });

  it("holds the dirty buffers through an auto-approved edit call, not through a command", () => {
    dirty = [APP];
    guard.handle(event("tool-call", { callId: "c-2", tool: "write_file", arguments: {} }));
    dirty = [APP, OTHER]; // typed after the call began: the agent's edit did not start from it
    assert.deepStrictEqual(guard.filter([APP, OTHER]), [OTHER]);
    guard.handle(event("tool-result", { callId: "c-2", tool: "write_file", ok: true, output: "" }));
    guard.handle(event("tool-call", { callId: "c-3", tool: "bash", arguments: {} }));
    assert.deepStrictEqual(guard.filter([APP, OTHER]), [APP, OTHER]);
  });

  it("forgets everything held when the run finishes", () => {
    dirty = [APP];
    guard.protect("call-1", APP);
    guard.handle(event("run-finished", { outcome: "cancelled", steps: 1 }));
    assert.deepStrictEqual(guard.filter([APP]), [APP]);
  });
});
