// `agent/approve` in VS Code: a proposed edit opens in the diff editor (current text on the
// left, the editable proposal on the right) with Allow / Allow Always / Deny in the editor
// title and in a notification; a command is shown with its folder in a modal dialog.
import * as path from "path";
import * as vscode from "vscode";
import { Choice, CHOICE_LABELS, buildAnswer, choiceOf, commandAnswer, diffAnswer } from "./answers";
import type { AgentApproveParams, AgentApproveResult, CommandPreview, DiffPreview } from "./protocol";
import { ProposalTexts, editedWindow, proposalTexts } from "./proposal";
import { ProposalFiles } from "./proposalFiles";

const EMPTY_RANGE = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

export const PENDING_CONTEXT_KEY = "tether.approvalPending";
export const EDIT_COMMAND_LABEL = "Edit Command…";

interface Proposal {
  readonly left: vscode.Uri;
  readonly right: vscode.Uri;
  /** Whether `left` is a document of ours (a new file, or the window alone). */
  readonly ownLeft: boolean;
  readonly texts: ProposalTexts;
}

export const OUTSIDE_WINDOW_FEEDBACK =
  "the user changed lines outside the proposed change, which cannot be sent; nothing was applied";

interface Pending {
  readonly proposal: vscode.Uri;
  /** Undefined: nobody decided (cancelled, or the extension is going away). */
  choose(choice: Choice | undefined): void;
}

function isCommandPreview(preview: DiffPreview | CommandPreview): preview is CommandPreview {
  return preview.kind === "command" || typeof (preview as CommandPreview).command === "string";
}

function sameUri(a: vscode.Uri, b: vscode.Uri): boolean {
  return a.toString() === b.toString();
}

async function askFeedback(title: string): Promise<string | undefined> {
  return vscode.window.showInputBox({
    title: `Deny: ${title}`,
    prompt: "Optional: tell the agent why, or what to do instead (Enter to send none)",
    ignoreFocusOut: true,
  });
}

export class Approvals implements vscode.Disposable {
  private readonly pending: Pending[] = [];

  constructor(private readonly files: ProposalFiles) {}

  /** The handler of `agent/approve`. */
  approve(params: AgentApproveParams, token: vscode.CancellationToken): Promise<AgentApproveResult> {
    const preview = params.preview;
    return isCommandPreview(preview)
      ? this.approveCommand(params, preview, token)
      : this.approveDiff(params, preview, token);
  }

  /** The editor-title buttons: decide the approval shown in `uri`'s editor, else the oldest. */
  decide(choice: Choice, uri?: vscode.Uri): boolean {
    const shown = uri ?? vscode.window.activeTextEditor?.document.uri;
    const entry =
      this.pending.find((p) => shown !== undefined && sameUri(p.proposal, shown)) ?? this.pending[0];
    entry?.choose(choice);
    return entry !== undefined;
  }

  get pendingCount(): number {
    return this.pending.length;
  }

  dispose(): void {
    for (const entry of [...this.pending]) {
      entry.choose(undefined);
    }
  }

  private async approveDiff(
    params: AgentApproveParams,
    preview: DiffPreview,
    token: vscode.CancellationToken,
  ): Promise<AgentApproveResult> {
    const shown = await this.showProposal(params, preview);
    try {
      const choice = await this.ask(params, shown.right, token);
      if (choice === undefined) {
        return buildAnswer("deny", { feedback: "the approval was cancelled" });
      }
      if (choice === "deny") {
        return buildAnswer("deny", { feedback: await askFeedback(params.title) });
      }
      const edited = editedWindow(shown.texts, this.proposalText(shown.right) ?? shown.texts.right);
      if (edited === null) {
        void vscode.window.showWarningMessage(`Tether: ${OUTSIDE_WINDOW_FEEDBACK}.`);
        return buildAnswer("deny", { feedback: OUTSIDE_WINDOW_FEEDBACK });
      }
      return diffAnswer(choice, edited);
    } finally {
      await this.close(shown.right);
      this.files.remove(shown.right);
      if (shown.ownLeft) {
        this.files.remove(shown.left);
      }
    }
  }

