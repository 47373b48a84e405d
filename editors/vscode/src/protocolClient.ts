// The extension's protocol layer: Tether's requests and handlers over any JSON-RPC endpoint.
// It never imports `vscode`, so the extension wires it to its LanguageClient and the
// integration test wires it to a raw stdio connection with the same code.
import { CancellationToken, Disposable, ProgressType } from "vscode-jsonrpc";
import type {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditResult,
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from "vscode-languageserver-protocol";
import {
  AgentApproveParams,
  AgentApproveResult,
  AgentAskParams,
  AgentAskResult,
  AgentCancelResult,
  AgentCodeParams,
  AgentCodeResult,
  AgentCommandParams,
  AgentCommandResult,
  AgentCommandsResult,
  AgentDiagnosticsParams,
  AgentDiagnosticsResult,
  AgentEventParams,
  AgentJobOutputParams,
  AgentJobOutputResult,
  AgentJobsResult,
  AgentJobStopResult,
  AgentRulesListResult,
  AgentRulesRemoveResult,
  AgentRunParams,
  AgentRunResult,
  AgentSessionsResult,
  AgentSaveDocumentsParams,
  AgentSaveDocumentsResult,
  AgentSteerResult,
  AgentUndoResult,
  Methods,
  Rule,
  Settings,
} from "./protocol";
import type { AgentCheckpointsResult, AgentRewindParams, AgentRewindResult } from "./protocol";

export type WorkDoneProgress = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;
export const workDoneProgress = new ProgressType<WorkDoneProgress>();

const WORK_DONE_PROGRESS_CANCEL = "window/workDoneProgress/cancel";
const DID_CHANGE_CONFIGURATION = "workspace/didChangeConfiguration";
const APPLY_EDIT = "workspace/applyEdit";

// vscode-jsonrpc and the LanguageClient type handlers as `(...params: any[])`; a narrower
// parameter type would not accept theirs. The handlers below type their own parameters.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Handler = (...params: any[]) => unknown;

/** What both `vscode-jsonrpc`'s MessageConnection and the LanguageClient offer. */
export interface RpcEndpoint {
  sendRequest<R>(method: string, params: unknown, token?: CancellationToken): Promise<R>;
  sendNotification(method: string, params: unknown): Promise<void>;
  onRequest(method: string, handler: Handler): Disposable;
  onNotification(method: string, handler: Handler): Disposable;
  onProgress<P>(type: ProgressType<P>, token: string | number, handler: (params: P) => void): Disposable;
}

/** What the editor does when the server asks; the layer only routes and guards. */
export interface TetherHandlers {
  onEvent(event: AgentEventParams): void;
  approve(params: AgentApproveParams, token: CancellationToken): Promise<AgentApproveResult>;
  saveDocuments(params: AgentSaveDocumentsParams): Promise<AgentSaveDocumentsResult>;
  /** `agent/diagnostics`; without it the answer is that there are none. */
  diagnostics?(params: AgentDiagnosticsParams): Promise<AgentDiagnosticsResult>;
  /** `agent/code`; without it the answer is that the editor cannot answer. */
  code?(params: AgentCodeParams): Promise<AgentCodeResult>;
  /** `agent/ask` (the model's question); without it, or on an error, nothing is answered (`{}`). */
  ask?(params: AgentAskParams, token: CancellationToken): Promise<AgentAskResult>;
  /** Only for a raw connection: the LanguageClient applies edits itself. */
  applyEdit?(params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult>;
}

/** The `capabilities.experimental.tether` this client declares. */
export const CLIENT_CAPABILITIES = {
  approvals: true,
  events: true,
  saveDocuments: true,
  diagnostics: true,
  code: true,
  ask: true,
  /** A rename's approval (one diff of several files) is shown whole: approvals.ts. */
  changeSets: true,
} as const;

export function isEvent(value: unknown): value is AgentEventParams {
  if (typeof value !== "object" || value === null) {
    return false;
  }
  const event = value as Record<string, unknown>;
  return typeof event.runId === "string" && typeof event.seq === "number" && typeof event.kind === "string";
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Typed requests to `tether serve` and the handlers of what it sends back. */
export class TetherProtocol implements Disposable {
  private readonly registrations: Disposable[] = [];

  constructor(
    private readonly rpc: RpcEndpoint,
    handlers: TetherHandlers,
  ) {
    this.registrations.push(
      rpc.onNotification(Methods.agentEvent, (params: unknown) => {
        if (isEvent(params)) {
          handlers.onEvent(params);
        }
      }),
      rpc.onRequest(Methods.agentApprove, async (params: AgentApproveParams, token: CancellationToken) => {
        try {
          return await handlers.approve(params, token);
        } catch (error) {
          // The server denies on an error too; an explicit deny says why in the transcript.
          return { decision: "deny", feedback: `the editor failed to ask: ${errorMessage(error)}` };
        }
      }),
      rpc.onRequest(Methods.agentSaveDocuments, (params: AgentSaveDocumentsParams) =>
        handlers.saveDocuments(params),
      ),
      rpc.onRequest(Methods.agentDiagnostics, (params: AgentDiagnosticsParams) =>
        handlers.diagnostics === undefined ? { items: [] } : handlers.diagnostics(params ?? {}),
      ),
      rpc.onRequest(Methods.agentCode, (params: AgentCodeParams) =>
        handlers.code === undefined
          ? { unavailable: "this editor does not answer code questions" }
          : handlers.code(params),
      ),
      rpc.onRequest(Methods.agentAsk, async (params: AgentAskParams, token: CancellationToken) => {
        try {
          return handlers.ask === undefined ? {} : await handlers.ask(params, token);
        } catch {
          return {}; // the model is told the user did not answer
        }
      }),
    );
    const applyEdit = handlers.applyEdit;
    if (applyEdit !== undefined) {
      this.registrations.push(
        rpc.onRequest(APPLY_EDIT, (params: ApplyWorkspaceEditParams) => applyEdit(params)),
      );
    }
  }

  /** `agent/run`; resolves with the result whatever the outcome (cancelled runs too). */
  run(params: AgentRunParams, token?: CancellationToken): Promise<AgentRunResult> {
    // A raw MessageConnection would send an `undefined` token as a second positional param.
    return token === undefined
      ? this.rpc.sendRequest<AgentRunResult>(Methods.agentRun, params)
      : this.rpc.sendRequest<AgentRunResult>(Methods.agentRun, params, token);
  }

  cancel(runId: string): Promise<AgentCancelResult> {
    return this.rpc.sendRequest<AgentCancelResult>(Methods.agentCancel, { runId });
  }

  steer(runId: string, message: string): Promise<AgentSteerResult> {
    return this.rpc.sendRequest<AgentSteerResult>(Methods.agentSteer, { runId, message });
  }

  /** `agent/undo`: reverts the edits of that run (the agent panel's "Undo this run"). */
  undo(runId: string): Promise<AgentUndoResult> {
    return this.rpc.sendRequest<AgentUndoResult>(Methods.agentUndo, { runId });
  }

  /** `agent/checkpoints`: a session's checkpoints, oldest first (Tether: Rewind…). */
  checkpoints(sessionId: string): Promise<AgentCheckpointsResult> {
    return this.rpc.sendRequest<AgentCheckpointsResult>(Methods.agentCheckpoints, { sessionId });
  }

  /** `agent/rewind`: back to before a checkpoint's step (files, conversation or both). */
  rewind(params: AgentRewindParams): Promise<AgentRewindResult> {
    return this.rpc.sendRequest<AgentRewindResult>(Methods.agentRewind, params);
  }

  /** `agent/sessions`: the stored sessions, most recent first. */
  sessions(limit?: number): Promise<AgentSessionsResult> {
    return this.rpc.sendRequest<AgentSessionsResult>(
      Methods.agentSessions,
      limit === undefined ? {} : { limit },
    );
  }

  /** `agent/rules/list`: every approval rule in force (with a session's own, given its id). */
  rulesList(sessionId?: string): Promise<AgentRulesListResult> {
    return this.rpc.sendRequest<AgentRulesListResult>(Methods.agentRulesList, sessionId ? { sessionId } : {});
  }

  /** `agent/rules/remove`: revokes a rule as listed. */
  rulesRemove(rule: Rule, sessionId?: string): Promise<AgentRulesRemoveResult> {
    return this.rpc.sendRequest<AgentRulesRemoveResult>(
      Methods.agentRulesRemove,
      sessionId ? { rule, sessionId } : { rule },
    );
  }

  /** `agent/commands`: the session commands the server defines (`/undo`, `/cost`…). */
  commands(): Promise<AgentCommandsResult> {
    return this.rpc.sendRequest<AgentCommandsResult>(Methods.agentCommands, {});
  }

  /** `agent/command`: runs one of them on a session. */
  command(params: AgentCommandParams): Promise<AgentCommandResult> {
    return this.rpc.sendRequest<AgentCommandResult>(Methods.agentCommand, params);
  }

  /** `agent/jobs`: the background jobs of every session of this server. */
  jobs(): Promise<AgentJobsResult> {
    return this.rpc.sendRequest<AgentJobsResult>(Methods.agentJobs, {});
  }

  /** `agent/jobOutput`: what a job printed from `since` on (the caller keeps its position). */
  jobOutput(params: AgentJobOutputParams): Promise<AgentJobOutputResult> {
    return this.rpc.sendRequest<AgentJobOutputResult>(Methods.agentJobOutput, params);
  }

  /** `agent/jobStop`: stops a job and every process it started. */
  jobStop(sessionId: string, jobId: string): Promise<AgentJobStopResult> {
    return this.rpc.sendRequest<AgentJobStopResult>(Methods.agentJobStop, { sessionId, jobId });
  }

  /** The standard way to cancel what a work-done token reports on. */
  cancelProgress(token: string | number): Promise<void> {
    return this.rpc.sendNotification(WORK_DONE_PROGRESS_CANCEL, { token });
  }

  onProgress(token: string | number, handler: (value: WorkDoneProgress) => void): Disposable {
    return this.rpc.onProgress(workDoneProgress, token, handler);
  }

  /** Settings for later runs: `{settings: {tether: {...}}}` replaces the client layer. */
  configure(settings: Settings): Promise<void> {
    return this.rpc.sendNotification(DID_CHANGE_CONFIGURATION, { settings: { tether: settings } });
  }

  dispose(): void {
    for (const registration of this.registrations.splice(0)) {
      registration.dispose();
    }
  }
}
