// The hunks of a proposed window (the server's `proposed.hunks`, as runs of the window's
// lines) and the window's text rebuilt from a choice per hunk: what inline review accepts
// piecewise. No `vscode` import: tested directly.
import type { ProposedHunk } from "../protocol";

/** One run of changed lines; lines keep their line ends ("\r\n", "\n", "\r" or none at the end). */
export interface Hunk {
  /** Index of the first removed line (or of the line the added ones go before) in the old text. */
  readonly baseStart: number;
  /** Index of the first added line in the proposed text. */
  readonly newStart: number;
  readonly removed: readonly string[];
  readonly added: readonly string[];
}

/** A proposed window: where it starts in the file, its two texts and the server's hunks. */
export interface ReviewWindow {
  readonly startLine: number;
  readonly baseText: string;
  readonly text: string;
  /** The preview's `proposed.hunks`: whole lines of the file and their new text (absent from older servers). */
  readonly hunks?: readonly ProposedHunk[] | null;
}

/** `text` cut after each line end; the last line has none when the text does not end with one. */
export function splitLines(text: string): string[] {
  return text.match(/[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$/g) ?? [];
}

/**
 * The window's hunks as the server sent them, in order, as runs of the window's lines. A
 * hunk's range covers whole lines of the file; it ends inside a line only at the end of a
 * file without a final line end, and that line is then one of the hunk's.
 */
export function windowHunks(window: ReviewWindow): Hunk[] {
  if (window.hunks === undefined || window.hunks === null) {
    return trimmedHunk(window.baseText, window.text);
  }
  const base = splitLines(window.baseText);
  let shift = 0; // lines the hunks before this one added, minus those they removed
  return window.hunks.map(({ range, text }) => {
    const baseStart = range.start.line - window.startLine;
    const count = range.end.line - range.start.line + (range.end.character > 0 ? 1 : 0);
    const added = splitLines(text);
    const hunk = {
      baseStart,
      newStart: baseStart + shift,
      removed: base.slice(baseStart, baseStart + count),
      added,
    };
    shift += added.length - count;
    return hunk;
  });
}

/**
 * For a server that sends no hunks: the window as one hunk, without the lines it holds
 * unchanged at either end (line ends included); none when the texts are equal.
 */
function trimmedHunk(baseText: string, text: string): Hunk[] {
  const base = splitLines(baseText);
  const proposed = splitLines(text);
  let head = 0;
  while (head < base.length && head < proposed.length && base[head] === proposed[head]) {
    head += 1;
  }
  let tail = 0;
  while (
    tail < base.length - head &&
    tail < proposed.length - head &&
    base[base.length - 1 - tail] === proposed[proposed.length - 1 - tail]
  ) {
    tail += 1;
  }
  const removed = base.slice(head, base.length - tail);
  const added = proposed.slice(head, proposed.length - tail);
  return removed.length === 0 && added.length === 0
    ? []
    : [{ baseStart: head, newStart: head, removed, added }];
}

/** The old text with the hunks for which `accepted(index)` holds applied, the others left out. */
export function rebuildText(
  baseText: string,
  hunks: readonly Hunk[],
  accepted: (index: number) => boolean,
): string {
  const base = splitLines(baseText);
  const out: string[] = [];
  let next = 0;
  hunks.forEach((hunk, index) => {
    out.push(...base.slice(next, hunk.baseStart));
    out.push(...(accepted(index) ? hunk.added : hunk.removed));
    next = hunk.baseStart + hunk.removed.length;
  });
  out.push(...base.slice(next));
  return out.join("");
}

/** What the answer is for a choice per hunk. */
export type HunkVerdict =
  | { readonly decision: "allow" }
  | { readonly decision: "allow"; readonly editedText: string }
  | { readonly decision: "deny" };

/** All accepted: a plain allow; none: deny; else allow with the window rebuilt from the accepted ones. */
export function verdictOf(
  baseText: string,
  hunks: readonly Hunk[],
  accepted: readonly boolean[],
): HunkVerdict {
  const count = accepted.filter(Boolean).length;
  if (count === hunks.length) {
    return { decision: "allow" };
  }
  if (count === 0) {
    return { decision: "deny" };
  }
  return { decision: "allow", editedText: rebuildText(baseText, hunks, (index) => accepted[index]) };
}
