import * as assert from "assert";
import { applyHunks, hunkTexts, parseChangeSet, rootOf } from "../src/changeSet";

// What the server sends for a rename of `area` in two files (one unified diff, file after file).
const DIFF = [
  "--- a/shapes.py",
  "+++ b/shapes.py",
  "@@ -1,3 +1,3 @@",
  "-def area(width, height):",
  "+def rect_area(width, height):",
  '     """The area."""',
  "     return width * height",
  "--- a/pkg/report.py",
  "+++ b/pkg/report.py",
  "@@ -1,4 +1,4 @@",
  "-from shapes import area",
  "+from shapes import rect_area",
  " ",
  " ",
  " def report():",
  "@@ -8,2 +8,2 @@",
  " def again():",
  "-    return area(1, 1)",
  "\\ No newline at end of file",
  "+    return rect_area(1, 1)",
  "\\ No newline at end of file",
  "",
].join("\n");

const SHAPES = 'def area(width, height):\n    """The area."""\n    return width * height\n';
const REPORT =
  "from shapes import area\r\n\r\n\r\ndef report():\r\n    return area(2, 3)\r\n\r\n\r\ndef again():\r\n    return area(1, 1)";

describe("a change of several files (a rename's diff)", () => {
  it("reads each file's path and hunks, in order", () => {
    const files = parseChangeSet(DIFF);
    assert.deepStrictEqual(
      files.map((f) => [f.path, f.hunks.length]),
      [
        ["shapes.py", 1],
        ["pkg/report.py", 2],
      ],
    );
    assert.deepStrictEqual(hunkTexts(files[0]), {
      before: SHAPES,
      after: SHAPES.replace("def area", "def rect_area"),
    });
  });

  it("applies the hunks to the whole file, keeping its line ends and its missing last one", () => {
    const [shapes, report] = parseChangeSet(DIFF);
    assert.strictEqual(applyHunks(SHAPES, shapes), SHAPES.replace("def area", "def rect_area"));
    // Only the hunks' lines change (line 5 is not in any hunk: the rename's diff here is partial).
    assert.strictEqual(
      applyHunks(REPORT, report),
      "from shapes import rect_area\r\n\r\n\r\ndef report():\r\n    return area(2, 3)\r\n\r\n\r\ndef again():\r\n    return rect_area(1, 1)",
    );
  });

  it("gives up (undefined) when the file no longer holds the hunks' old lines", () => {
    const [shapes] = parseChangeSet(DIFF);
    assert.strictEqual(applyHunks("def square(side):\n    return side * side\n", shapes), undefined);
    assert.strictEqual(applyHunks("", shapes), undefined);
  });

  it("finds the workspace root from the first file's URI and its path in the diff", () => {
    assert.strictEqual(rootOf("file:///work/app/pkg/report.py", "pkg/report.py"), "file:///work/app");
    assert.strictEqual(rootOf("file:///work/app/other.py", "pkg/report.py"), undefined);
  });

  it("reads paths with spaces, absolute paths (another root) and ignores text around the files", () => {
    const files = parseChangeSet(
      [
        "--- a/my dir/a b.py",
        "+++ b/my dir/a b.py",
        "@@ -1 +1 @@",
        "-x = old",
        "+x = new",
        "--- a//srv/other/c.py",
        "+++ b//srv/other/c.py",
        "@@ -2,1 +2,1 @@",
        "-old()",
        "+new()",
      ].join("\n"),
    );
    assert.deepStrictEqual(
      files.map((f) => f.path),
      ["my dir/a b.py", "/srv/other/c.py"],
    );
    assert.strictEqual(applyHunks("x = old\n", files[0]), "x = new\n");
    assert.strictEqual(applyHunks("keep\nold()\nkeep\n", files[1]), "keep\nnew()\nkeep\n");
    assert.deepStrictEqual(parseChangeSet("no diff here\n"), []);
  });
});
