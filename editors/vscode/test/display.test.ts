import * as assert from "assert";
import { shownLine, shownText } from "../src/display";

describe("display: text from outside as a person is shown it", () => {
  it("escapes what a screen would obey or hide, as the server's text.display does", () => {
    assert.strictEqual(shownText("a\r\nb\rc\td"), "a\nb\\rc\td"); // lines and tabs kept
    assert.strictEqual(shownText("\u001b[31mred\u0007\u007f\u0085"), "\\x1b[31mred\\x07\\x7f\\x85");
    assert.strictEqual(shownText("txt.\u202eexe \u200b\u2028"), "txt.\\u202eexe \\u200b\\u2028");
    assert.strictEqual(shownText("tag\u{e0041}"), "tag\\U000e0041");
    assert.strictEqual(shownText("x\u200dy"), "x\\u200dy"); // a joiner next to ASCII disguises
    assert.strictEqual(shownText("👨\u200d👩"), "👨\u200d👩"); // between emoji it joins them
    assert.strictEqual(shownText("é ü 漢字"), "é ü 漢字");
  });

  it("keeps a joiner only between two visible letters: next to a hidden character it is escaped", () => {
    assert.strictEqual(shownText("é\u200dé"), "é\u200dé");
    assert.strictEqual(shownText("\u0080\u200c\u0080"), "\\x80\\u200c\\x80");
    assert.strictEqual(shownText("é\u200d\u200b漢"), "é\\u200d\\u200b漢");
    assert.strictEqual(shownText("\u202e\u200d漢"), "\\u202e\\u200d漢");
    assert.strictEqual(shownText("é\u200d\u{e0041}"), "é\\u200d\\U000e0041");
  });

  it("writes a name on one line: line breaks and tabs escaped too", () => {
    assert.strictEqual(shownLine("a\r\nb\tc\u001b"), "a\\r\\nb\\tc\\x1b");
    assert.strictEqual(shownLine("\\x1b stays"), "\\x1b stays"); // an escape already written
  });
});
