// `agent/approve` in VS Code: a proposed edit opens in the diff editor (current text on the
// left, the editable proposal on the right) with labelled Allow / Allow Always / Deny in the
// editor title and a status bar item; a command is shown with its folder in a modal dialog.
// Everything shown for an approval goes away when it is decided, withdrawn by the server
// (`$/cancelRequest`) or its run ends.
import * as path from "path";
import * as vscode from "vscode";
import {
  Choice,
  CHOICE_LABELS,
  SHELL_TOOL,
  buildAnswer,
  choiceOf,
  commandAnswer,
  diffAnswer,
} from "./answers";
import type { AgentApproveParams, AgentApproveResult, CommandPreview, DiffPreview } from "./protocol";
import { PickedRule, RulePick, rulePicks, withPickedRule } from "./rulePicks";
import { ProposalTexts, editedWindow, proposalTexts } from "./proposal";
import { ProposalFiles } from "./proposalFiles";
import { ShownFile, activeDiffs, openChangeSet, prepareChangeSet, showsAny } from "./changeSetView";
import type { InlineReviews } from "./review/inlineReview";
import type { Review } from "./review/review";
import type { SaveGuard } from "./saveGuard";
import { splitTitle } from "./titles";

const EMPTY_RANGE = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

export const PENDING_CONTEXT_KEY = "tether.approvalPending";
export const EDIT_COMMAND_LABEL = "Edit Command…";
export const PICK_COMMAND = "tether.approval.pick";
const WITHDRAWN_NOTE = "that approval was withdrawn (the run was cancelled or ended); nothing ran";

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
  readonly runId: string;
  readonly title: string;
  /** The proposal shown in the diff editor; undefined for a command (a modal dialog). */
  readonly proposal: vscode.Uri | undefined;
  /** The file a diff approval would change (its editor's title buttons decide it too). */
  readonly target?: vscode.Uri;
  /** Every proposal of a change of several files (the first is `proposal`). */
  readonly proposals?: readonly vscode.Uri[];
  /**
   * Undefined: nobody decided (withdrawn, the run ended, or the extension is going away).
   * `picked`: the allow-always rule already chosen (the panel's card); else it is asked.
   */
  choose(choice: Choice | undefined, picked?: PickedRule): void;
  /** Moves a diff approval to inline review in the file; false (and says why) when it cannot. */
  reviewInFile?(): Promise<boolean>;
}

export const REVIEW_IN_FILE_COMMAND = "tether.approval.reviewInFile";
export const ALL_REJECTED_FEEDBACK = "the user rejected every change of this edit";
const CANNOT_REVIEW_NOTE = "Tether: this edit can only be reviewed in the diff editor";
const EDITED_PROPOSAL_NOTE =
  "Tether: you changed the proposal in the diff editor; allow or deny it there, or undo your changes first";

export const WITHDRAWN_FEEDBACK = "the approval was cancelled";

/** Allowing a change of several files the user edited in the diff editor: it cannot be sent. */
export const CHANGE_SET_EDITED_FEEDBACK =
  "the user changed the proposed text in the diff editor, which cannot be sent for a change of several files; nothing was applied";
const CHANGE_SET_REVIEW_NOTE = "Tether: a change of several files can only be reviewed in the diff editor";

/** Allow Always when it opens a pick of the server's rules (the ellipsis: more to choose). */
export const ALLOW_ALWAYS_PICK_LABEL = `${CHOICE_LABELS["allow-always"]}…`;

/** The modal's buttons; Deny is its close affordance, so Esc and the dialog's X deny too. */
export function commandItems(offersRules: boolean, editable: boolean): vscode.MessageItem[] {
  return [
    { title: CHOICE_LABELS.allow },
    { title: offersRules ? ALLOW_ALWAYS_PICK_LABEL : CHOICE_LABELS["allow-always"] },
    ...(editable ? [{ title: EDIT_COMMAND_LABEL }] : []),
    { title: CHOICE_LABELS.deny, isCloseAffordance: true },
  ];
}

/**
 * Which rule "allow always" stores, picked among the server's offers; undefined: the user
 * dismissed the pick (nothing decided yet). No offers: plain allow-always, as before.
 */
