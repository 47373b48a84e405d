// The agent panel in VS Code: a webview view in the "Tether" activity bar container. The
// controller holds the state, so a hidden or re-created view draws it again on "ready";
// retainContextWhenHidden keeps what the user typed in it while hidden.
import * as vscode from "vscode";
import type { AgentEventParams } from "../protocol";
import { RecentFiles, currentContext } from "../context";
import type { Runs } from "../run";
import type { TetherProtocol } from "../protocolClient";
import { performFix } from "../fixes";
import { onDidRewind } from "../rewind";
import { PanelController } from "./controller";
import { makeNonce, panelHtml } from "./html";
import type { ToView } from "./messages";
import { EditorApprovals, SharedApprovals } from "./sharedApprovals";

export const PANEL_VIEW_ID = "tether.panel";
export const OPEN_PANEL_COMMAND = "tether.openPanel";

/**
 * A URI or absolute path relative to the workspace; a relative path (the model's) as it is.
 * The panel and the transcript name files with it.
 */
export function displayPath(pathOrUri: string): string {
  if (/^[a-z][\w+.-]*:/i.test(pathOrUri)) {
    return vscode.workspace.asRelativePath(vscode.Uri.parse(pathOrUri), false);
  }
  return pathOrUri.startsWith("/")
    ? vscode.workspace.asRelativePath(vscode.Uri.file(pathOrUri), false)
    : pathOrUri;
}

/** Workspace files whose path contains `query` (case-insensitive), shortest first, at most 30. */
async function workspaceFiles(query: string): Promise<string[]> {
  const found = await vscode.workspace.findFiles("**/*", "**/{node_modules,.git,.venv,__pycache__}/**", 2000);
  const wanted = query.toLowerCase();
  return found
    .map((uri) => vscode.workspace.asRelativePath(uri, false))
    .filter((name) => name.toLowerCase().includes(wanted))
    .sort((a, b) => a.length - b.length || a.localeCompare(b))
    .slice(0, 30);
}

export class TetherPanel implements vscode.WebviewViewProvider {
  readonly approvals: SharedApprovals;
  private view: vscode.WebviewView | undefined;
  private controller: PanelController | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    editorApprovals: EditorApprovals,
  ) {
    this.approvals = new SharedApprovals(editorApprovals, () => this.view?.visible ?? false);
  }

  /** Whether the panel is on screen now. */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** Wires the panel to the run path and the server; returns what to dispose. */
  connect(runs: Runs, connect: () => Promise<TetherProtocol>, recent?: RecentFiles): vscode.Disposable[] {
    this.controller = new PanelController(
      {
        run: (prompt, sessionId, onRunId) => runs.start(prompt, sessionId, { onRunId, inPanel: true }),
        cancel: async (runId) => {
          await (await connect()).cancel(runId);
        },
        undo: async (runId) => (await connect()).undo(runId),
        sessions: async () => (await (await connect()).sessions(20)).sessions,
        rules: async (sessionId) => (await connect()).rulesList(sessionId),
        removeRule: async (rule, sessionId) => (await (await connect()).rulesRemove(rule, sessionId)).removed,
        editorContext: () => currentContext(recent),
        files: async (query) => workspaceFiles(query),
        fix: performFix,
        commands: async () => (await (await connect()).commands()).commands,
        command: async (params) => (await connect()).command(params),
        rewind: async (sessionId, runId) => {
          await vscode.commands.executeCommand("tether.rewind", { sessionId, runId });
        },
        checkpoints: async (sessionId) => (await (await connect()).checkpoints(sessionId)).checkpoints,
        pick: async (title, items) =>
          (
            await vscode.window.showQuickPick(
              items.map((item) => ({ ...item })),
              { title, matchOnDescription: true, matchOnDetail: true },
            )
          )?.value,
      },
      this.approvals,
      (message) => this.post(message),
      displayPath,
    );
    const editorChanged = (): void => this.controller?.editorChanged();
    return [
      runs.onStarted((runId, context) => this.controller?.onRunStarted(runId, context)),
      runs.onSettled((runId, prompt, how) => this.controller?.onSettled(runId, prompt, how)),
      onDidRewind((rewound) => this.controller?.onRewound(rewound)),
      vscode.window.onDidChangeActiveTextEditor(editorChanged),
      vscode.window.onDidChangeTextEditorSelection(editorChanged),
      vscode.window.registerWebviewViewProvider(PANEL_VIEW_ID, this, {
        webviewOptions: { retainContextWhenHidden: true },
      }),
      vscode.commands.registerCommand(OPEN_PANEL_COMMAND, () =>
        vscode.commands.executeCommand(`${PANEL_VIEW_ID}.focus`),
      ),
    ];
  }

  /** Every `agent/event`. */
  onEvent(event: AgentEventParams): void {
    this.controller?.onEvent(event);
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = panelHtml({
      cspSource: view.webview.cspSource,
      nonce: makeNonce(),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, "panel.js")).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, "panel.css")).toString(),
    });
    view.webview.onDidReceiveMessage((message: unknown) => this.controller?.handle(message));
    view.onDidChangeVisibility(() => {
      if (view.visible) {
        this.controller?.flush();
      }
    });
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
      }
    });
  }

  private post(message: ToView): void {
    void this.view?.webview.postMessage(message);
  }
}
