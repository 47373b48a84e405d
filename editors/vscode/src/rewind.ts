// Tether: Rewind… — going back to before a step of a session: its checkpoints
// (`agent/checkpoints`) in a quick pick, newest first, then what to restore (files and
// conversation, files only, conversation only), then `agent/rewind`. What was restored
// and what conflicted is said; a conflict (a file someone changed since, on disk or unsaved
// in an editor) is kept, and "Force" rewinds those files too. Restored files that are open
// come back through their editors (the server's edit path). With a run id ("Restore
// checkpoint" on a message), the step is the run's first checkpoint.
import * as vscode from "vscode";
import { shownLine } from "./display";
import type { AgentCheckpointsResult, AgentRewindParams, AgentRewindResult, Checkpoint } from "./protocol";
import { errorMessage } from "./protocolClient";

/** The two requests a rewind needs (the protocol layer, or a fake in tests). */
export interface RewindEndpoint {
  checkpoints(sessionId: string): Promise<AgentCheckpointsResult>;
  rewind(params: AgentRewindParams): Promise<AgentRewindResult>;
}

type Restore = NonNullable<AgentRewindParams["restore"]>;

const RESTORE: ReadonlyArray<vscode.QuickPickItem & { restore: Restore }> = [
  {
    label: "Files and conversation",
    restore: "both",
    description: "the files, and the conversation goes on from there",
  },
  { label: "Files only", restore: "files", description: "the model is told which files were put back" },
  { label: "Conversation only", restore: "conversation", description: "the files stay as they are" },
];

/** A file URI as the workspace-relative path to show. */
function pathOf(uri: string): string {
  try {
    return shownLine(vscode.workspace.asRelativePath(vscode.Uri.parse(uri), false));
  } catch {
    return shownLine(uri);
  }
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? "" : "s"}`;
}

function clock(time: string): string {
  const when = new Date(time);
  return Number.isNaN(when.getTime()) ? shownLine(time) : when.toLocaleTimeString();
}

/** A checkpoint as a quick pick item: the step and the call, its time, the files it changed. */
export function checkpointItem(checkpoint: Checkpoint): vscode.QuickPickItem & { checkpoint: Checkpoint } {
  const files = (checkpoint.files ?? []).map((file) => {
    const path = file.path ? shownLine(file.path) : pathOf(file.uri);
    return `${path} (${shownLine(String(file.change))}${file.restorable === false ? ", not restorable" : ""})`;
  });
  let detail = files.length > 0 ? files.join(", ") : "no files changed";
  if (checkpoint.incomplete) {
    detail += ` · incomplete: ${shownLine(checkpoint.incomplete)}`;
  }
  return {
    label: `step ${shownLine(String(checkpoint.step))} · ${shownLine(checkpoint.title || checkpoint.tool)}`,
    description: clock(checkpoint.time),
    detail,
    checkpoint,
  };
}

/** What `agent/rewind` answered, as one message. */
export function describeRewind(checkpoint: Checkpoint, result: AgentRewindResult): string {
  const restored = (result.restored ?? []).map(pathOf);
  const parts = [
    `rewound to before step ${shownLine(String(checkpoint.step))}: ${count(restored.length, "file")} restored` +
      (restored.length > 0 ? ` (${restored.join(", ")})` : ""),
  ];
  for (const uri of result.conflicts ?? []) {
    parts.push(`conflict: ${pathOf(uri)} changed since, kept as you have it`);
  }
  for (const uri of result.notRestorable ?? []) {
    parts.push(`not restorable: ${pathOf(uri)} (its earlier content was not kept)`);
  }
  for (const uri of result.failed ?? []) {
    parts.push(`failed: ${pathOf(uri)}`);
  }
  if (result.conversation === true) {
    parts.push("the conversation continues from before that step");
  }
  if (result.note) {
    parts.push(shownLine(result.note));
  }
  return `Tether: ${parts.join("; ")}`;
}

/** A rewind the server did: the session, the checkpoint gone back to, what it answered. */
export interface Rewound {
  readonly sessionId: string;
  readonly checkpoint: Checkpoint;
  readonly result: AgentRewindResult;
}

const rewoundListeners = new Set<(rewound: Rewound) => void>();

/**
 * Called after each rewind the server did from this window (Tether: Rewind…, a run's
 * "Restore checkpoint"): the agent panel marks what the conversation left out.
 */
export function onDidRewind(listener: (rewound: Rewound) => void): vscode.Disposable {
  rewoundListeners.add(listener);
  return new vscode.Disposable(() => rewoundListeners.delete(listener));
}

async function send(
  endpoint: RewindEndpoint,
  params: AgentRewindParams,
  checkpoint: Checkpoint,
): Promise<void> {
  let result: AgentRewindResult;
  try {
    result = await endpoint.rewind(params);
  } catch (error) {
    void vscode.window.showErrorMessage(`Tether: rewind: ${shownLine(errorMessage(error))}`);
    return;
  }
  for (const listener of [...rewoundListeners]) {
    listener({ sessionId: params.sessionId, checkpoint, result });
  }
  const message = describeRewind(checkpoint, result);
  const conflicts = result.conflicts ?? [];
  if (conflicts.length === 0 || params.force) {
    void vscode.window.showInformationMessage(message);
    return;
  }
  const forced = await vscode.window.showWarningMessage(message, "Force");
  if (forced === "Force") {
    await send(endpoint, { ...params, restore: "files", force: true }, checkpoint);
  }
}

/**
 * Tether: Rewind… on `sessionId` (the panel's, else the last run's); with `runId`, to before
 * that run's first checkpoint without asking which.
 */
export async function rewindSession(
  endpoint: RewindEndpoint,
  sessionId: string | undefined,
  options: { runId?: string } = {},
): Promise<void> {
  if (sessionId === undefined) {
    void vscode.window.showInformationMessage("Tether: no session to rewind yet: run a prompt first.");
    return;
  }
  let listed: Checkpoint[];
  try {
    listed = (await endpoint.checkpoints(sessionId)).checkpoints;
  } catch (error) {
    void vscode.window.showErrorMessage(`Tether: checkpoints: ${shownLine(errorMessage(error))}`);
    return;
  }
  let checkpoint: Checkpoint | undefined;
  if (options.runId !== undefined) {
    checkpoint = listed.find((c) => c.runId === options.runId);
    if (checkpoint === undefined) {
      void vscode.window.showInformationMessage(
        "Tether: that run changed no files: there is nothing to restore.",
      );
      return;
    }
  } else {
    if (listed.length === 0) {
      void vscode.window.showInformationMessage(
        "Tether: no checkpoints in this session: no step changed files yet.",
      );
      return;
    }
    const picked = await vscode.window.showQuickPick([...listed].reverse().map(checkpointItem), {
      title: "Tether: rewind to before which step?",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    checkpoint = picked?.checkpoint;
  }
  if (checkpoint === undefined) {
    return;
  }
  const restore = await vscode.window.showQuickPick(RESTORE, {
    title: `Tether: restore what, to before step ${shownLine(String(checkpoint.step))}?`,
  });
  if (restore === undefined) {
    return;
  }
  await send(endpoint, { sessionId, checkpointId: checkpoint.id, restore: restore.restore }, checkpoint);
}
