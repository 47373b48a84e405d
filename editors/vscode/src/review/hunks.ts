// The hunks of a proposed window (its old text against the proposed text, line by line) and
// the window's text rebuilt from a choice per hunk: what inline review accepts piecewise.
// No `vscode` import: tested directly.

/** One run of changed lines; lines keep their line ends ("\r\n", "\n", "\r" or none at the end). */
export interface Hunk {
  /** Index of the first removed line (or of the line the added ones go before) in the old text. */
  readonly baseStart: number;
  /** Index of the first added line in the proposed text. */
  readonly newStart: number;
  readonly removed: readonly string[];
  readonly added: readonly string[];
}

/** Past this many compared line pairs the middle is one hunk: a line LCS would cost too much. */
const MAX_CELLS = 4_000_000;

/** `text` cut after each line end; the last line has none when the text does not end with one. */
export function splitLines(text: string): string[] {
  return text.match(/[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$/g) ?? [];
}

/**
 * The hunks that turn `baseText` into `text`, in order: lines equal on both sides (line ends
 * included) are kept, the rest grouped into runs separated by at least one kept line.
 */
export function diffHunks(baseText: string, text: string): Hunk[] {
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
  const oldMiddle = base.slice(head, base.length - tail);
  const newMiddle = proposed.slice(head, proposed.length - tail);
  if (oldMiddle.length === 0 && newMiddle.length === 0) {
    return [];
  }
  if (oldMiddle.length * newMiddle.length > MAX_CELLS) {
    return [{ baseStart: head, newStart: head, removed: oldMiddle, added: newMiddle }];
  }
  return hunksOf(oldMiddle, newMiddle, head);
}

/** A longest-common-subsequence walk over two line lists, offset by `start` lines of both. */
function hunksOf(old: string[], neu: string[], start: number): Hunk[] {
  const [n, m] = [old.length, neu.length];
  // common[i * (m + 1) + j]: the LCS length of old[i..] and neu[j..].
  const common = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      common[i * (m + 1) + j] =
        old[i] === neu[j]
          ? common[(i + 1) * (m + 1) + j + 1] + 1
          : Math.max(common[(i + 1) * (m + 1) + j], common[i * (m + 1) + j + 1]);
    }
  }
  const hunks: Hunk[] = [];
  let current: { baseStart: number; newStart: number; removed: string[]; added: string[] } | undefined;
  const flush = (): void => {
    if (current !== undefined) {
      hunks.push(current);
      current = undefined;
    }
  };
  let [i, j] = [0, 0];
  while (i < n || j < m) {
    if (i < n && j < m && old[i] === neu[j]) {
      flush();
      i += 1;
      j += 1;
      continue;
    }
    current ??= { baseStart: start + i, newStart: start + j, removed: [], added: [] };
    const dropOld = j >= m || (i < n && common[(i + 1) * (m + 1) + j] >= common[i * (m + 1) + j + 1]);
    if (dropOld) {
      current.removed.push(old[i]);
      i += 1;
    } else {
      current.added.push(neu[j]);
      j += 1;
    }
  }
  flush();
  return hunks;
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
