// What the agent panel's webview and the extension say to each other: the view model the
// extension keeps (the webview only draws it) and the user's actions coming back. The
// webview is not trusted to send well-formed messages: `parseFromView` checks each one.
import type { Choice } from "../answers";
import type { ContextPart } from "../context";
import type { DiffStat, PlanStep, UsageView } from "../events";
import type { ProposedRule, Rule, SessionCommand } from "../protocol";

export type { DiffStat, PlanStep } from "../events";

/** A tool call as a card: what it does (command or file), its state and output tail. */
export interface ToolCard {
  readonly callId: string;
  readonly tool: string;
  /** `$ command`, the file's path, or the tool and its arguments on one line. */
  readonly title: string;
  /** The call in full: the command, the proposed change of a file, the arguments. */
  readonly detail: string;
  /** `stopped`: the run ended (cancelled, timed out) before the call finished. */
  readonly status: "running" | "awaiting" | "ok" | "failed" | "denied" | "stopped";
  /** The approval decision and the rule that made it, when one was asked or applied. */
  readonly decision?: string;
  /** "ran in the sandbox (bwrap)": the call ran unasked in a sandbox (its `approval` event). */
  readonly sandbox?: string;
  readonly output?: string;
  /** A command that runs: the time so far and its last line (`⠹ 3 s · collected 3 items`). */
  readonly progress?: string;
  /** An edit's lines added and removed (its `detail` is then `-`/`+` lines). */
  readonly stat?: DiffStat;
}

/** One part of a run's context as a chip: the file, the selection, the open files. */
export interface ContextChip {
  readonly part: ContextPart;
  /** `app.py`, `app.py:4–6`, `3 open files`. */
  readonly label: string;
  /** The selected text, the open files' names: shown on hover and when opened. */
  readonly detail?: string;
  /** For the next prompt: whether it goes along (the user can leave it out). */
  readonly included?: boolean;
}

export type RunItem =
  | { readonly kind: "text"; readonly html: string }
  | { readonly kind: "tool"; readonly card: ToolCard }
  /** The model's thinking of one step (escaped plain text), shown collapsed under "Thinking (N words)". */
  | { readonly kind: "thinking"; readonly text: string; readonly words: number };

export interface RunView {
  readonly runId: string;
  readonly sessionId: string;
  readonly prompt: string;
  readonly items: readonly RunItem[];
  readonly running: boolean;
  readonly outcome?: string;
  readonly steps?: number;
  readonly usage?: UsageView;
  /** Outcome, steps, tokens and cost as far as known: `done · 2 steps · 1200 in / 140 out tokens · $0.0012`. */
  readonly summary: string;
  readonly changedFiles?: readonly string[];
  /** Why it stopped or could not run, in the user's words. */
  readonly error?: string;
  /** The label of the button that fixes the error (opens the setting, stores the key…). */
  readonly fix?: string;
  /** What `agent/undo` did for this run. */
  readonly undone?: string;
  /** The context the run carried (the file, the selection and its text, the open files). */
  readonly context?: readonly ContextChip[];
  /** The model's step list (its latest `plan` event), shown at the top of the run. */
  readonly plan?: readonly PlanStep[];
  /** Not a run: a session command typed in the prompt box (`prompt`) and its answer. */
  readonly command?: { readonly message: string; readonly failed?: boolean };
  /** Left out of the conversation by a rewind (the log keeps it): shown greyed, labelled. */
  readonly rewound?: RewoundView;
}

/**
 * What a conversation rewind left out of a run: all of it (`whole`, its prompt too: a run
 * after the rewound point), or its items from `fromItem` on (the steps from the rewound one).
 */
export interface RewoundView {
  readonly whole: boolean;
  readonly fromItem: number;
  /** Says so in words: "rewound: the model no longer sees this run". */
  readonly label: string;
}

/** An `agent/approve` waiting for the user, answerable from the panel. */
export interface ApprovalView {
  readonly callId: string;
  readonly runId: string;
  /** The headline (`Run npm install outside the sandbox?`). */
  readonly title: string;
  /** Why it is asked this way, shown muted under the headline (the sandbox stopped it, …). */
  readonly reason?: string;
  readonly kind: "diff" | "command";
  /** The command to run (commands) or the file's path (edits). */
  readonly subject: string;
  readonly cwd?: string;
  /**
   * Whether the user may change the command before allowing it: a shell command. An MCP
   * call is shown as is (the server refuses a changed one). False for an edit: a change of
   * several files (a rename), which has no Edit in Diff Editor.
   */
  readonly editable?: boolean;
  /** The unified diff of an edit. */
  readonly diff?: string;
  /** An edit's lines added and removed. */
  readonly stat?: DiffStat;
  /** Where else it is shown: the diff editor, the file itself (inline review), a modal dialog, or nowhere. */
  readonly alsoIn: "diff editor" | "file" | "dialog" | "none";
  /** Inline review's progress: "1 of 2 accepted, 1 rejected". */
  readonly progress?: string;
  /** The allow-always rules the server offers, narrowest first (none: plain Allow Always). */
  readonly suggestions: readonly string[];
}

export interface SessionView {
  readonly sessionId: string;
  readonly title: string;
  readonly updatedAt: string;
  readonly runs: number;
  readonly lastOutcome?: string;
}

export interface RuleView {
  readonly rule: Rule;
  /** Built-in rules are turned off in the user file, not revoked one by one. */
  readonly removable: boolean;
}

