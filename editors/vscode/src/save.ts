// `agent/saveDocuments`: save the listed open documents so that a command the agent runs
// next sees on disk what the editor shows.
import * as vscode from "vscode";
import type { AgentSaveDocumentsParams, AgentSaveDocumentsResult } from "./protocol";
import type { SaveGuard } from "./saveGuard";

/** What saving needs of a document (vscode.TextDocument has it). */
export interface SavableDocument {
  readonly isDirty: boolean;
  readonly isClosed: boolean;
  save(): Thenable<boolean>;
}

/**
 * Saves each listed document that is open and dirty. `saved` lists the URIs (as the server
 * sent them) whose disk copy now matches the editor: saved now, or not dirty to begin with.
 * A URI with no open document is left out: the editor holds nothing to save for it.
 */
export async function saveDocuments(
  uris: readonly string[],
  find: (uri: string) => SavableDocument | undefined,
): Promise<AgentSaveDocumentsResult> {
  const saved: string[] = [];
  for (const uri of uris) {
    const doc = find(uri);
    if (doc === undefined || doc.isClosed) {
      continue;
    }
    try {
      if (!doc.isDirty || (await doc.save())) {
        saved.push(uri);
      }
    } catch {
      // A failed save (read-only file, full disk) is reported by leaving the URI out.
    }
  }
  return { saved };
}

/** The handler of `agent/saveDocuments` over VS Code's open documents; `guard` keeps the user's typing unsaved. */
export function saveOpenDocuments(
  params: AgentSaveDocumentsParams,
  guard?: SaveGuard,
): Promise<AgentSaveDocumentsResult> {
  const find = (uri: string): vscode.TextDocument | undefined => {
    // Compare parsed forms: the server and VS Code may escape the same path differently.
    const wanted = vscode.Uri.parse(uri).toString();
    return vscode.workspace.textDocuments.find((doc) => doc.uri.toString() === wanted);
  };
  return saveDocuments(guard === undefined ? params.uris : guard.filter(params.uris), find);
}
