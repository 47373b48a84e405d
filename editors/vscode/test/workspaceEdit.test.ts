import * as assert from "assert";
import { applyTextEdits } from "./integration/workspaceEdit";

describe("the integration test's TextEdit applier", () => {
  it("applies edits back to front at UTF-16 positions", () => {
    const text = "héllo 🌍 x\nsecond\n";
    const edits = [
      { range: { start: { line: 0, character: 9 }, end: { line: 0, character: 10 } }, newText: "y" },
      { range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } }, newText: "2nd\n" },
    ];
    assert.strictEqual(applyTextEdits(text, edits), "héllo 🌍 y\n2nd\n");
  });
});
