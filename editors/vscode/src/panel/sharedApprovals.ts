// One `agent/approve` answered from either place: the panel's approval card or the editor's
// own UI (diff editor title, status bar, modal dialog). Whichever answers first wins and the
// other closes: a panel answer withdraws the editor's UI (its cancellation token), an editor
// answer removes the card. The server's `$/cancelRequest` and the run's end close both.
// A command asked while the panel is visible is asked in the panel only: VS Code's modal
// dialog would block the panel's buttons.
import * as path from "path";
import * as vscode from "vscode";
import { buildAnswer, commandAnswer } from "../answers";
import type { Choice } from "../answers";
import type { AgentApproveParams, AgentApproveResult, CommandPreview, DiffPreview } from "../protocol";
import { ProposalFiles } from "../proposalFiles";
import { PickedRule, suggestedPatterns, withPickedRule } from "../rulePicks";
import type { ApprovalView, PanelAnswer } from "./messages";

export const WITHDRAWN_FEEDBACK = "the approval was cancelled";

/** What the panel needs of the editor's approval UI (the `Approvals` class). */
export interface EditorApprovals {
  approve(params: AgentApproveParams, token: vscode.CancellationToken): Promise<AgentApproveResult>;
  runEnded(runId: string): void;
  /** Decides the diff approval shown in `uri` (the proposal document); false if none. */
  decide(choice: Choice, uri?: vscode.Uri, picked?: PickedRule): boolean;
  /** Inline review's progress for the call; undefined when it is not reviewed in its file. */
  reviewProgress?(runId: string, callId: string): string | undefined;
  onDidChangeReview?(listener: () => void): vscode.Disposable;
}

interface Open {
  readonly params: AgentApproveParams;
  readonly alsoIn: ApprovalView["alsoIn"];
  /** Withdraws the editor's UI (or the panel-only wait). */
  readonly withdraw: vscode.CancellationTokenSource;
  /** Settles the request with the panel's answer. */
  answer(result: AgentApproveResult): void;
}

function isCommand(preview: DiffPreview | CommandPreview): preview is CommandPreview {
  return preview.kind === "command" || typeof (preview as CommandPreview).command === "string";
}

/** The proposal document the diff editor shows for this approval (as `Approvals` names it). */
export function proposalUri(params: AgentApproveParams, preview: DiffPreview): vscode.Uri {
  const name = path.posix.basename(vscode.Uri.parse(preview.uri).path) || "proposal";
  return ProposalFiles.uriFor(params.runId, params.callId, name);
}

export class SharedApprovals {
  private readonly open = new Map<string, Open>();
  private readonly listeners = new Set<() => void>();

  /** @param panelVisible whether the panel can be clicked now (then commands are asked there only) */
  constructor(
    private readonly editor: EditorApprovals,
    private readonly panelVisible: () => boolean,
  ) {
    editor.onDidChangeReview?.(() => this.changed());
  }

  /** The handler of `agent/approve`. */
  async approve(params: AgentApproveParams, token: vscode.CancellationToken): Promise<AgentApproveResult> {
    const command = isCommand(params.preview);
    const panelOnly = command && this.panelVisible();
    const withdraw = new vscode.CancellationTokenSource();
    const cancelled = token.onCancellationRequested(() => withdraw.cancel());
    let answer!: (result: AgentApproveResult) => void;
    const fromPanel = new Promise<AgentApproveResult>((resolve) => (answer = resolve));
    const entry: Open = {
      params,
      alsoIn: panelOnly ? "none" : command ? "dialog" : "diff editor",
      withdraw,
      answer,
    };
    this.open.set(params.callId, entry);
    this.changed();
    if (token.isCancellationRequested) {
      withdraw.cancel();
    }
    try {
      if (panelOnly) {
        const withdrawn = new Promise<AgentApproveResult>((resolve) => {
          withdraw.token.onCancellationRequested(() =>
            resolve(buildAnswer("deny", { feedback: WITHDRAWN_FEEDBACK })),
          );
          if (withdraw.token.isCancellationRequested) {
            resolve(buildAnswer("deny", { feedback: WITHDRAWN_FEEDBACK }));
          }
        });
        return await Promise.race([fromPanel, withdrawn]);
      }
      const inEditor = this.editor.approve(params, withdraw.token);
      return await Promise.race([inEditor, fromPanel]);
    } finally {
      cancelled.dispose();
      this.open.delete(params.callId);
      this.changed();
    }
  }

  /**
   * The user answered on the panel's card. An edit allowed goes through the diff editor's
   * own decision (it sends the text as the user left it there); everything else is answered
   * here and the editor's UI withdrawn. False if that approval is no longer pending.
   */
  answer(callId: string, reply: PanelAnswer): boolean {
    const entry = this.open.get(callId);
    if (entry === undefined) {
      return false;
    }
    const { params } = entry;
    const preview = params.preview;
    // Only a rule the server offered for this call is sent (the webview is not trusted).
    const offered = reply.rule !== undefined && suggestedPatterns(params).includes(reply.rule.pattern);
    const picked: PickedRule | undefined =
      reply.choice !== "allow-always" ? undefined : offered ? { rule: reply.rule } : {};
    if (!isCommand(preview)) {
      if (
        reply.choice !== "deny" &&
        entry.alsoIn === "diff editor" &&
        this.editor.decide(reply.choice, proposalUri(params, preview), picked)
      ) {
        return true;
      }
      entry.answer(withPickedRule(buildAnswer(reply.choice, { feedback: reply.feedback }), picked));
    } else {
      const result = commandAnswer(reply.choice, params, reply.command, reply.feedback);
      // The offered rules are for the command shown, not for one the user changed.
      const unchanged = reply.command === undefined || reply.command === preview.command;
      entry.answer(unchanged ? withPickedRule(result, picked) : result);
    }
    entry.withdraw.cancel();
    return true;
  }

  /** Edit in Diff Editor: brings the approval's diff tab (editable right side) to the front. */
  async reveal(callId: string): Promise<boolean> {
    const entry = this.open.get(callId);
    const preview = entry?.params.preview;
    if (entry === undefined || preview === undefined || isCommand(preview)) {
      return false;
    }
    const proposal = proposalUri(entry.params, preview).toString();
    const tab = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === proposal);
    if (tab === undefined) {
      return false;
    }
    const input = tab.input as vscode.TabInputTextDiff;
    await vscode.commands.executeCommand("vscode.diff", input.original, input.modified, tab.label);
    return true;
  }

  /** The run ended (`run-finished`): nothing it asked is waited for any more. */
  runEnded(runId: string): void {
    this.editor.runEnded(runId);
    for (const entry of this.open.values()) {
      if (entry.params.runId === runId) {
        entry.withdraw.cancel();
      }
    }
  }

  /** The approvals pending, oldest first; an edit under inline review is "in the file", with its progress. */
  pending(): Array<{ params: AgentApproveParams; alsoIn: ApprovalView["alsoIn"]; progress?: string }> {
    return [...this.open.values()].map(({ params, alsoIn }) => {
      const progress =
        alsoIn === "diff editor" ? this.editor.reviewProgress?.(params.runId, params.callId) : undefined;
      return progress === undefined ? { params, alsoIn } : { params, alsoIn: "file" as const, progress };
    });
  }

  /** Called whenever an approval opens or closes. */
  onDidChange(listener: () => void): vscode.Disposable {
    this.listeners.add(listener);
    return new vscode.Disposable(() => this.listeners.delete(listener));
  }

  private changed(): void {
    for (const listener of [...this.listeners]) {
      listener();
    }
  }
}
