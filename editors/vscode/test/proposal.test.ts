import * as assert from "assert";
import { editedWindow, offsetAt, proposalTexts } from "../src/proposal";
import type { ProposedText } from "../src/protocol";

function window(
  start: [number, number],
  end: [number, number],
  baseText: string,
  text: string,
): ProposedText {
  return {
    range: {
      start: { line: start[0], character: start[1] },
      end: { line: end[0], character: end[1] },
    },
    baseText,
    text,
  };
}

describe("offsetAt", () => {
  it("cuts lines at \\r\\n, \\n and a lone \\r, and counts UTF-16 units", () => {
    const text = "a\r\nb\rc \u{1F30D} x\nlast";
    assert.strictEqual(offsetAt(text, 1, 0), 3);
    assert.strictEqual(offsetAt(text, 2, 0), 5);
    assert.strictEqual(offsetAt(text, 2, 5), 10); // after the astral character (2 units)
    assert.strictEqual(offsetAt(text, 3, 99), text.length); // clamped to the line
    assert.strictEqual(offsetAt(text, 9, 0), text.length); // past the end: the end
  });
});

describe("proposalTexts", () => {
  it("puts the window's new text in the file", () => {
    const texts = proposalTexts("one\ntwo\nthree\n", window([1, 0], [2, 0], "two\n", "2\n"));
    assert.deepStrictEqual(texts, {
      left: "one\ntwo\nthree\n",
      right: "one\n2\nthree\n",
      before: "one\n",
      after: "three\n",
    });
  });

  it("ends inside the last line of a lone-\\r file with astral characters", () => {
    const current = "a\rb \u{1F30D} x = 1";
    const texts = proposalTexts(current, window([1, 0], [1, 10], "b \u{1F30D} x = 1", "b \u{1F30D} x = 2"));
    assert.strictEqual(texts.right, "a\rb \u{1F30D} x = 2");
  });

  it("shows the window alone when the file here no longer holds it, and a new file from nothing", () => {
    const moved = proposalTexts("changed\n", window([0, 0], [1, 0], "two\n", "2\n"));
    assert.deepStrictEqual(moved, { left: "two\n", right: "2\n", before: "", after: "" });
    const created = proposalTexts(undefined, window([0, 0], [0, 0], "", "x = 1\n"));
    assert.deepStrictEqual(created, { left: "", right: "x = 1\n", before: "", after: "" });
  });
});

describe("editedWindow", () => {
  const texts = proposalTexts("one\r\ntwo\r\nthree\r\n", window([1, 0], [2, 0], "two\r\n", "2\r\n"));

  it("is undefined when the user left the proposal as it was (line ends aside)", () => {
    assert.strictEqual(editedWindow(texts, texts.right), undefined);
    assert.strictEqual(editedWindow(texts, "one\n2\nthree\n"), undefined);
  });

  it("is the user's text between the unchanged lines, with \\n line ends", () => {
    assert.strictEqual(editedWindow(texts, "one\r\nTWO\r\nand more\r\nthree\r\n"), "TWO\nand more\n");
    assert.strictEqual(editedWindow(texts, "one\r\nthree\r\n"), "");
  });

  it("is null when the user changed a line outside the window", () => {
    assert.strictEqual(editedWindow(texts, "ONE\r\n2\r\nthree\r\n"), null);
    assert.strictEqual(editedWindow(texts, "one\r\n"), null);
  });
});
