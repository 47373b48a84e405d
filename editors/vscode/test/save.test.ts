import * as assert from "assert";
import { SavableDocument, saveDocuments } from "../src/save";

function doc(isDirty: boolean, saves = true, log: string[] = [], name = ""): SavableDocument {
  return {
    isDirty,
    isClosed: false,
    save: async () => {
      log.push(name);
      return saves;
    },
  };
}

describe("agent/saveDocuments", () => {
  it("saves the dirty open documents and lists what now matches the disk", async () => {
    const log: string[] = [];
    const docs: Record<string, SavableDocument> = {
      "file:///a": doc(true, true, log, "a"),
      "file:///b": doc(false, true, log, "b"),
      "file:///c": doc(true, false, log, "c"),
    };
    const result = await saveDocuments(
      ["file:///a", "file:///b", "file:///c", "file:///gone"],
      (uri) => docs[uri],
    );
    assert.deepStrictEqual(result, { saved: ["file:///a", "file:///b"] });
    assert.deepStrictEqual(log, ["a", "c"]); // a clean document is not saved again
  });

  it("leaves out a document whose save throws", async () => {
    const failing: SavableDocument = {
      isDirty: true,
      isClosed: false,
      save: () => Promise.reject(new Error("read-only")),
    };
    assert.deepStrictEqual(await saveDocuments(["file:///x"], () => failing), { saved: [] });
  });
});
