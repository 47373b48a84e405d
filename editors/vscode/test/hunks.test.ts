import * as assert from "assert";
import type { ProposedHunk } from "../src/protocol";
import { Hunk, rebuildText, splitLines, verdictOf, windowHunks } from "../src/review/hunks";

const all = (): boolean => true;
const none = (): boolean => false;

/** A server hunk: whole lines `start`..`end` of the file (the end inside a last line without a line end). */
function hunk(start: number, end: number, text: string, endCharacter = 0): ProposedHunk {
  return {
    range: { start: { line: start, character: 0 }, end: { line: end, character: endCharacter } },
    text,
  };
}

/** The review hunks of a window at the top of its file, with the server's hunks. */
function hunksOf(baseText: string, text: string, hunks: ProposedHunk[], startLine = 0): Hunk[] {
  return windowHunks({ startLine, baseText, text, hunks });
}

/** Every accept/reject combination: all accepted gives the proposal, none the old text. */
function assertRoundTrips(base: string, text: string, hunks: Hunk[]): void {
  assert.strictEqual(rebuildText(base, hunks, all), text);
  assert.strictEqual(rebuildText(base, hunks, none), base);
}

describe("splitLines", () => {
  it("keeps each line's end, \\r\\n, \\n and a lone \\r alike, and a last line without one", () => {
    assert.deepStrictEqual(splitLines("a\r\nb\nc\rd"), ["a\r\n", "b\n", "c\r", "d"]);
    assert.deepStrictEqual(splitLines("a\n\n"), ["a\n", "\n"]);
    assert.deepStrictEqual(splitLines(""), []);
    assert.deepStrictEqual(splitLines("\r\n"), ["\r\n"]);
  });
});

