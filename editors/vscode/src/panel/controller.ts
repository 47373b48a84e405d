// The agent panel's logic: the webview's actions (run, cancel, answer an approval, undo,
// pick a session, revoke a rule) turned into requests, and the view model posted back.
// Everything it calls is passed in, so tests drive it without VS Code or a server.
import type {
  AgentCommandParams,
  AgentCommandResult,
  AgentEventParams,
  AgentRunResult,
  AgentRulesListResult,
  AgentUndoResult,
  Checkpoint,
  Rule,
  RunContext,
  SessionCommand,
  SessionInfo,
} from "../protocol";
import type { ContextPart } from "../context";
import { errorMessage } from "../protocolClient";
import type { Rewound } from "../rewind";
import type { Settled } from "../run";
import { explainError, type Fix } from "../userErrors";
import { PICKED_COMMANDS, commandList, parseCommand, undoneRun } from "./commands";
import { rewoundTo } from "./rewound";
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
  /** `agent/commands`: the server's session commands. */
  commands?(): Promise<SessionCommand[]>;
  /** `agent/command`: runs one on a session. */
  command?(params: AgentCommandParams): Promise<AgentCommandResult>;
  /** A pick from a list (the editor's quick pick); undefined: none picked. */
  pick?(title: string, items: readonly PickItem[]): Promise<string | undefined>;
  /** Back to before a run of a session (Tether: Rewind… with that run). */
  rewind?(sessionId: string, runId: string): Promise<void>;
  /** `agent/checkpoints`: a session's checkpoints (which run and step a typed /rewind went to). */
  checkpoints?(sessionId: string): Promise<Checkpoint[]>;
}

/** One entry of a pick: `value` is what picking it gives. */
export interface PickItem {
  readonly value: string;
  readonly label: string;
  readonly description?: string;
  readonly detail?: string;
}

