// A test-only extension of the real-VS-Code harness, never shipped: pyright's language server
// (npm `pyright`, from the harness cache; TETHER_E2E_PYRIGHT is its langserver.index.js) run
// through vscode-languageclient, so that real Python diagnostics reach VS Code's Problems
// view, and from there Tether's `agent/diagnostics` answer. It also renames a Rust module as
// rust-analyzer does: the `mod` line's text edit and the module's file renamed, one
// WorkspaceEdit (no rust-analyzer here).
import * as vscode from "vscode";
import { LanguageClient, TransportKind } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

/** A module's rename: its name where asked, and its file `NAME.rs` beside the document. */
function renameModule(
  document: vscode.TextDocument,
  position: vscode.Position,
  newName: string,
): vscode.WorkspaceEdit | undefined {
  const word = document.getWordRangeAtPosition(position);
  if (word === undefined) {
    return undefined;
  }
  const folder = vscode.Uri.joinPath(document.uri, "..");
  const edit = new vscode.WorkspaceEdit();
  edit.replace(document.uri, word, newName);
  edit.renameFile(
    vscode.Uri.joinPath(folder, `${document.getText(word)}.rs`),
    vscode.Uri.joinPath(folder, `${newName}.rs`),
  );
  return edit;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.languages.registerRenameProvider({ language: "rust" }, { provideRenameEdits: renameModule }),
  );
  const server = process.env.TETHER_E2E_PYRIGHT;
  if (!server) {
    void vscode.window.showErrorMessage("tether-e2e-pyright: TETHER_E2E_PYRIGHT is not set");
    return;
  }
  const run = { module: server, transport: TransportKind.stdio };
  client = new LanguageClient(
    "tetherE2ePyright",
    "Pyright (Tether e2e)",
    { run, debug: run },
    { documentSelector: [{ scheme: "file", language: "python" }] },
  );
  await client.start();
}

export function deactivate(): Thenable<void> | undefined {
  return client?.stop();
}