// The server's hunks below are what it sends for these texts (tests/unit/test_proposed.py).
describe("windowHunks (the server's hunks) and rebuildText", () => {
  it("takes two changes separated by unchanged lines as two hunks, each accepted alone", () => {
    const base = "one\ntwo\nthree\nfour\nfive\n";
    const text = "ONE\ntwo\nthree\nfour\nFIVE\n";
    const hunks = hunksOf(base, text, [hunk(0, 1, "ONE\n"), hunk(4, 5, "FIVE\n")]);
    assert.deepStrictEqual(hunks, [
      { baseStart: 0, newStart: 0, removed: ["one\n"], added: ["ONE\n"] },
      { baseStart: 4, newStart: 4, removed: ["five\n"], added: ["FIVE\n"] },
    ]);
    assertRoundTrips(base, text, hunks);
    assert.strictEqual(
      rebuildText(base, hunks, (i) => i === 0),
      "ONE\ntwo\nthree\nfour\nfive\n",
    );
    assert.strictEqual(
      rebuildText(base, hunks, (i) => i === 1),
      "one\ntwo\nthree\nfour\nFIVE\n",
    );
  });

  it("places hunks by the file's lines when the window starts further down", () => {
    const base = "l1\none\ntwo\nthree\n";
    const text = "l1\nONE\ntwo\nTHREE\n";
    const hunks = hunksOf(base, text, [hunk(2, 3, "ONE\n"), hunk(4, 5, "THREE\n")], 1);
    assert.deepStrictEqual(hunks, [
      { baseStart: 1, newStart: 1, removed: ["one\n"], added: ["ONE\n"] },
      { baseStart: 3, newStart: 3, removed: ["three\n"], added: ["THREE\n"] },
    ]);
    assertRoundTrips(base, text, hunks);
  });

  it("handles pure insertions and deletions, with the line positions in both texts", () => {
    const base = "a\nb\nc\n";
    const text = "a\nnew 1\nnew 2\nb\n";
    const hunks = hunksOf(base, text, [hunk(1, 1, "new 1\nnew 2\n"), hunk(2, 3, "")]);
    assert.deepStrictEqual(hunks, [
      { baseStart: 1, newStart: 1, removed: [], added: ["new 1\n", "new 2\n"] },
      { baseStart: 2, newStart: 4, removed: ["c\n"], added: [] },
    ]);
    assertRoundTrips(base, text, hunks);
    assert.strictEqual(
      rebuildText(base, hunks, (i) => i === 1),
      "a\nb\n",
    );
    assert.strictEqual(
      rebuildText(base, hunks, (i) => i === 0),
      "a\nnew 1\nnew 2\nb\nc\n",
    );
  });

  it("keeps \\r\\n line ends in the rebuilt text", () => {
    const base = "x = 1\r\ny = 2\r\nz = 3\r\n";
    const text = "x = 10\r\ny = 2\r\nz = 30\r\n";
    const hunks = hunksOf(base, text, [hunk(0, 1, "x = 10\r\n"), hunk(2, 3, "z = 30\r\n")]);
    assert.deepStrictEqual(hunks[1], {
      baseStart: 2,
      newStart: 2,
      removed: ["z = 3\r\n"],
      added: ["z = 30\r\n"],
    });
    assertRoundTrips(base, text, hunks);
    assert.strictEqual(
      rebuildText(base, hunks, (i) => i === 0),
      "x = 10\r\ny = 2\r\nz = 3\r\n",
    );
  });

  it("takes a range ending inside the last line (no line end) as holding that line", () => {
    const base = "a\nx\nb";
    const grown = "A\nx\nb\nc";
    // "b" and "b\n" differ: the old last line is replaced by one that now ends.
    const hunks = hunksOf(base, grown, [hunk(0, 1, "A\n"), hunk(2, 2, "b\nc", 1)]);
    assert.deepStrictEqual(hunks, [
      { baseStart: 0, newStart: 0, removed: ["a\n"], added: ["A\n"] },
      { baseStart: 2, newStart: 2, removed: ["b"], added: ["b\n", "c"] },
    ]);
    assertRoundTrips(base, grown, hunks);
    assert.strictEqual(
      rebuildText(base, hunks, (i) => i === 1),
      "a\nx\nb\nc",
    );
  });

  it("handles a new file (empty old text) and a file emptied", () => {
    assert.deepStrictEqual(hunksOf("", "x\ny", [hunk(0, 0, "x\ny")]), [
      { baseStart: 0, newStart: 0, removed: [], added: ["x\n", "y"] },
    ]);
    assertRoundTrips("x\ny", "", hunksOf("x\ny", "", [hunk(0, 1, "", 1)]));
  });

  it("matches every combination of choices against the expected text (three hunks)", () => {
    const base = "1\n2\n3\n4\n5\n";
    const text = "one\n2\nthree\n4\nfive\n";
    const hunks = hunksOf(base, text, [hunk(0, 1, "one\n"), hunk(2, 3, "three\n"), hunk(4, 5, "five\n")]);
    for (let mask = 0; mask < 8; mask += 1) {
      const accepted = (i: number): boolean => (mask & (1 << i)) !== 0;
      const expected = [
        accepted(0) ? "one" : "1",
        "2",
        accepted(1) ? "three" : "3",
        "4",
        accepted(2) ? "five" : "5",
      ].join("\n");
      assert.strictEqual(rebuildText(base, hunks, accepted), `${expected}\n`, `mask ${mask}`);
    }
  });

  it("shows a window from a server without hunks as one change, its unchanged ends left out", () => {
    const old = (baseText: string, text: string): Hunk[] => windowHunks({ startLine: 0, baseText, text });
    assert.deepStrictEqual(old("a\nb\n", "a\nb\n"), []);
    const hunks = old("keep\none\ntwo\nthree\nkeep\n", "keep\nONE\ntwo\nTHREE\nkeep\n");
    assert.deepStrictEqual(hunks, [
      {
        baseStart: 1,
        newStart: 1,
        removed: ["one\n", "two\n", "three\n"],
        added: ["ONE\n", "two\n", "THREE\n"],
      },
    ]);
    assertRoundTrips("keep\none\ntwo\nthree\nkeep\n", "keep\nONE\ntwo\nTHREE\nkeep\n", hunks);
    assert.deepStrictEqual(old("a\r\nb\r\n", "a\nb\r\n"), [
      { baseStart: 0, newStart: 0, removed: ["a\r\n"], added: ["a\n"] },
    ]);
  });
});

describe("verdictOf", () => {
  const base = "a\nb\nc\n";
  const text = "A\nb\nC\n";
  const hunks = hunksOf(base, text, [hunk(0, 1, "A\n"), hunk(2, 3, "C\n")]);

  it("finds nothing to decide in a window without hunks", () => {
    assert.deepStrictEqual(verdictOf("a\n", [], []), { decision: "allow" });
  });

  it("is a plain allow when every hunk is accepted and a deny when none is", () => {
    assert.deepStrictEqual(verdictOf(base, hunks, [true, true]), { decision: "allow" });
    assert.deepStrictEqual(verdictOf(base, hunks, [false, false]), { decision: "deny" });
  });

  it("is an allow with the window rebuilt from the accepted hunks otherwise", () => {
    assert.deepStrictEqual(verdictOf(base, hunks, [false, true]), {
      decision: "allow",
      editedText: "a\nb\nC\n",
    });
  });
});
