import * as assert from "assert";
import { shownText } from "../src/display";

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
});