/** A rule as the Rules list shows it, with where it is kept. */
function ruleLine(rule: Rule): string {
  return `${rule.decision} ${rule.tool}: ${rule.pattern} (${rule.scope ?? "session"})`;
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
  /** Runs in flight that started elsewhere (Tether: Run, Ask about Selection): the panel
   * shows them, so its Cancel ends them too, and its prompt waits for them. */
  private readonly elsewhere = new Set<string>();
  private sessionId: string | undefined;
  private sessionTitle: string | undefined;
  private sessions: SessionView[] = [];
  private rules: RuleView[] = [];
  /** The session commands the prompt box completes after `/` (the server's and the panel's). */
  private commands: SessionCommand[] = commandList([]);
  private commandsLoaded = false;
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
        const preview = params.preview as { diff?: unknown };
        const diff = typeof preview.diff === "string" ? preview.diff : undefined;
        this.model.awaiting(params.runId, params.callId, diff);
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
    if (runId !== this.activeRunId) {
      this.elsewhere.add(runId);
      this.schedule();
    }
  }

  /** A run ended (from here or the palette): its result, or why it could not run. */
  onSettled(runId: string, prompt: string, how: Settled): void {
    this.elsewhere.delete(runId);
    if ("refused" in how) {
      this.model.refused(runId, prompt, how.refused);
    } else {
      this.model.finish(how.result);
      if (!this.commandsLoaded) {
        void this.refreshCommands(); // the server is up now
      }
    }
    this.schedule();
  }

  /**
   * A rewind from this window (Tether: Rewind…, a run's Restore checkpoint): when it took the
   * conversation back, what the model no longer sees is marked rewound.
   */
  onRewound({ sessionId, checkpoint, result }: Rewound): void {
    if (result.conversation === true) {
      this.model.rewound(sessionId, checkpoint.runId, checkpoint.step);
      this.schedule();
    }
  }

  /** The active editor or its selection changed: the context chips follow. */
  editorChanged(): void {
    this.schedule();
  }

  /** The state the webview draws. */
  state(): PanelState {
    const undoRunId = this.model.undoTarget();
    return {
      runs: this.model.views(),
      approvals: this.approvals
        .pending()
        .map(({ params, alsoIn, progress }) => approvalView(params, alsoIn, this.displayPath, progress)),
      ...(this.inFlight() !== undefined ? { activeRunId: this.inFlight() } : {}),
      ...(this.sessionId !== undefined ? { sessionId: this.sessionId } : {}),
      ...(this.sessionTitle !== undefined ? { sessionTitle: this.sessionTitle } : {}),
      sessions: this.sessions,
      rules: this.rules,
      commands: this.commands,
      ...(undoRunId !== undefined ? { undoRunId } : {}),
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
        await Promise.all([this.refreshSessions(), this.refreshRules(), this.refreshCommands()]);
        return;
      case "run": {
        const text = message.prompt.trim();
        if (text.startsWith("/") && !this.commandsLoaded) {
          await this.refreshCommands();
        }
        const command = parseCommand(text, this.commands);
        return command !== undefined ? this.runCommand(text, command.name, command.argument) : this.run(text);
      }
      case "cancel": {
        const runId = this.inFlight();
        if (runId !== undefined) {
          await this.services.cancel(runId);
        }
        return;
      }
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
      case "restore": {
        const sessionId = this.model.sessionOf(message.runId);
        if (sessionId) {
          await this.services.rewind?.(sessionId, message.runId);
        }
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
      case "pickSession":
        return this.pickSession(message.sessionId);
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

  /** The run the panel's Cancel ends: its own, else one started elsewhere. */
  private inFlight(): string | undefined {
    return this.activeRunId ?? [...this.elsewhere][0];
  }

  private async run(prompt: string): Promise<void> {
    if (prompt === "" || this.inFlight() !== undefined) {
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

  /** Continues a listed session here (null: a new session, an empty conversation). */
  private async pickSession(sessionId: string | null): Promise<void> {
    const picked = this.sessions.find((s) => s.sessionId === sessionId);
    this.sessionId = picked?.sessionId;
    this.sessionTitle = picked?.title;
    this.model.showSession(picked?.sessionId); // New session: an empty conversation
    await this.refreshRules();
  }

  /**
   * A session command typed in the prompt box: its answer shows in the conversation. The
   * server's run with `agent/command` on this panel's session; /new and /resume change the
   * session the next prompt continues; /model and /effort without an argument and /resume
   * without one offer a pick.
   */
  private async runCommand(input: string, name: string, argument: string | undefined): Promise<void> {
    if (this.inFlight() !== undefined) {
      return;
    }
    try {
      const message = await this.commandAnswer(name, argument);
      if (message !== undefined) {
        this.model.note(input, message, this.sessionId);
      }
    } catch (error) {
      this.model.note(input, explainError(errorMessage(error)).message, this.sessionId, true);
    }
    this.schedule();
  }

  /** What the command did, for the conversation (undefined: the user picked nothing). */
  private async commandAnswer(name: string, argument: string | undefined): Promise<string | undefined> {
    if (name === "resume") {
      return this.resume(argument);
    }
    if (name === "rules") {
      await this.refreshRules();
      const own = this.rules.filter((view) => view.removable).map(({ rule }) => ruleLine(rule));
      const builtin = this.rules.length - own.length;
      return [
        ...(own.length > 0 ? own : ["no rules of yours"]),
        ...(builtin > 0 ? [`and ${builtin} built-in read-only rules (Rules, above, lists them)`] : []),
      ].join("\n");
    }
    const run = async (value: string | undefined): Promise<AgentCommandResult> => {
      if (this.services.command === undefined) {
        throw new Error("session commands need the Tether server");
      }
      return this.services.command({
        name,
        ...(this.sessionId !== undefined ? { sessionId: this.sessionId } : {}),
        ...(value !== undefined ? { argument: value } : {}),
      });
    };
    let result = await run(argument);
    const offer = PICKED_COMMANDS[name];
    if (offer !== undefined && argument === undefined && result.choices?.length && this.services.pick) {
      const shown = result.message; // "model: NAME (provider); …", "effort: LEVEL; …"
      const picked = await this.services.pick(
        offer.title,
        result.choices.map((choice) => ({
          value: choice,
          label: choice,
          ...(shown.startsWith(`${name}: ${choice}${offer.after}`) ? { description: "current" } : {}),
        })),
      );
      if (picked === undefined) {
        return result.message;
      }
      result = await run(picked);
    }
    if (result.newSession) {
      await this.pickSession(null);
    }
    const undone = name === "undo" ? undoneRun(result.message) : undefined;
    if (undone !== undefined) {
      this.model.undone(undone.runId, undone.note);
    }
    const rewound = name === "rewind" ? rewoundTo(result.message) : undefined;
    if (rewound !== undefined && this.sessionId !== undefined) {
      await this.markRewound(this.sessionId, rewound);
    }
    await this.refreshSessions();
    return result.message;
  }

  /** A /rewind typed here cut the conversation before `checkpointId`: its run and step marked. */
  private async markRewound(sessionId: string, checkpointId: string): Promise<void> {
    try {
      const checkpoint = (await this.services.checkpoints?.(sessionId))?.find((c) => c.id === checkpointId);
      if (checkpoint !== undefined) {
        this.model.rewound(sessionId, checkpoint.runId, checkpoint.step);
      }
    } catch (error) {
      this.notice = `Checkpoints: ${errorMessage(error)}`;
    }
  }

  /** /resume: the session named (its id, or the start of its title), else the one picked. */
  private async resume(argument: string | undefined): Promise<string | undefined> {
    await this.refreshSessions();
    if (this.sessions.length === 0) {
      return "no stored session to resume";
    }
    let sessionId: string | undefined;
    if (argument !== undefined) {
      const wanted = argument.toLowerCase();
      sessionId = (
        this.sessions.find((s) => s.sessionId === argument) ??
        this.sessions.find(
          (s) => s.sessionId.startsWith(argument) || s.title.toLowerCase().startsWith(wanted),
        )
      )?.sessionId;
      if (sessionId === undefined) {
        return `no stored session is ${argument}; /resume alone lists them`;
      }
    } else {
      sessionId = await this.services.pick?.(
        "Tether: continue which session?",
        this.sessions.map((s) => ({
          value: s.sessionId,
          label: s.title || s.sessionId,
          description: s.sessionId,
          detail: `${s.runs} run${s.runs === 1 ? "" : "s"} · ${s.updatedAt}${s.lastOutcome ? ` · ${s.lastOutcome}` : ""}`,
        })),
      );
      if (sessionId === undefined) {
        return undefined;
      }
    }
    await this.pickSession(sessionId);
    return `continuing: ${this.sessionTitle || sessionId}`;
  }

  private async refreshCommands(): Promise<void> {
    try {
      this.commands = commandList((await this.services.commands?.()) ?? []);
      this.commandsLoaded = this.services.commands !== undefined;
    } catch {
      // No server (it is said where a prompt runs): the panel's own commands, until a run ends.
    }
    this.schedule();
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
