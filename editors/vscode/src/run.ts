// Tether: Run, Cancel and Continue Session. A run shows as a cancellable notification fed by
// the server's work-done progress on a token we choose; its transcript streams to "Tether".
// One surface per run: a run started from the agent panel, or while the panel is visible,
// is followed there — no notification, the Output panel left closed, progress in the status
// bar only.
import { randomUUID } from "crypto";
import * as vscode from "vscode";
import { ContextPart, RecentFiles, currentContext, withoutParts } from "./context";
import type { AgentRunResult, RunContext } from "./protocol";
import { TetherProtocol, errorMessage } from "./protocolClient";
import { steps } from "./events";
import { performFix, showExplained } from "./fixes";
import { ServerNotFoundError } from "./server";
import { Transcript } from "./transcript";
import { Explained, explainError, fixLabel } from "./userErrors";
import { shownLine } from "./display";

export interface SessionInfo {
  readonly sessionId: string;
  readonly firstPrompt: string;
  readonly lastPrompt: string;
  readonly runs: number;
}

/** The runs in flight and the sessions this window has run, newest session first. */
export class RunBook {
  readonly inFlight = new Map<string, string>(); // runId → prompt
  private readonly sessionsById = new Map<string, SessionInfo>();

  record(result: AgentRunResult, prompt: string): void {
    const known = this.sessionsById.get(result.sessionId);
    this.sessionsById.delete(result.sessionId); // re-insert: Map order is recency
    this.sessionsById.set(result.sessionId, {
      sessionId: result.sessionId,
      firstPrompt: known?.firstPrompt ?? prompt,
      lastPrompt: prompt,
      runs: (known?.runs ?? 0) + 1,
    });
  }

  get sessions(): SessionInfo[] {
    return [...this.sessionsById.values()].reverse();
  }
}

/** How a run ended for the editor: its result, or why it could not run at all. */
export type Settled =
  | { readonly result: AgentRunResult }
  /** Refused (no provider, no key, settings that cannot be used…) or no server to run it. */
  | { readonly refused: Explained };

/** The connection's words when the server process went away under a request. */
const CONNECTION_LOST =
  /connection got disposed|connection is closed|client is not running|connection.*(closed|disposed)/i;

/**
 * Why a run could not start, in the user's words, with its fix; `serverError`: what the
 * server process said as it stopped, if it did (the connection only says it went away).
 */
export function refusal(error: unknown, serverError?: string): Explained {
  if (error instanceof ServerNotFoundError) {
    return { message: error.message, fix: { kind: "setting", key: "serverPath" } };
  }
  const message = errorMessage(error);
  if (CONNECTION_LOST.test(message) && serverError !== undefined) {
    const why = explainError(serverError);
    return { ...why, message: `The Tether server stopped. ${why.message}` };
  }
  return explainError(message);
}

export class Runs {
  readonly book = new RunBook();
  private readonly started = new Set<(runId: string, context: RunContext | undefined) => void>();
  private readonly settled = new Set<(runId: string, prompt: string, how: Settled) => void>();

  /** Every run as it starts, with the context it carries (the panel shows it on the run). */
  onStarted(listener: (runId: string, context: RunContext | undefined) => void): vscode.Disposable {
    this.started.add(listener);
    return new vscode.Disposable(() => this.started.delete(listener));
  }

  /** Every run as it ends: its result, or why it could not run (the panel shows either). */
  onSettled(listener: (runId: string, prompt: string, how: Settled) => void): vscode.Disposable {
    this.settled.add(listener);
    return new vscode.Disposable(() => this.settled.delete(listener));
  }

  private settle(runId: string, prompt: string, how: Settled): void {
    for (const listener of [...this.settled]) {
      listener(runId, prompt, how);
    }
  }

  constructor(
    private readonly connect: () => Promise<TetherProtocol>,
    private readonly transcript: Transcript,
    private readonly channel: vscode.OutputChannel,
    private readonly recent?: RecentFiles,
    /** Whether the agent panel is visible now (it then shows the run, nothing else does). */
    private readonly panelVisible: () => boolean = () => false,
    /** What the server process said as it stopped, if it did (`TetherServer.lastError`). */
    private readonly serverError: () => string | undefined = () => undefined,
  ) {}

  /** Tether: Run (and Continue Session, with its id): ask for a prompt, then run it. */
  async runPrompt(sessionId?: string): Promise<AgentRunResult | undefined> {
    const prompt = await vscode.window.showInputBox({
      title: sessionId === undefined ? "Tether: Run" : `Tether: Continue Session ${sessionId}`,
      prompt: "What should Tether do? The active editor and its selection go along as context.",
      ignoreFocusOut: true,
    });
    if (prompt === undefined || prompt.trim() === "") {
      return undefined;
    }
    return this.start(prompt.trim(), sessionId);
  }

