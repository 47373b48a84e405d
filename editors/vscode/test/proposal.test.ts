import * as assert from "assert";
import { applyUnifiedDiff, editedArguments, proposedText, replacementArguments } from "../src/proposal";

// Diffs exactly as `tether serve` writes them (tether.textedit.unified_diff).
const TWENTY = Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`).join("");
const TWENTY_CHANGED = TWENTY.replace("line 2\n", "line two\n")
  .replace("line 18\n", "")
  .replace("line 10\n", "line 10\ninserted\n");
const THREE_HUNKS =
  "--- a/m.txt\n+++ b/m.txt\n@@ -1,5 +1,5 @@\n line 1\n-line 2\n+line two\n line 3\n line 4\n line 5\n" +
  "@@ -8,6 +8,7 @@\n line 8\n line 9\n line 10\n+inserted\n line 11\n line 12\n line 13\n" +
  "@@ -15,6 +16,5 @@\n line 15\n line 16\n line 17\n-line 18\n line 19\n line 20\n";

/** What the server does with edit_file arguments (old_text must match once unless replace_all). */
function serverEdit(current: string, args: { [key: string]: unknown }): string {
  const oldText = String(args.old_text);
  const count = current.split(oldText).length - 1;
  assert.ok(oldText !== "", "old_text is empty");
  if (args.replace_all === true) {
    return current.split(oldText).join(String(args.new_text));
  }
  assert.strictEqual(count, 1, `old_text ${JSON.stringify(oldText)} matches ${count} times`);
  return current.replace(oldText, () => String(args.new_text));
}

describe("applyUnifiedDiff", () => {
  it("applies several hunks: a change, an insertion and a deletion", () => {
    assert.strictEqual(applyUnifiedDiff(TWENTY, THREE_HUNKS), TWENTY_CHANGED);
  });

  it("creates a new file from /dev/null", () => {
    assert.strictEqual(
      applyUnifiedDiff("", "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n"),
      "x\ny\n",
    );
  });

  it("follows the no-newline markers on both sides", () => {
    const addsNewline =
      "--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+2\n";
    assert.strictEqual(applyUnifiedDiff("one\ntwo", addsNewline), "one\n2\n");
    const dropsNewline =
      "--- a/e.txt\n+++ b/e.txt\n@@ -1 +1,2 @@\n keep\n+added\n\\ No newline at end of file\n";
    assert.strictEqual(applyUnifiedDiff("keep\n", dropsNewline), "keep\nadded");
  });

  it("keeps CRLF line endings of the document", () => {
    const diff = "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
    assert.strictEqual(applyUnifiedDiff("a\r\nb\r\n", diff), "a\r\nc\r\n");
  });

  it("refuses a diff whose context is not in the text", () => {
    assert.strictEqual(applyUnifiedDiff(TWENTY.replace("line 4", "line IV"), THREE_HUNKS), undefined);
    assert.strictEqual(applyUnifiedDiff(TWENTY, "not a diff"), undefined);
  });
});

describe("proposedText", () => {
  const current = "def greet(name):\n    return 'hello ' + name\n";

  it("replaces edit_file's old_text with new_text", () => {
    const args = { path: "src/app.py", old_text: "'hello '", new_text: "'hi '" };
    assert.strictEqual(
      proposedText("edit_file", args, current, ""),
      "def greet(name):\n    return 'hi ' + name\n",
    );
  });

  it("replaces every occurrence with replace_all", () => {
    const args = { path: "a", old_text: "o", new_text: "0", replace_all: true };
    assert.strictEqual(proposedText("edit_file", args, "foo\nboo\n", ""), "f00\nb00\n");
  });

  it("takes write_file's content", () => {
    assert.strictEqual(proposedText("write_file", { path: "a", content: "new\n" }, "old\n", ""), "new\n");
  });

  it("falls back to the diff when old_text does not match the text seen here", () => {
    const args = { path: "m.txt", old_text: "absent", new_text: "x" };
    assert.strictEqual(proposedText("edit_file", args, TWENTY, THREE_HUNKS), TWENTY_CHANGED);
  });

  it("gives undefined when neither the arguments nor the diff fit", () => {
    assert.strictEqual(
      proposedText("edit_file", { old_text: "zzz", new_text: "y" }, "abc\n", "junk"),
      undefined,
    );
  });
});

describe("editedArguments", () => {
  const current = "a = 1\nb = 2\nc = 3\nd = 4\n";
  const args = { path: "x.py", old_text: "b = 2", new_text: "b = 20" };
  const proposed = "a = 1\nb = 20\nc = 3\nd = 4\n";

  it("is undefined when the user did not change the proposal", () => {
    assert.strictEqual(editedArguments("edit_file", args, current, proposed, proposed), undefined);
  });

  it("covers the originally replaced text and the user's change, in whole lines", () => {
    const edited = "a = 1\nb = 200\nc = 3\nd = 4\n";
    const changed = editedArguments("edit_file", args, current, proposed, edited);
    assert.deepStrictEqual(changed, { path: "x.py", old_text: "b = 2\n", new_text: "b = 200\n" });
  });

  it("widens to a change the user made outside the proposed region", () => {
    const edited = "a = 1\nb = 20\nc = 3\nd = 40\n";
    const changed = editedArguments("edit_file", args, current, proposed, edited);
    assert.deepStrictEqual(changed, {
      path: "x.py",
      old_text: "b = 2\nc = 3\nd = 4\n",
      new_text: "b = 20\nc = 3\nd = 40\n",
    });
  });

  it("widens until old_text is unique in the file", () => {
    const text = "x\nsame\ny\nsame\nz\n";
    const changed = replacementArguments({ path: "p" }, text, "x\nsame\ny\nSAME\nz\n");
    assert.deepStrictEqual(changed, { path: "p", old_text: "y\nsame\nz\n", new_text: "y\nSAME\nz\n" });
  });

  it("turns an edited replace_all into one unique replacement", () => {
    const all = { path: "p", old_text: "o", new_text: "0", replace_all: true };
    const text = "foo\nbar\nboo\n";
    const prop = "f00\nbar\nb00\n";
    const changed = editedArguments("edit_file", all, text, prop, "f00\nBAR\nb00\n");
    assert.deepStrictEqual(changed, {
      path: "p",
      old_text: "foo\nbar\nboo\n",
      new_text: "f00\nBAR\nb00\n",
      replace_all: false,
    });
  });

  it("sends write_file's content as edited", () => {
    const changed = editedArguments("write_file", { path: "p", content: "a\n" }, "", "a\n", "b\n");
    assert.deepStrictEqual(changed, { path: "p", content: "b\n" });
  });

  it("always yields arguments the server turns into exactly the edited text", () => {
    // Deterministic pseudo-random edits of a file with repeated lines.
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pool = ["x\n", "y\n", "z\n", "same\n", "", "tail"];
    for (let round = 0; round < 300; round += 1) {
      const lines = Array.from({ length: 1 + random(8) }, () => pool[random(4)]);
      const text = lines.join("") + (random(2) ? "end\n" : "end");
      const start = random(text.length);
      const end = start + random(text.length - start + 1);
      const edited = text.slice(0, start) + pool[random(pool.length)] + text.slice(end);
      if (edited === text) {
        continue;
      }
      const changed = replacementArguments({ path: "p" }, text, edited);
      assert.strictEqual(serverEdit(text, changed), edited, JSON.stringify({ text, edited, changed }));
    }
  });
});
