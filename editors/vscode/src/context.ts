// `agent/run`'s `context`: what the user is looking at when a run starts from VS Code — the
// active file, its selection and text, the visible lines, and the open files (most recently
// used first). `runContext` and `RecentFiles` are plain functions of what they are given.
import * as vscode from "vscode";
import type { Range, RunContext } from "./protocol";

/** Documents whose URI means something to the server (not output panes, proposals, …). */
const CONTEXT_SCHEMES = new Set(["file", "untitled"]);
/** Open files sent at most (the most recently used). */
export const MAX_OPEN_FILES = 20;

interface RangeLike {
  readonly start: { readonly line: number; readonly character: number };
  readonly end: { readonly line: number; readonly character: number };
}

export interface EditorLike {
  readonly document: { readonly uri: vscode.Uri; getText?(range?: vscode.Range): string };
  readonly selection: RangeLike & { readonly isEmpty: boolean };
  readonly visibleRanges?: readonly RangeLike[];
}

function plainRange(range: RangeLike): Range {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

/**
 * The context of a run: the active editor (if it shows a file), its selection and selected
 * text when something is selected, its first visible range, and `openFiles` when any.
 */
export function runContext(
  editor: EditorLike | undefined,
  openFiles: readonly string[] = [],
): RunContext | undefined {
  const context: RunContext = {};
  if (editor !== undefined && CONTEXT_SCHEMES.has(editor.document.uri.scheme)) {
    context.uri = editor.document.uri.toString();
    if (!editor.selection.isEmpty) {
      context.selection = plainRange(editor.selection);
      const text = editor.document.getText?.(editor.selection as vscode.Range);
      if (text !== undefined) {
        context.selectedText = text;
      }
    }
    const visible = editor.visibleRanges?.[0];
    if (visible !== undefined) {
      context.visibleRange = plainRange(visible);
    }
  }
  if (openFiles.length > 0) {
    context.openFiles = openFiles.slice(0, MAX_OPEN_FILES);
  }
  return Object.keys(context).length > 0 ? context : undefined;
}

/** The files of the open tabs, most recently active first (then in tab order). */
export class RecentFiles implements vscode.Disposable {
  /** URIs, most recent last. */
  private readonly used: string[] = [];
  private readonly subscription: vscode.Disposable;

  constructor() {
    this.subscription = vscode.window.onDidChangeActiveTextEditor((editor) => {
      if (editor !== undefined) {
        this.touch(editor.document.uri.toString());
      }
    });
    const active = vscode.window.activeTextEditor;
    if (active !== undefined) {
      this.touch(active.document.uri.toString());
    }
  }

  touch(uri: string): void {
    const index = this.used.indexOf(uri);
    if (index >= 0) {
      this.used.splice(index, 1);
    }
    this.used.push(uri);
  }

  /** `tabUris` (the open tabs' files, in tab order) ordered by recent use, files only. */
  order(tabUris: readonly string[]): string[] {
    const files = [...new Set(tabUris)].filter((uri) => CONTEXT_SCHEMES.has(uri.slice(0, uri.indexOf(":"))));
    const rank = (uri: string): number => {
      const index = this.used.indexOf(uri);
      return index < 0 ? -1 : index;
    };
    // Stable sort: tabs never active in this window keep their tab order, after the others.
    return files
      .map((uri, position) => ({ uri, position, rank: rank(uri) }))
      .sort((a, b) => b.rank - a.rank || a.position - b.position)
      .map((entry) => entry.uri);
  }

  /** The open tabs' files, most recently used first. */
  openFiles(): string[] {
    const uris: string[] = [];
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        if (tab.input instanceof vscode.TabInputText) {
          uris.push(tab.input.uri.toString());
        } else if (tab.input instanceof vscode.TabInputTextDiff) {
          uris.push(tab.input.modified.toString());
        }
      }
    }
    return this.order(uris);
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

/** The context of a run started now. */
export function currentContext(recent?: RecentFiles): RunContext | undefined {
  return runContext(vscode.window.activeTextEditor, recent?.openFiles() ?? []);
}

/** Tether: Ask about Selection: a prompt about the selected text, run with it as context. */
export async function askAboutSelection(
  start: (prompt: string, context: RunContext | undefined) => Promise<unknown>,
  recent?: RecentFiles,
): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || editor.selection.isEmpty) {
    void vscode.window.showInformationMessage("Tether: select some text first, then ask about it.");
    return;
  }
  const context = currentContext(recent);
  const { start: from, end: to } = editor.selection;
  const name = vscode.workspace.asRelativePath(editor.document.uri, false);
  const lines = from.line === to.line ? `line ${from.line + 1}` : `lines ${from.line + 1}–${to.line + 1}`;
  const prompt = await vscode.window.showInputBox({
    title: "Tether: Ask about Selection",
    prompt: `About ${lines} of ${name} (the selected text goes along)`,
    ignoreFocusOut: true,
  });
  if (prompt !== undefined && prompt.trim() !== "") {
    await start(prompt.trim(), context);
  }
}

/** The parts of a run's context a user can leave out (the panel's chips). */
export type ContextPart = "file" | "selection" | "openFiles";

/** `context` without the parts left out (leaving the file out leaves its selection out too). */
export function withoutParts(
  context: RunContext | undefined,
  leaveOut: ReadonlySet<ContextPart>,
): RunContext | undefined {
  if (context === undefined) {
    return undefined;
  }
  const kept: RunContext = { ...context };
  if (leaveOut.has("file")) {
    delete kept.uri;
    delete kept.visibleRange;
  }
  if (leaveOut.has("file") || leaveOut.has("selection")) {
    delete kept.selection;
    delete kept.selectedText;
  }
  if (leaveOut.has("openFiles")) {
    delete kept.openFiles;
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}
