// One proposed edit under inline review: its hunks, a choice per hunk, where the window is in
// the document as the user types, and what to show (CodeLens rows, marked lines). Once every
// hunk is decided it reports the verdict (all accepted: allow; none: deny; else allow with
// the window rebuilt from the accepted hunks). Only types from `vscode`: tested directly.
import type * as vscode from "vscode";
import { Hunk, HunkVerdict, ReviewWindow, splitLines, verdictOf, windowHunks } from "./hunks";

export const HUNK_COMMANDS = {
  accept: "tether.approval.acceptHunk",
  reject: "tether.approval.rejectHunk",
  undo: "tether.approval.undoHunk",
  acceptAll: "tether.approval.acceptAll",
  rejectAll: "tether.approval.rejectAll",
  openDiff: "tether.approval.openDiff",
  next: "tether.approval.nextChange",
  previous: "tether.approval.previousChange",
} as const;

/** The actions on a block's (comment thread's) title: they get the thread, not a review id. */
export const BLOCK_COMMANDS = {
  accept: "tether.approval.acceptBlock",
  reject: "tether.approval.rejectBlock",
  undo: "tether.approval.undoBlock",
} as const;

/** Shown on one line after a hunk's old lines, at most this long (the hover has it all). */
const PREVIEW_CHARS = 160;

/** What a review needs: the file, where the window starts in it, the window's two texts and hunks. */
export interface ReviewTarget extends ReviewWindow {
  readonly uri: vscode.Uri;
}

export interface ReviewCallbacks {
  /** Every hunk is decided. */
  finish(verdict: HunkVerdict): void;
  /** The side-by-side diff, on request. */
  openDiff(): void;
}

/** The added lines on one line: line ends shown as ⏎, cut to PREVIEW_CHARS. */
function oneLine(lines: readonly string[]): string {
  const text = lines.map((line) => line.replace(/\r\n|\n|\r/, "")).join(" ⏎ ");
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}

/** One proposed edit under review in one file. */
export class Review {
  readonly hunks: readonly Hunk[];
  /** Per hunk: true accepted, false rejected, undefined not decided yet. */
  readonly choices: Array<boolean | undefined>;
  private finished = false;

  constructor(
    readonly id: string,
    readonly target: ReviewTarget,
    private readonly callbacks: ReviewCallbacks,
    /** The window's first line in the document now (moves when the user types above it). */
    public startLine = target.startLine,
  ) {
    this.hunks = windowHunks(target);
    this.choices = this.hunks.map(() => undefined);
  }

  get decided(): boolean {
    return this.choices.every((choice) => choice !== undefined);
  }

  /** The document line of a hunk (for an insertion: the line it goes before). */
  lineOf(index: number): number {
    return this.startLine + this.hunks[index].baseStart;
  }

  /** The verdict now; a hunk not decided yet counts as `undecided`. */
  verdict(undecided = true): HunkVerdict {
    return verdictOf(
      this.target.baseText,
      this.hunks,
      this.choices.map((choice) => choice ?? undecided),
    );
  }

  /** Sets hunks' choices (undefined: undo); reports the verdict once all are decided. */
  choose(indexes: readonly number[], choice: boolean | undefined): void {
    if (this.finished) {
      return;
    }
    for (const index of indexes) {
      if (index >= 0 && index < this.choices.length) {
        this.choices[index] = choice;
      }
    }
    if (this.decided) {
      this.finished = true;
      this.callbacks.finish(this.verdict());
    }
  }

  openDiff(): void {
    this.callbacks.openDiff();
  }

  /** The lines a hunk covers in the document now (at least its first). */
  linesOf(index: number): { first: number; last: number } {
    const first = this.lineOf(index);
    return { first, last: first + Math.max(this.hunks[index].removed.length - 1, 0) };
  }

  /**
   * The hunk a key at `line` acts on: the undecided one under the cursor, else the next
   * undecided one below, else the first undecided; -1 when all are decided.
   */
  hunkAt(line: number): number {
    const open = this.hunks.map((_, index) => index).filter((index) => this.choices[index] === undefined);
    return (
      open.find((index) => this.linesOf(index).first <= line && line <= this.linesOf(index).last) ??
      open.find((index) => this.linesOf(index).first > line) ??
      open[0] ??
      -1
    );
  }

  /** The hunk after (`1`) or before (`-1`) the cursor's line, wrapping around; -1 when none. */
  step(line: number, direction: 1 | -1): number {
    const count = this.hunks.length;
    if (count === 0) {
      return -1;
    }
    const order = this.hunks.map((_, index) => index);
    if (direction === 1) {
      return order.find((index) => this.linesOf(index).first > line) ?? 0;
    }
    return order.reverse().find((index) => this.linesOf(index).first < line) ?? count - 1;
  }

  /** "1 of 2 accepted, 1 rejected" (or "2 changes to review"). */
  progress(): string {
    const total = this.hunks.length;
    const accepted = this.choices.filter((choice) => choice === true).length;
    const rejected = this.choices.filter((choice) => choice === false).length;
    if (accepted === 0 && rejected === 0) {
      return total === 1 ? "1 change to review" : `${total} changes to review`;
    }
    const parts = [`${accepted} of ${total} accepted`];
    if (rejected > 0) {
      parts.push(`${rejected} rejected`);
    }
    return parts.join(", ");
  }