export interface PanelState {
  readonly runs: readonly RunView[];
  readonly approvals: readonly ApprovalView[];
  /** The run of this panel in flight (Cancel applies to it). */
  readonly activeRunId?: string;
  /** The session the next prompt continues; undefined: a new one. */
  readonly sessionId?: string;
  readonly sessionTitle?: string;
  readonly sessions: readonly SessionView[];
  readonly rules: readonly RuleView[];
  /** The session commands the prompt box offers after `/`. */
  readonly commands: readonly SessionCommand[];
  /** The last run this window can undo. */
  readonly undoRunId?: string;
  /** A failed request, said once in the panel. */
  readonly notice?: string;
  /** What the next prompt takes along from the editor, each part with its toggle. */
  readonly context: readonly ContextChip[];
}

/** Extension → webview. */
export type ToView =
  | { readonly type: "state"; readonly state: PanelState }
  /** The workspace files matching an `@` typed in the prompt (workspace-relative). */
  | { readonly type: "files"; readonly query: string; readonly files: readonly string[] }
  /** A prompt that did not run, back in the prompt box (when the user has not typed another). */
  | { readonly type: "restorePrompt"; readonly prompt: string };

/** What the user answers from an approval card. */
export interface PanelAnswer {
  readonly choice: Choice;
  readonly feedback?: string;
  /** A command the user changed before allowing it. */
  readonly command?: string;
  /** With allow-always: the offered rule the user picked, and where to keep it. */
  readonly rule?: ProposedRule;
}

/** Webview → extension. */
export type FromView =
  | { readonly type: "ready" }
  | { readonly type: "run"; readonly prompt: string }
  | { readonly type: "cancel" }
  | { readonly type: "approve"; readonly callId: string; readonly answer: PanelAnswer }
  | { readonly type: "reveal"; readonly callId: string }
  | { readonly type: "undo"; readonly runId: string }
  /** "Restore checkpoint" on a run: back to before it (Tether: Rewind… asks what to restore). */
  | { readonly type: "restore"; readonly runId: string }
  /** The fix of that run's error (its button). */
  | { readonly type: "fix"; readonly runId: string }
  | { readonly type: "refreshSessions" }
  | { readonly type: "pickSession"; readonly sessionId: string | null }
  | { readonly type: "refreshRules" }
  | { readonly type: "revokeRule"; readonly rule: Rule }
  | { readonly type: "toggleContext"; readonly part: ContextPart }
  | { readonly type: "files"; readonly query: string };

const CHOICES = new Set(["allow", "allow-always", "deny"]);
const SCOPES = new Set(["session", "project", "user"]);
const RULE_SCOPES = new Set(["session", "project", "user", "builtin"]);
const DECISIONS = new Set(["allow", "deny", "ask"]);
const CONTEXT_PARTS = new Set(["file", "selection", "openFiles"]);

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown): value is string | undefined {
  return value === undefined || typeof value === "string";
}

function parseRule(value: unknown): Rule | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const { tool, pattern, decision, scope } = value;
  if (typeof tool !== "string" || typeof pattern !== "string" || !DECISIONS.has(decision as string)) {
    return undefined;
  }
  if (scope !== undefined && !RULE_SCOPES.has(scope as string)) {
    return undefined;
  }
  return {
    tool,
    pattern,
    decision: decision as Rule["decision"],
    ...(scope ? { scope: scope as Rule["scope"] } : {}),
  };
}

function parseAnswer(value: unknown): PanelAnswer | undefined {
  if (!isObject(value) || !CHOICES.has(value.choice as string)) {
    return undefined;
  }
  const { feedback, command, rule } = value;
  if (!optionalString(feedback) || !optionalString(command)) {
    return undefined;
  }
  let proposed: ProposedRule | undefined;
  if (rule !== undefined) {
    if (!isObject(rule) || typeof rule.pattern !== "string" || !SCOPES.has(rule.scope as string)) {
      return undefined;
    }
    proposed = { pattern: rule.pattern, scope: rule.scope as ProposedRule["scope"] };
  }
  return {
    choice: value.choice as Choice,
    ...(feedback !== undefined ? { feedback } : {}),
    ...(command !== undefined ? { command } : {}),
    ...(proposed !== undefined ? { rule: proposed } : {}),
  };
}

/** The message if it is one the panel knows, well-formed; else undefined (ignored). */
export function parseFromView(value: unknown): FromView | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  switch (value.type) {
    case "ready":
    case "cancel":
    case "refreshSessions":
    case "refreshRules":
      return { type: value.type };
    case "run":
      return typeof value.prompt === "string" ? { type: "run", prompt: value.prompt } : undefined;
    case "approve": {
      const answer = parseAnswer(value.answer);
      return typeof value.callId === "string" && answer
        ? { type: "approve", callId: value.callId, answer }
        : undefined;
    }
    case "reveal":
      return typeof value.callId === "string" ? { type: "reveal", callId: value.callId } : undefined;
    case "undo":
    case "restore":
    case "fix":
      return typeof value.runId === "string" ? { type: value.type, runId: value.runId } : undefined;
    case "pickSession":
      return typeof value.sessionId === "string" || value.sessionId === null
        ? { type: "pickSession", sessionId: value.sessionId }
        : undefined;
    case "revokeRule": {
      const rule = parseRule(value.rule);
      return rule ? { type: "revokeRule", rule } : undefined;
    }
    case "toggleContext":
      return CONTEXT_PARTS.has(value.part as string)
        ? { type: "toggleContext", part: value.part as ContextPart }
        : undefined;
    case "files":
      return typeof value.query === "string" && value.query.length <= 200
        ? { type: "files", query: value.query }
        : undefined;
    default:
      return undefined;
  }
}
