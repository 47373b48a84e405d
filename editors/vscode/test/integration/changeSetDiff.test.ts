// The change-set reader against the server's own diffs: generated texts (mixed line ends, no
// last line end, lines that look like diff headers or hunk marks, non-ASCII, paths with
// spaces) renamed in two files, diffed by the server's `unified_diff` (the real Python, run
// isolated), then read back here: every file's whole new text, and the card's line counts.
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { applyHunks, parseChangeSet } from "../../src/changeSet";
import { diffStat } from "../../src/events";

const EXTENSION_ROOT = path.resolve(__dirname, "../../..");
const SERVER = process.env.TETHER_SERVER ?? path.resolve(EXTENSION_ROOT, "../../.venv/bin/tether");
const PYTHON = path.join(path.dirname(SERVER), "python");

const LINES = [
  "def area(w, h):",
  "    return area(w, h)",
  "--- a/shapes.py",
  "+++ b/shapes.py",
  "@@ -1,2 +1,2 @@",
  "-- area",
  "++ area",
  "\\ No newline at end of file",
  "",
  "   ",
  "\tx = area  # é ünï 😀",
  "areas = [area]",
  "keep",
];
const ENDS = ["\n", "\r\n", "\r"];
const NAMES = ["shapes.py", "my dir/a b.py", "pkg/ünï.py", "x.py"];

/** A small deterministic generator (the same cases every run). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

interface Case {
  files: Array<{ path: string; old: string; new: string }>;
}

function cases(count: number): Case[] {
  const next = random(48);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const out: Case[] = [];
  while (out.length < count) {
    const names = [...NAMES].sort(() => next() - 0.5).slice(0, 2);
    const files = names.map((name) => {
      const lines = Array.from({ length: 1 + Math.floor(next() * 12) }, () => pick(LINES));
      let old = lines.map((line) => line + pick(ENDS)).join("");
      if (next() < 0.3) {
        old = old.replace(/(\r\n|\n|\r)$/, ""); // no last line end
      }
      // A "\r" line end then an empty "\n" line reads as one "\r\n": not a text to test.
      old = old.replace(/\r(?=\n)/g, "");
      return { path: name, old, new: old.replace(/\barea\b/g, "rect_area") };
    });
    const changed = files.filter((file) => file.old !== file.new);
    if (changed.length > 0) {
      out.push({ files: changed });
    }
  }
  return out;
}

const SCRIPT = `
import json, sys
from tether.text.edit import unified_diff
cases = json.load(sys.stdin)
print(json.dumps(["".join(unified_diff(f["old"], f["new"], f["path"]) for f in c["files"]) for c in cases]))
`;

describe("integration: a change set read back from the server's own diffs", () => {
  it("gives every file's whole new text and counts its lines, for generated texts and paths", function () {
    assert.ok(fs.existsSync(PYTHON), `no Python at ${PYTHON}: set TETHER_SERVER`);
    const generated = cases(300);
    const run = spawnSync(PYTHON, ["-I", "-c", SCRIPT], {
      input: JSON.stringify(generated),
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.strictEqual(run.status, 0, run.stderr);
    const diffs = JSON.parse(run.stdout) as string[];
    assert.strictEqual(diffs.length, generated.length);
    for (const [index, diff] of diffs.entries()) {
      const expected = generated[index].files;
      const files = parseChangeSet(diff);
      assert.deepStrictEqual(
        files.map((f) => f.path),
        expected.map((f) => f.path),
        diff,
      );
      for (const [n, file] of files.entries()) {
        assert.strictEqual(
          applyHunks(expected[n].old, file),
          expected[n].new,
          `${JSON.stringify(expected[n])}\n${diff}`,
        );
      }
      const lines = files.flatMap((f) => f.hunks.flatMap((h) => h.lines));
      assert.deepStrictEqual(
        diffStat(diff),
        {
          added: lines.filter((l) => l.op === "+").length,
          removed: lines.filter((l) => l.op === "-").length,
        },
        diff,
      );
    }
  });
});