  /**
   * Follows the user's typing: a change above the window moves it; false when a change
   * touched the window's lines (the review no longer matches the file).
   */
  follow(change: { range: vscode.Range; text: string }): boolean {
    const windowEnd = this.startLine + splitLines(this.target.baseText).length;
    const { start, end } = change.range;
    // Ending right at the window's first line leaves it whole when what comes before it
    // still ends a line: typed lines (text ending with a line end) or whole lines deleted.
    const endsAtWindow =
      end.line === this.startLine &&
      end.character === 0 &&
      (/(\r\n|\n|\r)$/.test(change.text) || (change.text === "" && start.character === 0));
    if (end.line < this.startLine || endsAtWindow) {
      const added = (change.text.match(/\r\n|\n|\r/g) ?? []).length;
      this.startLine += added - (end.line - start.line);
      return true;
    }
    return change.range.start.line >= windowEnd;
  }
}

/** The CodeLens rows of a review: per hunk Accept | Reject (or its choice and Undo), and the whole. */
export function reviewLenses(
  review: Review,
): Array<{ line: number; title: string; command: string; arguments: unknown[] }> {
  const lenses: Array<{ line: number; title: string; command: string; arguments: unknown[] }> = [];
  const total = review.hunks.length;
  review.hunks.forEach((_, index) => {
    const line = review.lineOf(index);
    const at = (title: string, command: string, ...args: unknown[]): void => {
      lenses.push({ line, title, command, arguments: [review.id, ...args] });
    };
    const choice = review.choices[index];
    const label = total > 1 ? `Tether change ${index + 1} of ${total}` : "Tether change";
    if (choice === undefined) {
      at(`${label}: Accept`, HUNK_COMMANDS.accept, index);
      at("Reject", HUNK_COMMANDS.reject, index);
    } else {
      at(`${label}: ${choice ? "Accepted" : "Rejected"} · Undo`, HUNK_COMMANDS.undo, index);
    }
    if (index === 0) {
      if (total > 1) {
        at("Accept All", HUNK_COMMANDS.acceptAll);
        at("Reject All", HUNK_COMMANDS.rejectAll);
      }
      at("Open Diff", HUNK_COMMANDS.openDiff);
    }
  });
  return lenses;
}

/** The lines to mark: removed (old lines of undecided or rejected hunks) and the added text after them. */
export function reviewMarks(review: Review): {
  removed: Array<{ line: number; accepted: boolean | undefined }>;
  added: Array<{ line: number; atEnd: boolean; text: string; full: string; accepted: boolean | undefined }>;
} {
  const removed: Array<{ line: number; accepted: boolean | undefined }> = [];
  const added: Array<{
    line: number;
    atEnd: boolean;
    text: string;
    full: string;
    accepted: boolean | undefined;
  }> = [];
  review.hunks.forEach((hunk, index) => {
    const first = review.lineOf(index);
    const accepted = review.choices[index];
    if (accepted === false) {
      return; // rejected: the file stays as it is there, nothing to show
    }
    hunk.removed.forEach((_, offset) => removed.push({ line: first + offset, accepted }));
    if (hunk.added.length > 0) {
      // After the last old line; for an insertion, after the line before it (or before line 0).
      const atEnd = hunk.removed.length > 0 || first > 0;
      const line = hunk.removed.length > 0 ? first + hunk.removed.length - 1 : Math.max(first - 1, 0);
      added.push({ line, atEnd, text: oneLine(hunk.added), full: hunk.added.join(""), accepted });
    }
  });
  return { removed, added };
}

/**
 * One block of added lines, shown below a hunk's old lines (a comment thread in VS Code: the
 * extension API cannot insert lines that are only seen, and the buffer must not change before
 * the verdict). `state` is the thread's context value: its title actions depend on it.
 */
export interface ReviewBlock {
  /** The hunk's index in the review. */
  readonly index: number;
  /** The document line the block shows below: the hunk's last old line, or the one before an insertion. */
  readonly line: number;
  readonly state: "pending" | "accepted";
  /** Expanded while the hunk waits for a choice; collapsed once accepted (its title says so). */
  readonly expanded: boolean;
  readonly label: string;
  /** Markdown: the added lines in a ```diff block, each as "+ line" (green in VS Code's themes). */
  readonly body: string;
}

/** A Markdown fence longer than any run of backticks in `text`. */
function fenceFor(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  return "`".repeat(Math.max(3, longest + 1));
}

/** The added lines as a ```diff block (line ends dropped; an empty line stays a lone "+"). */
export function addedBlock(lines: readonly string[]): string {
  const code = lines.map((line) => `+${line.replace(/(\r\n|\n|\r)$/, "")}`).join("\n");
  const fence = fenceFor(code);
  return `${fence}diff\n${code}\n${fence}`;
}

/**
 * The blocks of a review: one per hunk that adds lines and is not rejected (a rejected hunk
 * leaves the file as it is there: nothing to show). A hunk that only removes lines has none.
 */
export function reviewBlocks(review: Review): ReviewBlock[] {
  const total = review.hunks.length;
  const blocks: ReviewBlock[] = [];
  review.hunks.forEach((hunk, index) => {
    const choice = review.choices[index];
    if (choice === false || hunk.added.length === 0) {
      return;
    }
    const first = review.lineOf(index);
    const line = hunk.removed.length > 0 ? first + hunk.removed.length - 1 : Math.max(first - 1, 0);
    const name = total > 1 ? `Tether change ${index + 1} of ${total}` : "Tether change";
    const count = hunk.added.length === 1 ? "1 line" : `${hunk.added.length} lines`;
    // Shown below a line: an insertion at the very top goes above the line it is shown under.
    const where = hunk.removed.length === 0 && first === 0 ? ", above line 1" : "";
    blocks.push({
      index,
      line,
      state: choice === true ? "accepted" : "pending",
      expanded: choice !== true,
      label: choice === true ? `${name}: accepted (${count}${where})` : `${name}: ${count} to add${where}`,
      body: addedBlock(hunk.added),
    });
  });
  return blocks;
}