  /**
   * Runs one prompt under a cancellable progress notification. `how.onRunId` learns the
   * run's id before the request goes out; `how.inPanel` (the panel started it) or a visible
   * panel shows the run there only: no notification, no Output panel, the status bar's
   * progress; `context` replaces the editor's context (Ask about Selection took it before
   * its prompt).
   */
  async start(
    prompt: string,
    sessionId?: string,
    how: {
      onRunId?(runId: string): void;
      inPanel?: boolean;
      context?: RunContext;
      leaveOut?: ReadonlySet<ContextPart>;
    } = {},
  ): Promise<AgentRunResult | undefined> {
    const runId = randomUUID();
    const workDoneToken = `tether-${runId}`;
    const context = withoutParts(how.context ?? currentContext(this.recent), how.leaveOut ?? new Set());
    const inPanel = how.inPanel === true || this.panelVisible();
    how.onRunId?.(runId);
    for (const listener of [...this.started]) {
      listener(runId, context);
    }
    let protocol: TetherProtocol;
    try {
      protocol = await this.connect();
    } catch (error) {
      this.refused(runId, prompt, error, inPanel);
      return undefined;
    }
    if (!inPanel) {
      this.channel.show(true);
    }
    const options = inPanel
      ? { location: vscode.ProgressLocation.Window, title: "Tether" } // the panel has Cancel
      : { location: vscode.ProgressLocation.Notification, title: "Tether", cancellable: true };
    return vscode.window.withProgress(options, async (progress, cancel) => {
      const reports = protocol.onProgress(workDoneToken, (value) => {
        if (value.kind !== "end" && value.message) {
          progress.report({ message: value.message });
        }
      });
      const cancelling = cancel.onCancellationRequested(() => {
        this.transcript.note(`… cancelling run ${runId}`);
        void protocol.cancelProgress(workDoneToken);
      });
      this.book.inFlight.set(runId, prompt);
      try {
        const result = await protocol.run({
          prompt,
          runId,
          workDoneToken,
          ...(sessionId ? { sessionId } : {}),
          ...(context ? { context } : {}),
        });
        this.transcript.finish(result);
        this.book.record(result, prompt);
        this.settle(runId, prompt, { result });
        this.showOutcome(result, inPanel);
        return result;
      } catch (error) {
        this.refused(runId, prompt, error, inPanel);
        return undefined;
      } finally {
        this.book.inFlight.delete(runId);
        cancelling.dispose();
        reports.dispose();
      }
    });
  }

  /** Tether: Cancel: the only run in flight, or the one picked. */
  async cancel(): Promise<void> {
    const runs = [...this.book.inFlight];
    if (runs.length === 0) {
      void vscode.window.showInformationMessage("Tether: no run in progress.");
      return;
    }
    let runId = runs[0][0];
    if (runs.length > 1) {
      const picked = await vscode.window.showQuickPick(
        runs.map(([id, prompt]) => ({ label: prompt, description: id })),
        { title: "Tether: cancel which run?" },
      );
      if (picked === undefined) {
        return;
      }
      runId = picked.description;
    }
    const protocol = await this.connect();
    const { cancelled } = await protocol.cancel(runId);
    if (!cancelled) {
      void vscode.window.showInformationMessage("Tether: that run had already finished.");
    }
  }

  /** Tether: Continue Session: pick a session this window ran, then run a prompt in it. */
  async continueSession(): Promise<AgentRunResult | undefined> {
    const sessions = this.book.sessions;
    if (sessions.length === 0) {
      void vscode.window.showInformationMessage(
        "Tether: no session in this window yet; start one with Tether: Run.",
      );
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      sessions.map((s) => ({
        label: s.lastPrompt,
        description: s.sessionId,
        detail: `${s.runs} run${s.runs === 1 ? "" : "s"} · started with: ${s.firstPrompt}`,
      })),
      { title: "Tether: continue which session?" },
    );
    return picked === undefined ? undefined : this.runPrompt(picked.description);
  }

  /**
   * A run the server refused (or no server to run it): the transcript has the server's words;
   * the panel (when it shows the run) or a notification the user's, with the fix.
   */
  private refused(runId: string, prompt: string, error: unknown, inPanel: boolean): void {
    const explained = refusal(error, this.serverError());
    this.transcript.note(`✗ run ${runId} could not run: ${errorMessage(error)}`);
    this.settle(runId, prompt, { refused: explained });
    if (!inPanel) {
      void showExplained(explained);
    }
  }

  private showOutcome(result: AgentRunResult, inPanel: boolean): void {
    if (result.outcome === "done" || result.outcome === "cancelled" || inPanel) {
      // The user saw it coming (or asked for it), or the panel shows how it ended and why;
      // the transcript has the details.
      vscode.window.setStatusBarMessage(`Tether: ${result.outcome} · ${steps(result.steps)}`, 5000);
      return;
    }
    const explained = result.error ? explainError(result.error) : undefined;
    const reason = explained !== undefined ? `: ${shownLine(explained.message)}` : "";
    const fix = explained?.fix;
    const actions = [...(fix !== undefined ? [fixLabel(fix)] : []), "Show Log"];
    void vscode.window
      .showWarningMessage(`Tether stopped: ${result.outcome}${reason}`, ...actions)
      .then((action) => {
        if (action === "Show Log") {
          this.channel.show();
        } else if (action !== undefined && fix !== undefined) {
          void performFix(fix);
        }
      });
  }
}
