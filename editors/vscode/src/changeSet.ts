// A change of several files as the server proposes it (a rename): one unified diff, file
// after file, with no `proposed` window. Read here into files and hunks, so that each file
// can be shown whole in a diff editor. No `vscode` import: tested directly.

/** One line of a hunk: kept (" "), removed ("-") or added ("+"); `end` false when it has no line end. */
interface HunkLine {
  readonly op: " " | "-" | "+";
  readonly text: string;
  end: boolean;
}

export interface Hunk {
  /** The first old line, 1-based. */
  readonly oldStart: number;
  readonly lines: HunkLine[];
}

export interface ChangeSetFile {
  /** As the server shows it: relative to the workspace's first folder, else absolute. */
  readonly path: string;
  readonly hunks: Hunk[];
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@/;

/** The files of a unified diff with `--- a/…` / `+++ b/…` headers, in order. */
export function parseChangeSet(diff: string): ChangeSetFile[] {
  const files: ChangeSetFile[] = [];
  const lines = diff.split("\n");
  let file: ChangeSetFile | undefined;
  let hunk: Hunk | undefined;
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    if (line.startsWith("--- ") && lines[i + 1]?.startsWith("+++ b/")) {
      file = { path: lines[i + 1].slice("+++ b/".length), hunks: [] };
      files.push(file);
      hunk = undefined;
      i += 1;
      continue;
    }
    const header = HUNK.exec(line);
    if (header !== null && file !== undefined) {
      hunk = { oldStart: Number(header[1]), lines: [] };
      file.hunks.push(hunk);
      continue;
    }
    if (hunk === undefined) {
      continue;
    }
    if (line.startsWith("\\")) {
      const last = hunk.lines[hunk.lines.length - 1];
      if (last !== undefined) {
        last.end = false; // "\ No newline at end of file"
      }
    } else if (line.startsWith(" ") || line.startsWith("-") || line.startsWith("+")) {
      hunk.lines.push({ op: line[0] as HunkLine["op"], text: line.slice(1), end: true });
    }
  }
  return files;
}

/** `text` as lines, each with its own line end ("\r\n", "\n", "\r" or none for the last). */
function splitKeepingEnds(text: string): string[] {
  return text.match(/[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$/g) ?? [];
}

function lineEnd(line: string): string {
  return /(\r\n|\n|\r)$/.exec(line)?.[1] ?? "";
}

/**
 * `text` with the file's hunks applied: the whole new file, its own line ends kept (an
 * added line takes the end of the line it replaces, else of the line before it). Undefined when `text` no longer holds
 * the hunks' old lines where they say.
 */
export function applyHunks(text: string, file: ChangeSetFile): string | undefined {
  const lines = splitKeepingEnds(text);
  const usual = lines.length > 0 ? lineEnd(lines[0]) || "\n" : "\n";
  const out: string[] = [];
  let next = 0; // the index of the next old line not yet copied
  for (const hunk of file.hunks) {
    const start = Math.max(hunk.oldStart - 1, 0);
    if (start < next || start > lines.length) {
      return undefined;
    }
    out.push(...lines.slice(next, start));
    next = start;
    // The line ends of the lines just removed: the n-th added line after them takes the n-th.
    let removedEnds: string[] = [];
    let lastEnd = usual;
    for (const line of hunk.lines) {
      if (line.op === "+") {
        const end = removedEnds.shift() ?? lastEnd;
        out.push(line.text + (line.end ? end || usual : ""));
        continue;
      }
      const old = lines[next];
      const end = old === undefined ? "" : lineEnd(old);
      if (old === undefined || old.slice(0, old.length - end.length) !== line.text) {
        return undefined;
      }
      if (line.op === " ") {
        out.push(old);
        removedEnds = [];
      } else {
        removedEnds.push(end);
      }
      lastEnd = end || lastEnd;
      next += 1;
    }
  }
  out.push(...lines.slice(next));
  return out.join("");
}

/** The hunks' old and new lines alone (a file that no longer holds them is shown so). */
export function hunkTexts(file: ChangeSetFile): { before: string; after: string } {
  const side = (keep: HunkLine["op"]): string =>
    file.hunks
      .map((hunk) =>
        hunk.lines
          .filter((line) => line.op === " " || line.op === keep)
          .map((line) => line.text + (line.end ? "\n" : ""))
          .join(""),
      )
      .join("…\n");
  return { before: side("-"), after: side("+") };
}

/** The workspace root's URI: `firstUri` (the first file's) without its `path` as the diff shows it. */
export function rootOf(firstUri: string, path: string): string | undefined {
  const encoded = path
    .split("/")
    .map((part) => encodeURIComponent(part))
    .join("/");
  for (const tail of [`/${path}`, `/${encoded}`]) {
    if (firstUri.endsWith(tail)) {
      return firstUri.slice(0, firstUri.length - tail.length);
    }
  }
  return undefined;
}
