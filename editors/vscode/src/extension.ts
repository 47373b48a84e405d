// Tether for VS Code. activate builds the pieces and registers the commands (the server
// starts with the first command, as activation happens on one); deactivate stops it.
import * as vscode from "vscode";
import { Approvals, PICK_COMMAND, REVIEW_IN_FILE_COMMAND } from "./approvals";
import { Choice } from "./answers";
import { RecentFiles, askAboutSelection } from "./context";
import { JobViews, SHOW_JOB_OUTPUT_COMMAND } from "./jobs";
import { setApiKey } from "./keys";
import { errorMessage } from "./protocolClient";
import { ProposalFiles } from "./proposalFiles";
import { InlineReviews } from "./review/inlineReview";
import { SaveGuard } from "./saveGuard";
import { Runs } from "./run";
import { ServerNotFoundError, TetherServer } from "./server";
import { Transcript } from "./transcript";
import { TetherPanel, displayPath } from "./panel/view";
import { rewindEndpoint, rewindTarget } from "./rewindCommand";
import { rewindSession } from "./rewind";

let server: TetherServer | undefined;

const APPROVAL_COMMANDS: ReadonlyArray<[string, Choice]> = [
  ["tether.approval.allow", "allow"],
  ["tether.approval.allowAlways", "allow-always"],
  ["tether.approval.deny", "deny"],
];

async function reportStartFailure(tether: TetherServer, error: unknown): Promise<void> {
  const action = error instanceof ServerNotFoundError ? "Open Settings" : "Show Server Log";
  const picked = await vscode.window.showErrorMessage(`Tether: ${errorMessage(error)}`, action);
  if (picked === "Open Settings") {
    // In a remote window the settings editor opens on its Remote tab for a machine setting.
    const settingsCommand = vscode.env.remoteName
      ? "workbench.action.openRemoteSettings"
      : "workbench.action.openSettings";
    await vscode.commands.executeCommand(settingsCommand, "tether.serverPath");
  } else if (picked === "Show Server Log") {
    tether.showLog();
  }
}

export function activate(context: vscode.ExtensionContext): void {
  const channel = vscode.window.createOutputChannel("Tether");
  const transcript = new Transcript(channel, displayPath);
  const files = new ProposalFiles();
  const saves = new SaveGuard(
    () => vscode.workspace.textDocuments.filter((doc) => doc.isDirty).map((doc) => doc.uri.toString()),
    (message) => transcript.note(`  ${message}`), // the status bar gets the run's outcome next
    (uri) => vscode.Uri.parse(uri).toString(),
  );
  const reviews = new InlineReviews();
  const inlineFirst = (): boolean =>
    vscode.workspace.getConfiguration("tether").get("reviewEdits") === "inline";
  const approvals = new Approvals(files, saves, reviews, inlineFirst);
  // The agent panel answers approvals too: the server asks through it.
  const panel = new TetherPanel(context.extensionUri, approvals);
  const tether = new TetherServer(context.secrets, transcript, panel.approvals, saves, (event) =>
    panel.onEvent(event),
  );
  server = tether;
  const recent = new RecentFiles();
  const runs = new Runs(
    () => tether.ensureStarted(),
    transcript,
    channel,
    recent,
    () => panel.visible,
    () => tether.lastError(),
  );
  const startFailed = (error: unknown): Promise<void> => reportStartFailure(tether, error);
  const jobViews = new JobViews(() => tether.ensureStarted());
  const command = (id: string, run: (...args: unknown[]) => unknown): vscode.Disposable =>
    vscode.commands.registerCommand(id, run);

  context.subscriptions.push(
    channel,
    files,
    ProposalFiles.register(files),
    reviews,
    approvals,
    tether,
    recent,
    ...panel.connect(runs, () => tether.ensureStarted(), recent),
    command("tether.runPrompt", () => runs.runPrompt()),
    command("tether.askAboutSelection", () =>
      askAboutSelection((prompt, given) => runs.start(prompt, undefined, { context: given }), recent),
    ),
    command("tether.cancel", () => runs.cancel()),
    command("tether.continueSession", () => runs.continueSession()),
    command("tether.rewind", (target) =>
      rewindSession(
        rewindEndpoint(() => tether.ensureStarted()),
        ...rewindTarget(target, runs),
      ),
    ),
    command("tether.showLog", () => channel.show()),
    jobViews,
    command(SHOW_JOB_OUTPUT_COMMAND, () => jobViews.show()),
    command("tether.restartServer", () => tether.restart().catch(startFailed)),
    command("tether.setApiKey", async () => {
      if ((await setApiKey(context.secrets)) && tether.running) {
        if (runs.book.inFlight.size > 0) {
          void vscode.window.showInformationMessage(
            "Tether: the key is used once the server restarts (Tether: Restart Server).",
          );
        } else {
          await tether.restart().catch(startFailed);
        }
      }
    }),
    command(PICK_COMMAND, () => approvals.pick()),
    command(REVIEW_IN_FILE_COMMAND, (resource) =>
      approvals.reviewInFile(resource instanceof vscode.Uri ? resource : undefined),
    ),
    ...APPROVAL_COMMANDS.map(([id, choice]) =>
      command(id, (resource) =>
        approvals.decide(choice, resource instanceof vscode.Uri ? resource : undefined),
      ),
    ),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("tether.serverPath")) {
        if (tether.running) {
          void tether.restart().catch(startFailed);
        }
      } else if (event.affectsConfiguration("tether")) {
        void tether.configure();
      }
    }),
  );
  tether.ensureStarted().catch(startFailed);
}

export function deactivate(): Thenable<void> | undefined {
  const stopping = server?.stop();
  server = undefined;
  return stopping;
}
