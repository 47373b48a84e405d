// A test-only extension of the real-VS-Code harness, never shipped: pyright's language server
// (npm `pyright`, from the harness cache; TETHER_E2E_PYRIGHT is its langserver.index.js) run
// through vscode-languageclient, so that real Python diagnostics reach VS Code's Problems
// view, and from there Tether's `agent/diagnostics` answer.
import * as vscode from "vscode";
import { LanguageClient, TransportKind } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(): Promise<void> {
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
