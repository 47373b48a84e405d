// The agent panel's logic: the webview's actions (run, cancel, answer an approval, undo,
// pick a session, revoke a rule) turned into requests, and the view model posted back.
// Everything it calls is passed in, so tests drive it without VS Code or a server.
import type {
  AgentEventParams,
  AgentRunResult,
  AgentRulesListResult,
  AgentUndoResult,
  Rule,
  RunContext,
  SessionInfo,
} from "../protocol";
import type { ContextPart } from "../context";
import { errorMessage } from "../protocolClient";
import type { Settled } from "../run";
import type { Fix } from "../userErrors";
import { approvalView, contextChips, PanelModel } from "./model";
import { FromView, PanelState, RuleView, SessionView, ToView, parseFromView } from "./messages";
import type { SharedApprovals } from "./sharedApprovals";

/** The requests the panel makes (the extension wires them to `Runs` and the server). */
export interface PanelServices {
  /** `agent/run` through the extension's run path; `onRunId` gets the id before the request. */
  run(
    prompt: string,
    sessionId: string | undefined,
    onRunId: (runId: string) => void,
    leaveOut: ReadonlySet<ContextPart>,
  ): Promise<AgentRunResult | undefined>;
  cancel(runId: string): Promise<void>;
  undo(runId: string): Promise<AgentUndoResult>;
  sessions(): Promise<SessionInfo[]>;
  rules(sessionId: string | undefined): Promise<AgentRulesListResult>;
  removeRule(rule: Rule, sessionId: string | undefined): Promise<boolean>;
  /** The context a run started now would carry (the chips above the prompt box). */
  editorContext?(): RunContext | undefined;
  /** Workspace files whose path contains `query` (the prompt box's `@` completion). */
  files?(query: string): Promise<string[]>;
  /** Carries out the fix of a run's error (opens the setting, asks for the API key…). */
  fix?(fix: Fix): Promise<void>;
}

/** What undo did, in a line. */
export function undoNote(result: AgentUndoResult, displayPath: (uri: string) => string): string {
  const parts: string[] = [];
  const list = (uris: string[] | undefined): string => (uris ?? []).map(displayPath).join(", ");
  if (result.reverted?.length) {
    parts.push(`reverted ${list(result.reverted)}`);
  }
  for (const partial of result.partial ?? []) {
    const hunks = `${partial.revertedHunks} hunk${partial.revertedHunks === 1 ? "" : "s"}`;
    const kept = partial.keptHunks
      ? `${partial.keptHunks} changed since kept as they are`
      : "the changes made since kept";
    parts.push(`partly reverted ${displayPath(partial.uri)} (${hunks} put back, ${kept})`);
  }
  if (result.conflicts?.length) {
    parts.push(`left alone (changed since): ${list(result.conflicts)}`);
  }
  if (result.notFound?.length) {
    parts.push(`not found: ${list(result.notFound)}`);
  }
  if (result.refused?.length) {
    parts.push(`refused: ${list(result.refused)}`);
  }
  if (result.note) {
    parts.push(result.note);
  }
  return parts.length > 0 ? parts.join("; ") : "nothing to undo";
}

export class PanelController {
  private readonly model: PanelModel;
  private activeRunId: string | undefined;
  private sessionId: string | undefined;
  private sessionTitle: string | undefined;
  private sessions: SessionView[] = [];
  private rules: RuleView[] = [];
  private notice: string | undefined;
  private pendingPost: ReturnType<typeof setTimeout> | undefined;
  /** The parts of the editor's context the user left out of the next prompts. */
  private readonly leaveOut = new Set<ContextPart>();

  /**
   * @param post sends a message to the webview (dropped while there is none)
   * @param postDelayMs coalesces a burst of streamed words into one message
   */
  constructor(
    private readonly services: PanelServices,
    private readonly approvals: SharedApprovals,
    private readonly post: (message: ToView) => void,
    private readonly displayPath: (pathOrUri: string) => string,
    private readonly postDelayMs = 30,
  ) {
    this.model = new PanelModel(displayPath);
    approvals.onDidChange(() => {
      for (const { params } of approvals.pending()) {
        this.model.awaiting(params.runId, params.callId);
      }
      this.schedule();
    });
  }

  /** Every `agent/event` of the server. */
  onEvent(event: AgentEventParams): void {
    const changed = this.model.apply(event);
    if (event.kind === "run-finished") {
      void this.refreshRules(); // an allow-always may have stored one
    }
    if (changed) {
      this.schedule();
    }
  }

  /** A run started (from here or the palette) carries this context: shown on the run. */
  onRunStarted(runId: string, context: RunContext | undefined): void {
    this.model.carries(runId, context);
  }

  /** A run ended (from here or the palette): its result, or why it could not run. */
  onSettled(runId: string, prompt: string, how: Settled): void {
    if ("refused" in how) {
      this.model.refused(runId, prompt, how.refused);
    } else {
      this.model.finish(how.result);
    }
    this.schedule();
  }

  /** The active editor or its selection changed: the context chips follow. */
  editorChanged(): void {
    this.schedule();
  }