async function pickRule(
  params: AgentApproveParams,
  token: vscode.CancellationToken,
): Promise<PickedRule | undefined> {
  const picks = rulePicks(params);
  if (picks.length === 0) {
    return {};
  }
  const picked = await vscode.window.showQuickPick<RulePick & vscode.QuickPickItem>(
    picks,
    {
      title: `Tether: ${params.title} — allow always`,
      placeHolder: "What to allow without asking, and where",
    },
    token,
  );
  if (picked === undefined || token.isCancellationRequested) {
    return undefined;
  }
  return picked.rule === undefined ? {} : { rule: picked.rule };
}

/** The dialog's title once the user changed the command: it names what will run. */
export function commandTitle(title: string, original: string, command: string): string {
  if (command === original) {
    return title;
  }
  return title.includes(original) ? title.replace(original, command) : `Run ${command}`;
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

/** What the user decided on a diff approval, with the allow-always rule when one was picked. */
interface Decided {
  readonly choice: Choice | undefined;
  readonly picked?: PickedRule;
}

export class Approvals implements vscode.Disposable {
  private readonly pending: Pending[] = [];
  private statusItem: vscode.StatusBarItem | undefined;

  constructor(
    private readonly files: ProposalFiles,
    private readonly saves?: SaveGuard,
    private readonly reviews?: InlineReviews,
    /** Whether an edit starts in inline review in the file (else in the diff editor). */
    private readonly inlineFirst: () => boolean = () => false,
  ) {}

  /** The handler of `agent/approve`. */
  approve(params: AgentApproveParams, token: vscode.CancellationToken): Promise<AgentApproveResult> {
    const preview = params.preview;
    if (isCommandPreview(preview)) {
      return this.approveCommand(params, preview, token);
    }
    // No window to edit: a change of several files (a rename), shown whole (`changeSets`).
    return preview.proposed === undefined || preview.proposed === null
      ? this.approveChangeSet(params, preview, token)
      : this.approveDiff(params, preview, token);
  }

  /** The editor-title buttons: decide the approval shown in `uri`'s editor, else the oldest. */
  decide(choice: Choice, uri?: vscode.Uri, picked?: PickedRule): boolean {
    const entry = this.shownOrOldest(uri);
    entry?.choose(choice, picked);
    return entry !== undefined;
  }

  /** Inline review's progress of a diff approval ("1 of 2 accepted"); undefined when not reviewed in its file. */
  reviewProgress(runId: string, callId: string): string | undefined {
    return this.reviews?.progress(`${runId}/${callId}`);
  }

  /** An inline review started, ended or moved on. */
  onDidChangeReview(listener: () => void): vscode.Disposable {
    return this.reviews?.onDidChange(listener) ?? new vscode.Disposable(() => undefined);
  }

  /** "Review in File": the diff approval in view (else the oldest) goes to inline review. */
  async reviewInFile(uri?: vscode.Uri): Promise<boolean> {
    return (await this.shownOrOldest(uri)?.reviewInFile?.()) ?? false;
  }

  /** The status bar item: Allow / Allow Always / Deny for the approval in view, else the oldest. */
  async pick(): Promise<void> {
    const entry = this.shownOrOldest(undefined);
    if (entry === undefined) {
      return;
    }
    const labels = [CHOICE_LABELS.allow, CHOICE_LABELS["allow-always"], CHOICE_LABELS.deny];
    const label = await vscode.window.showQuickPick(labels, { title: `Tether: ${entry.title}` });
    const choice = choiceOf(label);
    if (choice !== undefined && this.pending.includes(entry)) {
      entry.choose(choice);
    }
  }

  /** The run ended (`run-finished`): nothing it asked is waited for any more. */
  runEnded(runId: string): void {
    for (const entry of this.pending.filter((p) => p.runId === runId)) {
      entry.choose(undefined);
    }
  }

  get pendingCount(): number {
    return this.pending.length;
  }

  dispose(): void {
    for (const entry of [...this.pending]) {
      entry.choose(undefined);
    }
    this.statusItem?.dispose();
    this.statusItem = undefined;
  }

  private shownOrOldest(uri: vscode.Uri | undefined): Pending | undefined {
    const shown = uri ?? vscode.window.activeTextEditor?.document.uri;
    const diffs = this.pending.filter((p) => p.proposal !== undefined);
    const matches = (uri: vscode.Uri | undefined): boolean =>
      shown !== undefined && uri !== undefined && sameUri(uri, shown);
    // A multi-file diff editor in front: the change whose proposals it shows.
    const inFront = activeDiffs();
    return (
      diffs.find((p) => matches(p.proposal) || (p.proposals ?? []).some(matches)) ??
      diffs.find((p) => matches(p.target)) ??
      diffs.find((p) => (p.proposals ?? []).some((u) => inFront.some((f) => sameUri(u, f)))) ??
      diffs[0]
    );
  }

  private async approveDiff(
    params: AgentApproveParams,
    preview: DiffPreview,
    token: vscode.CancellationToken,
  ): Promise<AgentApproveResult> {
    const shown = await this.prepareProposal(params, preview);
    let started: Review | undefined;
    const reviewId = `${params.runId}/${params.callId}`;
    // The review in progress: none once it stopped (the user typed in its lines).
    const review = (): Review | undefined => (this.reviews?.has(reviewId) ? started : undefined);
    const openDiff = (): Promise<unknown> => this.openDiff(params, shown);
    const reviewInFile = async (): Promise<boolean> => {
      if (review() !== undefined) {
        return true;
      }
      if (this.reviews === undefined || shown.ownLeft) {
        vscode.window.setStatusBarMessage(CANNOT_REVIEW_NOTE, 5000);
        return false;
      }
      if (editedWindow(shown.texts, this.proposalText(shown.right) ?? shown.texts.right) !== undefined) {
        void vscode.window.showWarningMessage(EDITED_PROPOSAL_NOTE);
        return false;
      }
      const proposed = preview.proposed!; // a window that fits the file (not ownLeft) has one
      await this.close(shown.right);
      started = await this.reviews.start(
        reviewId,
        {
          uri: shown.left,
          startLine: proposed.range.start.line,
          baseText: proposed.baseText,
          text: proposed.text,
          hunks: proposed.hunks,
        },
        {
          finish: (verdict) => this.decide(verdict.decision, shown.right),
          openDiff: () => void openDiff(),
        },
      );
      return true;
    };
    const ask = (): Promise<Decided> =>
      this.ask(params, shown.right, token, reviewInFile, vscode.Uri.parse(preview.uri));
    try {
      const choice = ask();
      if (!(this.inlineFirst() && (await reviewInFile()))) {
        await openDiff();
      }
      let decided = await choice;
      // Allow Always asks which rule to keep; dismissing that pick leaves the edit waiting.
      while (decided.choice === "allow-always" && decided.picked === undefined) {
        const picked = await pickRule(params, token);
        decided = picked !== undefined ? { choice: "allow-always", picked } : await ask();
      }
      const answer = await this.answerDiff(params, preview, shown, decided.choice, review());
      return withPickedRule(answer, decided.picked);
    } finally {
      this.reviews?.end(reviewId);
      await this.close(shown.right);
      this.files.remove(shown.right);
      if (shown.ownLeft) {
        this.files.remove(shown.left);
      }
    }
  }

  /** A change of several files: each file in the multi-file diff editor, allowed or denied whole. */
  private async approveChangeSet(
    params: AgentApproveParams,
    preview: DiffPreview,
    token: vscode.CancellationToken,
  ): Promise<AgentApproveResult> {
    const shown = await prepareChangeSet(params, preview, this.files, (uri) => this.currentText(uri));
    const proposals = shown.map((file) => file.right);
    // What the panel's card names the approval by (`proposalUri`): the first file's name.
    const name = path.posix.basename(vscode.Uri.parse(preview.uri).path) || "proposal";
    const handle = ProposalFiles.uriFor(params.runId, params.callId, name);
    const reviewInFile = async (): Promise<boolean> => {
      vscode.window.setStatusBarMessage(CHANGE_SET_REVIEW_NOTE, 5000);
      return false;
    };
    const ask = (): Promise<Decided> =>
      this.ask(params, handle, token, reviewInFile, vscode.Uri.parse(preview.uri), proposals);
    try {
      const choice = ask();
      await openChangeSet(params, shown);
      let decided = await choice;
      while (decided.choice === "allow-always" && decided.picked === undefined) {
        const picked = await pickRule(params, token);
        decided = picked !== undefined ? { choice: "allow-always", picked } : await ask();
      }
      return withPickedRule(await this.answerChangeSet(params, shown, decided.choice), decided.picked);
    } finally {
      await this.closeAll(proposals);
      for (const file of shown) {
        this.files.remove(file.right);
        if (file.ownLeft) {
          this.files.remove(file.left);
        }
      }
    }
  }

  /** Allowed as proposed (no text can be sent back for several files), or denied. */
  private async answerChangeSet(
    params: AgentApproveParams,
    shown: readonly ShownFile[],
    choice: Choice | undefined,
  ): Promise<AgentApproveResult> {
    if (choice === undefined) {
      return buildAnswer("deny", { feedback: WITHDRAWN_FEEDBACK });
    }
    if (choice === "deny") {
      return buildAnswer("deny", { feedback: await askFeedback(params.title) });
    }
    const lf = (text: string): string => text.replace(/\r\n?/g, "\n");
    const edited = shown.some(
      (file) => lf(this.proposalText(file.right) ?? file.proposed) !== lf(file.proposed),
    );
    if (edited) {
      void vscode.window.showWarningMessage(`Tether: ${CHANGE_SET_EDITED_FEEDBACK}.`);
      return buildAnswer("deny", { feedback: CHANGE_SET_EDITED_FEEDBACK });
    }
    // The user's own unsaved typing in those files must stay unsaved after the change.
    for (const file of shown) {
      if (file.target !== undefined) {
        this.saves?.protect(params.callId, file.target.toString());
      }
    }
    return buildAnswer(choice);
  }

  /** The answer to a diff approval: from the hunks decided inline, else from the diff's right side. */
  private async answerDiff(
    params: AgentApproveParams,
    preview: DiffPreview,
    shown: Proposal,
    choice: Choice | undefined,
    review: Review | undefined,
  ): Promise<AgentApproveResult> {
    if (choice === undefined) {
      return buildAnswer("deny", { feedback: WITHDRAWN_FEEDBACK });
    }
    if (choice === "deny") {
      // Every hunk rejected one by one says it all; a Deny button asks why.
      const rejectedAll = review?.decided === true;
      return buildAnswer("deny", {
        feedback: rejectedAll ? ALL_REJECTED_FEEDBACK : await askFeedback(params.title),
      });
    }
    // The user's own text in the diff editor (opened with Open Diff, say) says most exactly
    // what they want; else the changes accepted inline.
    let edited = editedWindow(shown.texts, this.proposalText(shown.right) ?? shown.texts.right);
    if (review !== undefined && edited === undefined) {
      // Allow with hunks left undecided accepts them; the rejected ones stay out.
      const verdict = review.verdict(true);
      if (verdict.decision === "deny") {
        return buildAnswer("deny", { feedback: ALL_REJECTED_FEEDBACK });
      }
      edited = "editedText" in verdict ? verdict.editedText : undefined;
    }
    if (edited === null) {
      void vscode.window.showWarningMessage(`Tether: ${OUTSIDE_WINDOW_FEEDBACK}.`);
      return buildAnswer("deny", { feedback: OUTSIDE_WINDOW_FEEDBACK });
    }
    // The user's own unsaved typing in that file must stay unsaved after the agent's edit.
    this.saves?.protect(params.callId, vscode.Uri.parse(preview.uri).toString());
    return diffAnswer(choice, edited);
  }

  /**
   * The diff editor's sides: the file as the server sees it (or an empty document for a new
   * file) against the proposed text in an editable `tether-proposal:` document — the whole
   * file when the window still fits the text here, else the window alone on both sides.
   */
  private async prepareProposal(params: AgentApproveParams, preview: DiffPreview): Promise<Proposal> {
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
    return { left, right, ownLeft, texts };
  }

  private async openDiff(params: AgentApproveParams, shown: Proposal): Promise<void> {
    const title = `${params.title} (proposed by Tether)`;
    await vscode.commands.executeCommand("vscode.diff", shown.left, shown.right, title, { preview: false });
  }

  private async approveCommand(
    params: AgentApproveParams,
    preview: CommandPreview,
    token: vscode.CancellationToken,
  ): Promise<AgentApproveResult> {
    // A modal cannot be closed from here: a withdrawn one answers deny whatever is clicked.
    let withdrawn = false;
    const entry: Pending = {
      runId: params.runId,
      title: params.title,
      proposal: undefined,
      choose: (choice) => {
        if (choice === undefined) {
          withdrawn = true;
          this.forget(entry);
        }
      },
    };
    const cancellation = token.onCancellationRequested(() => entry.choose(undefined));
    this.remember(entry);
    try {
      let command = preview.command;
      for (;;) {
        // The server's rules were offered for the command it showed, not for one the user changed.
        const offersRules = command === preview.command && rulePicks(params).length > 0;
        const { headline, reason } = splitTitle(params.title);
        const prompt = params.tool === SHELL_TOOL ? "$ " : ""; // an MCP call is no shell command
        const picked = await vscode.window.showWarningMessage(
          `Tether: ${commandTitle(headline, preview.command, command)}`,
          { modal: true, detail: `${reason ? `${reason}\n\n` : ""}${prompt}${command}\n\nin ${preview.cwd}` },
          ...commandItems(offersRules, params.tool === SHELL_TOOL),
        );
        if (withdrawn || token.isCancellationRequested) {
          vscode.window.setStatusBarMessage(`Tether: ${WITHDRAWN_NOTE}`, 5000);
          return buildAnswer("deny", { feedback: WITHDRAWN_FEEDBACK });
        }
        if (picked?.title === EDIT_COMMAND_LABEL) {
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
        if (picked?.title === ALLOW_ALWAYS_PICK_LABEL) {
          const rule = await pickRule(params, token);
          if (rule === undefined) {
            continue; // dismissed: the dialog again
          }
          return withPickedRule(commandAnswer("allow-always", params, command), rule);
        }
        // Deny is the close affordance: a dismissed dialog (undefined) is a deny as well.
        const choice = choiceOf(picked?.title) ?? "deny";
        const feedback = choice === "deny" ? await askFeedback(params.title) : undefined;
        return commandAnswer(choice, params, command, feedback);
      }
    } finally {
      cancellation.dispose();
      this.forget(entry);
    }
  }

  /** Waits for an editor-title button, the status bar's pick, the server's withdrawal or the run's end. */
  private ask(
    params: AgentApproveParams,
    proposal: vscode.Uri,
    token: vscode.CancellationToken,
    reviewInFile?: () => Promise<boolean>,
    target?: vscode.Uri,
    proposals?: readonly vscode.Uri[],
  ): Promise<Decided> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (choice: Choice | undefined, picked?: PickedRule): void => {
        if (settled) {
          return;
        }
        settled = true;
        cancellation.dispose();
        this.forget(entry);
        resolve({ choice, picked });
      };
      const entry: Pending = {
        runId: params.runId,
        title: params.title,
        proposal,
        target,
        proposals,
        choose: finish,
        reviewInFile,
      };
      const cancellation = token.onCancellationRequested(() => finish(undefined));
      this.remember(entry);
      if (token.isCancellationRequested) {
        finish(undefined);
      }
    });
  }

  private remember(entry: Pending): void {
    this.pending.push(entry);
    this.showState();
  }

  private forget(entry: Pending): void {
    const index = this.pending.indexOf(entry);
    if (index >= 0) {
      this.pending.splice(index, 1);
      this.showState();
    }
  }

  /** The title buttons' context key and the status bar item follow the diff approvals pending. */
  private showState(): void {
    const diffs = this.pending.filter((p) => p.proposal !== undefined).length;
    void vscode.commands.executeCommand("setContext", PENDING_CONTEXT_KEY, diffs > 0);
    if (diffs === 0) {
      this.statusItem?.hide();
      return;
    }
    this.statusItem ??= vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 1000);
    this.statusItem.text = `$(report) Tether: ${diffs === 1 ? "1 edit" : `${diffs} edits`} to approve`;
    this.statusItem.tooltip = "Allow or deny in the diff editor's title, or click here";
    this.statusItem.command = PICK_COMMAND;
    this.statusItem.show();
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

  private close(proposal: vscode.Uri): Promise<void> {
    return this.closeAll([proposal]);
  }

  /** Closes the tabs showing these proposals (diffs, texts, a multi-file diff). */
  private async closeAll(proposals: readonly vscode.Uri[]): Promise<void> {
    for (const open of vscode.workspace.textDocuments.filter((doc) =>
      proposals.some((p) => sameUri(doc.uri, p)),
    )) {
      if (open.isDirty) {
        await open.save(); // into memory only, so closing asks nothing
      }
    }
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => showsAny(tab.input, proposals, sameUri));
    if (tabs.length > 0) {
      await vscode.window.tabGroups.close(tabs);
    }
  }
}
