// A change of several files (a rename's approval: one diff of every file, no `proposed`
// window) shown whole: each file as it is here against the file with its hunks applied, all
// in VS Code's multi-file diff editor (`vscode.changes`), else one diff editor per file.
// The right sides are `tether-proposal:` documents; a file that no longer holds the hunks'
// old lines is shown by its hunks alone, on both sides.
import * as vscode from "vscode";
import { applyHunks, hunkTexts, parseChangeSet, rootOf } from "./changeSet";
import type { AgentApproveParams, DiffPreview } from "./protocol";
import { ProposalFiles } from "./proposalFiles";

export interface ShownFile {
  /** As the diff names it (relative to the workspace's first folder, else absolute). */
  readonly path: string;
  /** The file changed; undefined when it cannot be found here. */
  readonly target: vscode.Uri | undefined;
  readonly left: vscode.Uri;
  readonly right: vscode.Uri;
  /** Whether `left` is a document of ours (the hunks alone), not the file. */
  readonly ownLeft: boolean;
  /** What `right` was given: the text proposed. */
  readonly proposed: string;
}

/** The files of the change, each with its two sides written to `files`. */
export async function prepareChangeSet(
  params: AgentApproveParams,
  preview: DiffPreview,
  files: ProposalFiles,
  currentText: (uri: vscode.Uri) => Promise<string | undefined>,
): Promise<ShownFile[]> {
  const parsed = parseChangeSet(preview.diff);
  if (parsed.length === 0) {
    throw new Error("the proposed change has no file to show");
  }
  const root = rootOf(preview.uri, parsed[0].path) ?? vscode.workspace.workspaceFolders?.[0]?.uri.toString();
  const shown: ShownFile[] = [];
  for (const [index, file] of parsed.entries()) {
    const target =
      index === 0
        ? vscode.Uri.parse(preview.uri)
        : file.path.startsWith("/")
          ? vscode.Uri.file(file.path)
          : root === undefined
            ? undefined
            : vscode.Uri.joinPath(vscode.Uri.parse(root), ...file.path.split("/"));
    const current = target === undefined ? undefined : await currentText(target);
    const after = current === undefined ? undefined : applyHunks(current, file);
    // The file's own path: the multi-file diff editor marks a pair of different paths "renamed".
    const name = (target?.path ?? file.path).replace(/^\/+/, "") || "proposal";
    const call = index === 0 ? params.callId : `${params.callId}-${index}`;
    const right = ProposalFiles.uriFor(params.runId, call, name);
    if (target !== undefined && after !== undefined) {
      files.setText(right, after);
      shown.push({ path: file.path, target, left: target, right, ownLeft: false, proposed: after });
    } else {
      const { before, after: hunks } = hunkTexts(file);
      const left = ProposalFiles.uriFor(params.runId, `${call}-before`, name);
      files.setText(left, before);
      files.setText(right, hunks);
      shown.push({ path: file.path, target, left, right, ownLeft: true, proposed: hunks });
    }
  }
  return shown;
}

/** Opens the change: the multi-file diff editor, else (an older VS Code) a diff editor per file. */
export async function openChangeSet(params: AgentApproveParams, shown: readonly ShownFile[]): Promise<void> {
  const title = `${params.title} (proposed by Tether)`;
  try {
    await vscode.commands.executeCommand(
      "vscode.changes",
      title,
      shown.map((file) => [file.target ?? file.right, file.left, file.right]),
    );
  } catch {
    for (const file of shown) {
      await vscode.commands.executeCommand("vscode.diff", file.left, file.right, `${file.path}: ${title}`, {
        preview: false,
      });
    }
  }
}

/** The right sides of the diffs in the active tab (a multi-file diff editor's), if any. */
export function activeDiffs(): vscode.Uri[] {
  const input = vscode.window.tabGroups.activeTabGroup?.activeTab?.input as
    { textDiffs?: ReadonlyArray<{ modified?: vscode.Uri }> } | undefined;
  return (input?.textDiffs ?? []).flatMap((diff) => (diff.modified === undefined ? [] : [diff.modified]));
}

/** Whether a tab shows one of `uris` (as a text, a diff's right side, or in a multi-file diff). */
export function showsAny(
  input: unknown,
  uris: readonly vscode.Uri[],
  same: (a: vscode.Uri, b: vscode.Uri) => boolean,
): boolean {
  const has = (uri: vscode.Uri | undefined): boolean => uri !== undefined && uris.some((u) => same(u, uri));
  if (input instanceof vscode.TabInputTextDiff) {
    return has(input.modified);
  }
  if (input instanceof vscode.TabInputText) {
    return has(input.uri);
  }
  const multi = input as { textDiffs?: ReadonlyArray<{ modified?: vscode.Uri }> } | undefined;
  return (multi?.textDiffs ?? []).some((diff) => has(diff.modified));
}