  /** The state the webview draws. */
  state(): PanelState {
    const undoRun = this.model.lastFinished();
    return {
      runs: this.model.views(),
      approvals: this.approvals
        .pending()
        .map(({ params, alsoIn, progress }) => approvalView(params, alsoIn, this.displayPath, progress)),
      ...(this.activeRunId !== undefined ? { activeRunId: this.activeRunId } : {}),
      ...(this.sessionId !== undefined ? { sessionId: this.sessionId } : {}),
      ...(this.sessionTitle !== undefined ? { sessionTitle: this.sessionTitle } : {}),
      sessions: this.sessions,
      rules: this.rules,
      ...(undoRun !== undefined && undoRun.undone === undefined ? { undoRunId: undoRun.runId } : {}),
      ...(this.notice !== undefined ? { notice: this.notice } : {}),
      context: contextChips(this.services.editorContext?.(), this.displayPath).map((chip) => ({
        ...chip,
        included: !this.leaveOut.has(chip.part) && !(chip.part === "selection" && this.leaveOut.has("file")),
      })),
    };
  }

  /** A message from the webview; malformed ones are ignored. */
  async handle(raw: unknown): Promise<void> {
    const message = parseFromView(raw);
    if (message === undefined) {
      return;
    }
    this.notice = undefined;
    try {
      await this.dispatch(message);
    } catch (error) {
      this.notice = errorMessage(error);
    }
    this.schedule();
  }

  /** Posts the state now (the webview became visible or asked for it). */
  flush(): void {
    if (this.pendingPost !== undefined) {
      clearTimeout(this.pendingPost);
      this.pendingPost = undefined;
    }
    this.post({ type: "state", state: this.state() });
  }

  private async dispatch(message: FromView): Promise<void> {
    switch (message.type) {
      case "ready":
        this.flush();
        await Promise.all([this.refreshSessions(), this.refreshRules()]);
        return;
      case "run":
        return this.run(message.prompt.trim());
      case "cancel":
        if (this.activeRunId !== undefined) {
          await this.services.cancel(this.activeRunId);
        }
        return;
      case "approve":
        if (!this.approvals.answer(message.callId, message.answer)) {
          this.notice = "That approval is no longer pending.";
        }
        return;
      case "reveal":
        if (!(await this.approvals.reveal(message.callId))) {
          this.notice = "That approval is no longer pending.";
        }
        return;
      case "undo": {
        const result = await this.services.undo(message.runId);
        this.model.undone(message.runId, undoNote(result, this.displayPath));
        return;
      }
      case "fix": {
        const fix = this.model.fixOf(message.runId);
        if (fix !== undefined) {
          await this.services.fix?.(fix);
        }
        return;
      }
      case "refreshSessions":
        return this.refreshSessions();
      case "pickSession": {
        const picked = this.sessions.find((s) => s.sessionId === message.sessionId);
        this.sessionId = picked?.sessionId;
        this.sessionTitle = picked?.title;
        this.model.showSession(picked?.sessionId); // New session: an empty conversation
        await this.refreshRules();
        return;
      }
      case "refreshRules":
        return this.refreshRules();
      case "toggleContext":
        if (!this.leaveOut.delete(message.part)) {
          this.leaveOut.add(message.part);
        }
        return;
      case "files": {
        const files = (await this.services.files?.(message.query)) ?? [];
        this.post({ type: "files", query: message.query, files });
        return;
      }
      case "revokeRule": {
        const removed = await this.services.removeRule(message.rule, this.sessionId);
        if (!removed) {
          this.notice = `No such rule any more: ${message.rule.tool} ${message.rule.pattern}`;
        }
        await this.refreshRules();
        return;
      }
    }
  }

  private async run(prompt: string): Promise<void> {
    if (prompt === "" || this.activeRunId !== undefined) {
      return;
    }
    let runId: string | undefined;
    try {
      const result = await this.services.run(
        prompt,
        this.sessionId,
        (id) => {
          runId = id;
          this.activeRunId = id;
          this.schedule();
        },
        new Set(this.leaveOut),
      );
      if (result !== undefined) {
        this.model.finish(result);
        this.sessionId = result.sessionId; // the next prompt continues the conversation
        this.sessionTitle ??= prompt;
      } else {
        if (runId !== undefined && this.model.running(runId)) {
          this.model.failed(runId, prompt, "the run failed; see the Tether output");
        }
        this.post({ type: "restorePrompt", prompt }); // nothing typed is lost
      }
    } finally {
      this.activeRunId = undefined;
    }
    await Promise.all([this.refreshSessions(), this.refreshRules()]);
  }

  private async refreshSessions(): Promise<void> {
    try {
      this.sessions = (await this.services.sessions()).map((s) => ({
        sessionId: s.sessionId,
        title: s.title,
        updatedAt: s.updatedAt,
        runs: s.runs,
        ...(s.lastOutcome ? { lastOutcome: s.lastOutcome } : {}),
      }));
    } catch (error) {
      this.notice = `Sessions: ${errorMessage(error)}`;
    }
    this.schedule();
  }

  private async refreshRules(): Promise<void> {
    try {
      const listed = await this.services.rules(this.sessionId);
      this.rules = listed.rules.map((rule) => ({ rule, removable: rule.scope !== "builtin" }));
    } catch (error) {
      this.notice = `Rules: ${errorMessage(error)}`;
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.pendingPost === undefined) {
      this.pendingPost = setTimeout(() => this.flush(), this.postDelayMs);
    }
  }
}
