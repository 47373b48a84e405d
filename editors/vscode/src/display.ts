// Text from outside (the model's) as a person is shown it: what would not be seen as itself
// is escaped, as the server's `text/display.py` does (`shown(text, lines=True)`). Line breaks
// and tabs stay; control characters (a terminal's escape sequences, a carriage return that
// writes over the line), line separators, bidi controls that show `exe.txt` for `txt.exe`,
// zero-width and tag characters are written `\x1b`, `\r`, `\u202e`, `\U000e0041`: nothing
// is dropped and nothing acts. A zero-width joiner between two characters that are not
// ASCII (an emoji sequence) stays.

const HIDDEN =
  // eslint-disable-next-line no-control-regex
  /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]|[\ud800-\udfff]/gu;

/** The same on one line (a name, a title): line breaks and tabs escaped too. */
const HIDDEN_ONE_LINE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]|[\ud800-\udfff]/gu;

const NAMED: Record<string, string> = { "\r": "\\r", "\n": "\\n", "\t": "\\t" };

function escape(char: string): string {
  if (char in NAMED) {
    return NAMED[char];
  }
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x100) {
    return `\\x${code.toString(16).padStart(2, "0")}`;
  }
  if (code < 0x10000) {
    return `\\u${code.toString(16).padStart(4, "0")}`;
  }
  return `\\U${code.toString(16).padStart(8, "0")}`;
}

/**
 * `text` with what a screen would obey or hide written as escapes a person can read. Escapes
 * are printable ASCII, so text shown already (the server's) comes back the same.
 */
export function shownText(text: string): string {
  return text.replace(HIDDEN, keep);
}

/** `text` (a name, a title) as `shownText` shows it, on one line: `\n` and `\t` escaped too. */
export function shownLine(text: string): string {
  return text.replace(HIDDEN_ONE_LINE, keep);
}

const ONE_HIDDEN =
  // eslint-disable-next-line no-control-regex
  /^(?:[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]|[\ud800-\udfff])$/u;

/** Whether `char` is visible and not ASCII: a zero-width joiner may stand next to it. */
function letter(char: string): boolean {
  return (char.codePointAt(0) ?? 0) > 0x7f && !ONE_HIDDEN.test(char);
}

/** The escape of one match of `whole`: a `\r\n` stays a line break, a joiner between two letters. */
function keep(char: string, at: number, whole: string): string {
  if (char === "\r\n") {
    return "\n";
  }
  if ((char === "\u200c" || char === "\u200d") && at > 0 && at + 1 < whole.length) {
    // the character before: a surrogate pair ends at at - 1
    const pair = at > 1 && /^[\ud800-\udbff][\udc00-\udfff]$/.test(whole.slice(at - 2, at));
    const previous = pair ? whole.slice(at - 2, at) : whole.charAt(at - 1);
    const next = String.fromCodePoint(whole.codePointAt(at + 1) ?? 0);
    if (letter(previous) && letter(next)) {
      return char; // joins two visible characters that are not ASCII
    }
  }
  return escape(char);
}
