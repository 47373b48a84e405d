// The two sides of an edit approval's diff editor, built from the preview's `proposed`
// window, and the user's version of that window for the answer's `editedText`. The server
// owns what a tool does; nothing here knows edit_file or write_file. No `vscode` import:
// tested directly.
import type { ProposedText } from "./protocol";

export interface ProposalTexts {
  /** The file as it is (or the window's old text, or "" for a new file). */
  readonly left: string;
  /** `left` with the window's new text in place: what the user may edit. */
  readonly right: string;
  /** The unchanged text of `right` before and after the window. */
  readonly before: string;
  readonly after: string;
}

/** `text` with every line end made "\n" (VS Code may normalize a document's line ends). */
function lf(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/** The offset of an LSP position (UTF-16, which VS Code negotiates); lines end at \r\n, \n or \r. */
export function offsetAt(text: string, line: number, character: number): number {
  const ends = /\r\n|\n|\r/g;
  let start = 0;
  for (let n = 0; n < line; n += 1) {
    const found = ends.exec(text);
    if (found === null) {
      return text.length; // past the last line: the end of the text
    }
    start = found.index + found[0].length;
  }
  ends.lastIndex = start;
  const next = ends.exec(text);
  const lineEnd = next === null ? text.length : next.index;
  return Math.min(start + character, lineEnd);
}

/**
 * The diff editor's texts: the whole file with the window replaced when `current` (the
 * file as seen here; undefined for a new file) still holds the window's old text at its
 * range, else only the window's old and new text.
 */
export function proposalTexts(current: string | undefined, proposed: ProposedText): ProposalTexts {
  if (current !== undefined) {
    const start = offsetAt(current, proposed.range.start.line, proposed.range.start.character);
    const end = offsetAt(current, proposed.range.end.line, proposed.range.end.character);
    if (current.slice(start, end) === proposed.baseText) {
      const before = current.slice(0, start);
      const after = current.slice(end);
      return { left: current, right: before + proposed.text + after, before, after };
    }
  }
  return { left: proposed.baseText, right: proposed.text, before: "", after: "" };
}

/**
 * The window as the user left `edited` (the right side): undefined when it is as proposed,
 * `null` when the user changed text outside the window (the answer cannot carry that).
 */
export function editedWindow(texts: ProposalTexts, edited: string): string | undefined | null {
  const [mine, before, after] = [lf(edited), lf(texts.before), lf(texts.after)];
  if (mine === lf(texts.right)) {
    return undefined;
  }
  if (mine.length < before.length + after.length || !mine.startsWith(before) || !mine.endsWith(after)) {
    return null;
  }
  return mine.slice(before.length, mine.length - after.length);
}