  /**
   * Opens the diff editor: the file as the server sees it (or an empty document for a new
   * file) against the proposed text in an editable `tether-proposal:` document — the whole
   * file when the window still fits the text here, else the window alone on both sides.
   */
  private async showProposal(params: AgentApproveParams, preview: DiffPreview): Promise<Proposal> {
    const target = vscode.Uri.parse(preview.uri);
    const current = await this.currentText(target);
    const proposed = preview.proposed ?? { range: EMPTY_RANGE, text: "", baseText: "" };
    const texts = proposalTexts(current, proposed);
    const name = path.posix.basename(target.path) || "proposal";
    const right = ProposalFiles.uriFor(params.runId, params.callId, name);
    const ownLeft = current === undefined || texts.left !== current;
    const left = ownLeft ? ProposalFiles.uriFor(params.runId, `${params.callId}-before`, name) : target;
    this.files.setText(right, texts.right);
    if (ownLeft) {
      this.files.setText(left, texts.left);
    }
    const title = `${params.title} (proposed by Tether)`;
    await vscode.commands.executeCommand("vscode.diff", left, right, title, { preview: false });
    return { left, right, ownLeft, texts };
  }

  private async approveCommand(
    params: AgentApproveParams,
    preview: CommandPreview,
    token: vscode.CancellationToken,
  ): Promise<AgentApproveResult> {
    let command = preview.command;
    for (;;) {
      const label = await vscode.window.showWarningMessage(
        `Tether: ${params.title}`,
        { modal: true, detail: `$ ${command}\n\nin ${preview.cwd}` },
        CHOICE_LABELS.allow,
        CHOICE_LABELS["allow-always"],
        EDIT_COMMAND_LABEL,
        CHOICE_LABELS.deny,
      );
      if (token.isCancellationRequested) {
        return buildAnswer("deny", { feedback: "the approval was cancelled" });
      }
      if (label === EDIT_COMMAND_LABEL) {
        const edited = await vscode.window.showInputBox({
          title: `Command to run in ${preview.cwd}`,
          value: command,
          ignoreFocusOut: true,
        });
        if (edited !== undefined && edited.trim() !== "") {
          command = edited; // shown again, so the user confirms what will run
        }
        continue;
      }
      const choice = choiceOf(label) ?? "deny"; // Esc / Cancel on the dialog denies
      const feedback = label === CHOICE_LABELS.deny ? await askFeedback(params.title) : undefined;
      return commandAnswer(choice, params, command, feedback);
    }
  }

  /** Waits for the notification, an editor-title button or the server's cancellation. */
  private ask(
    params: AgentApproveParams,
    proposal: vscode.Uri,
    token: vscode.CancellationToken,
  ): Promise<Choice | undefined> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (choice: Choice | undefined): void => {
        if (settled) {
          return;
        }
        settled = true;
        cancellation.dispose();
        this.pending.splice(this.pending.indexOf(entry), 1);
        void this.updateContext();
        resolve(choice);
      };
      const entry: Pending = { proposal, choose: finish };
      const cancellation = token.onCancellationRequested(() => finish(undefined));
      this.pending.push(entry);
      void this.updateContext();
      void vscode.window
        .showInformationMessage(
          `Tether: ${params.title}`,
          CHOICE_LABELS.allow,
          CHOICE_LABELS["allow-always"],
          CHOICE_LABELS.deny,
        )
        .then(
          (label) => {
            const choice = choiceOf(label);
            if (choice !== undefined) {
              finish(choice); // a closed notification leaves the title buttons to decide
            }
          },
          () => undefined, // likewise a failed one
        );
      if (token.isCancellationRequested) {
        finish(undefined);
      }
    });
  }

  private updateContext(): Thenable<unknown> {
    return vscode.commands.executeCommand("setContext", PENDING_CONTEXT_KEY, this.pending.length > 0);
  }

  /** What the server computed the edit on: the open buffer, else the disk; undefined: new file. */
  private async currentText(uri: vscode.Uri): Promise<string | undefined> {
    const open = vscode.workspace.textDocuments.find((doc) => sameUri(doc.uri, uri));
    if (open !== undefined) {
      return open.getText();
    }
    try {
      return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    } catch {
      return undefined;
    }
  }

  /** The proposal as the user left it, unsaved edits included. */
  private proposalText(uri: vscode.Uri): string | undefined {
    const open = vscode.workspace.textDocuments.find((doc) => sameUri(doc.uri, uri));
    return open?.getText() ?? this.files.text(uri);
  }

  private async close(proposal: vscode.Uri): Promise<void> {
    const open = vscode.workspace.textDocuments.find((doc) => sameUri(doc.uri, proposal));
    if (open?.isDirty) {
      await open.save(); // into memory only, so closing asks nothing
    }
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter(
        (tab) =>
          (tab.input instanceof vscode.TabInputTextDiff && sameUri(tab.input.modified, proposal)) ||
          (tab.input instanceof vscode.TabInputText && sameUri(tab.input.uri, proposal)),
      );
    if (tabs.length > 0) {
      await vscode.window.tabGroups.close(tabs);
    }
  }
}
