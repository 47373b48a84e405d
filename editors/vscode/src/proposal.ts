// The text a proposed edit would produce, and the call arguments that produce the user's
// edited version of it. No `vscode` import: tested directly.

type Arguments = { [key: string]: unknown };

/** Where `needle` starts in `text`; `overlapping` also counts matches inside matches. */
function occurrences(text: string, needle: string, overlapping = false): number[] {
  const found: number[] = [];
  if (needle === "") {
    return found;
  }
  const step = overlapping ? 1 : needle.length;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + step)) {
    found.push(at);
  }
  return found;
}

/** A string argument, or undefined. */
function stringArg(args: Arguments, name: string): string | undefined {
  const value = args[name];
  return typeof value === "string" ? value : undefined;
}

/** Where `edit_file`'s old_text sits in `current`: [start, end) of every replaced match. */
export function editSpans(args: Arguments, current: string): Array<[number, number]> | undefined {
  const oldText = stringArg(args, "old_text");
  if (oldText === undefined || stringArg(args, "new_text") === undefined) {
    return undefined;
  }
  const found = occurrences(current, oldText);
  if (found.length === 0 || (found.length > 1 && args.replace_all !== true)) {
    return undefined; // the server would refuse this call; it is not what the diff shows
  }
  return found.map((start) => [start, start + oldText.length]);
}

/**
 * Applies a unified diff (as `tether serve` writes it) to `text`; undefined when a hunk's
 * context does not match. Lines compare without `\r`; CRLF text keeps CRLF.
 */
export function applyUnifiedDiff(text: string, diff: string): string | undefined {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const lines = text === "" ? [] : text.split("\n");
  const endsWithNewline = text === "" || text.endsWith("\n");
  if (text.endsWith("\n")) {
    lines.pop();
  }
  const source = lines.map((line) => line.replace(/\r$/, ""));
  const out: string[] = [];
  let cursor = 0;
  let finalNewline = endsWithNewline;
  const diffLines = diff.split("\n");
  let index = diffLines.findIndex((line) => line.startsWith("@@"));
  if (index === -1) {
    return undefined;
  }
  while (index < diffLines.length && diffLines[index].startsWith("@@")) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/.exec(diffLines[index]);
    if (header === null) {
      return undefined;
    }
    const oldCount = header[2] === undefined ? 1 : Number(header[2]);
    const oldStart = Number(header[1]) - (oldCount === 0 ? 0 : 1);
    if (oldStart < cursor) {
      return undefined;
    }
    out.push(...source.slice(cursor, oldStart));
    cursor = oldStart;
    index += 1;
    for (; index < diffLines.length && !diffLines[index].startsWith("@@"); index += 1) {
      const line = diffLines[index];
      const body = line.slice(1);
      if (line.startsWith("\\")) {
        // "\ No newline at end of file" after a '+' or ' ' line: the new text ends there.
        const previous = diffLines[index - 1];
        finalNewline = previous.startsWith("-") ? finalNewline : false;
      } else if (line.startsWith(" ") || line.startsWith("-")) {
        if (source[cursor] !== body) {
          return undefined;
        }
        cursor += 1;
        if (line.startsWith(" ")) {
          out.push(body);
        }
      } else if (line.startsWith("+")) {
        out.push(body);
        finalNewline = true;
      } else if (line !== "") {
        return undefined;
      }
    }
  }
  out.push(...source.slice(cursor));
  if (cursor < source.length) {
    finalNewline = endsWithNewline;
  }
  return out.length === 0 ? "" : out.join(eol) + (finalNewline ? eol : "");
}

/**
 * The whole new text of the file after the proposed call: from the arguments
 * (`write_file` content, `edit_file` replacement), else from the preview diff.
 */
export function proposedText(
  tool: string,
  args: Arguments,
  current: string,
  diff: string,
): string | undefined {
  if (tool === "write_file") {
    const content = stringArg(args, "content");
    if (content !== undefined) {
      return content;
    }
  }
  if (tool === "edit_file") {
    const spans = editSpans(args, current);
    const newText = stringArg(args, "new_text");
    if (spans !== undefined && newText !== undefined) {
      let result = current;
      for (const [start, end] of [...spans].reverse()) {
        result = result.slice(0, start) + newText + result.slice(end);
      }
      return result;
    }
  }
  return applyUnifiedDiff(current, diff);
}

function commonPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) {
    n += 1;
  }
  return n;
}

function commonSuffix(a: string, b: string, limit: number): number {
  let n = 0;
  while (n < limit && a[a.length - 1 - n] === b[b.length - 1 - n]) {
    n += 1;
  }
  return n;
}

/**
 * `edit_file` arguments turning `current` into `edited`: the changed region (covering
 * `mustCover`, the spans the original call replaced) widened to whole lines, then line by
 * line until it occurs exactly once in `current`, as the server requires.
 */
export function replacementArguments(
  args: Arguments,
  current: string,
  edited: string,
  mustCover: Array<[number, number]> = [],
): Arguments {
  const prefix = commonPrefix(current, edited);
  const suffix = commonSuffix(current, edited, Math.min(current.length, edited.length) - prefix);
  const lineStart = (at: number): number => (at <= 0 ? 0 : current.lastIndexOf("\n", at - 1) + 1);
  const lineEnd = (at: number): number => {
    const newline = current.indexOf("\n", at);
    return newline === -1 ? current.length : newline + 1;
  };
  let start = lineStart(Math.min(prefix, ...mustCover.map(([s]) => s)));
  let end = Math.max(current.length - suffix, ...mustCover.map(([, e]) => e));
  if (end <= start || current[end - 1] !== "\n") {
    end = lineEnd(Math.max(end, start));
  }
  const unique = (): boolean =>
    end > start && occurrences(current, current.slice(start, end), true).length === 1;
  while (!unique() && (start > 0 || end < current.length)) {
    start = lineStart(start - 1);
    end = lineEnd(end);
  }
  const changed: Arguments = {
    ...args,
    old_text: current.slice(start, end),
    new_text: edited.slice(start, edited.length - (current.length - end)),
  };
  if ("replace_all" in args) {
    changed.replace_all = false;
  }
  return changed;
}

/**
 * The arguments to send with `allow` when the user edited the proposed text, or
 * undefined when they did not (or the tool cannot carry the change).
 */
export function editedArguments(
  tool: string,
  args: Arguments,
  current: string,
  proposed: string,
  edited: string,
): Arguments | undefined {
  if (edited === proposed) {
    return undefined;
  }
  if (tool === "write_file") {
    return { ...args, content: edited };
  }
  if (tool === "edit_file" && current !== "") {
    return replacementArguments(args, current, edited, editSpans(args, current) ?? []);
  }
  return undefined;
}
