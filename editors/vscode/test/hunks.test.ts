import * as assert from "assert";
import { Hunk, diffHunks, rebuildText, splitLines, verdictOf } from "../src/review/hunks";

const all = (): boolean => true;
const none = (): boolean => false;

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

describe("diffHunks and rebuildText", () => {
  it("finds nothing to review in equal texts", () => {
    assert.deepStrictEqual(diffHunks("a\nb\n", "a\nb\n"), []);
    assert.deepStrictEqual(verdictOf("a\n", [], []), { decision: "allow" });
  });

  it("splits two changes separated by unchanged lines into two hunks, each accepted alone", () => {
    const base = "one\ntwo\nthree\nfour\nfive\n";
    const text = "ONE\ntwo\nthree\nfour\nFIVE\n";
    const hunks = diffHunks(base, text);
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

  it("keeps hunks one unchanged line apart separate, and merges touching changes into one", () => {
    const base = "a\nb\nc\n";
    const apart = diffHunks(base, "A\nb\nC\n");
    assert.strictEqual(apart.length, 2);
    assert.strictEqual(
      rebuildText(base, apart, (i) => i === 1),
      "a\nb\nC\n",
    );
    const touching = diffHunks(base, "A\nB\nc\n");
    assert.deepStrictEqual(touching, [
      { baseStart: 0, newStart: 0, removed: ["a\n", "b\n"], added: ["A\n", "B\n"] },
    ]);
  });

  it("handles pure insertions and deletions, with the line positions in both texts", () => {
    const base = "a\nb\nc\n";
    const text = "a\nnew 1\nnew 2\nb\n";
    const hunks = diffHunks(base, text);
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

  it("keeps \\r\\n line ends in the rebuilt text, and a change of line end is a change", () => {
    const base = "x = 1\r\ny = 2\r\nz = 3\r\n";
    const text = "x = 10\r\ny = 2\r\nz = 30\r\n";
    const hunks = diffHunks(base, text);
    assert.strictEqual(hunks.length, 2);
    assertRoundTrips(base, text, hunks);
    assert.strictEqual(
      rebuildText(base, hunks, (i) => i === 0),
      "x = 10\r\ny = 2\r\nz = 3\r\n",
    );
    assert.deepStrictEqual(diffHunks("a\r\nb\r\n", "a\nb\r\n"), [
      { baseStart: 0, newStart: 0, removed: ["a\r\n"], added: ["a\n"] },
    ]);
  });

  it("handles a last line without a line end on either side", () => {
    const base = "a\nx\nb";
    const grown = "A\nx\nb\nc";
    const hunks = diffHunks(base, grown);
    // "b" and "b\n" differ: the old last line is replaced by one that now ends.
    assert.deepStrictEqual(hunks, [
      { baseStart: 0, newStart: 0, removed: ["a\n"], added: ["A\n"] },
      { baseStart: 2, newStart: 2, removed: ["b"], added: ["b\n", "c"] },
    ]);
    assertRoundTrips(base, grown, hunks);
    assert.strictEqual(
      rebuildText(base, hunks, (i) => i === 1),
      "a\nx\nb\nc",
    );
    const shrunk = diffHunks("a\nb\n", "a\nB");
    assertRoundTrips("a\nb\n", "a\nB", shrunk);
  });

  it("handles a new file (empty old text) and a file emptied", () => {
    assert.deepStrictEqual(diffHunks("", "x\ny"), [
      { baseStart: 0, newStart: 0, removed: [], added: ["x\n", "y"] },
    ]);
    assertRoundTrips("x\ny", "", diffHunks("x\ny", ""));
  });

  it("aligns repeated lines so that only the real change is a hunk", () => {
    const base = "}\n}\nreturn\n}\n";
    const text = "}\n}\nreturn 1\n}\n";
    assert.deepStrictEqual(diffHunks(base, text), [
      { baseStart: 2, newStart: 2, removed: ["return\n"], added: ["return 1\n"] },
    ]);
  });

  it("gives a window too large to compare line by line as one hunk that still rebuilds", () => {
    const base = Array.from({ length: 2100 }, (_, i) => `old ${i}\n`).join("");
    const text = Array.from({ length: 2100 }, (_, i) => `new ${i}\n`).join("");
    const hunks = diffHunks(base, text);
    assert.strictEqual(hunks.length, 1);
    assertRoundTrips(base, text, hunks);
  });

  it("matches every combination of choices against the expected text (three hunks)", () => {
    const base = "1\n2\n3\n4\n5\n";
    const text = "one\n2\nthree\n4\nfive\n";
    const hunks = diffHunks(base, text);
    assert.strictEqual(hunks.length, 3);
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
});

describe("verdictOf", () => {
  const base = "a\nb\nc\n";
  const text = "A\nb\nC\n";
  const hunks = diffHunks(base, text);

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
