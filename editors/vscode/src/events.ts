// The one renderer of the server's `agent/event`s. Each event kind becomes, here and only
// here, a small record: the lines the transcript writes (transcript.ts) and the fields the
// agent panel's cards show (panel/model.ts). Those two only place the records: the output
// channel's lines, the panel's cards and their states. No `vscode` import: tested directly.
import type { AgentEventParams, Outcome } from "./protocol";
import { shownLine, shownText } from "./display";

/** Lines an edit adds and removes (the "+3 −1" pill). */
export interface DiffStat {
  readonly added: number;
  readonly removed: number;
}

/** One entry of the model's step list. */
export interface PlanStep {
  readonly content: string;
  readonly status: "pending" | "in_progress" | "completed";
  readonly priority?: "high" | "medium" | "low";
}

/** A run's token counts and cost so far. */
export interface UsageView {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd?: number;
}

/** What the transcript writes for the event, one line each (none: it shows nothing of it). */
type Lines = readonly string[];

/**
 * An `agent/event` as the editor shows it; `kind` is the event's. Every string from outside
 * in it (the model's text, a tool's name, call and output, an MCP label, a plan) is escaped
 * for display (`display.ts`) here, before the panel's Markdown or the transcript sees it.
 * `held`: streamed text held back from the run's last delta (a final `\r`, waiting for a
 * `\n`), to be put before this event's own.
 */
export type EventView = EventKinds & { readonly held?: string };

type EventKinds =
  | {
      readonly kind: "run-started";
      readonly runId: string;
      readonly sessionId: string;
      readonly prompt: string;
      readonly lines: Lines;
    }
  | { readonly kind: "step"; readonly runId: string; readonly step: number; readonly lines: Lines }
  /** Streamed text, appended as it comes (no line of its own). */
  | { readonly kind: "text-delta"; readonly runId: string; readonly text: string }
  /**
   * A piece of the model's thinking (never the answer), escaped for display (`display.ts`);
   * shown collapsed by the panel, not in the transcript.
   */
  | { readonly kind: "thinking"; readonly runId: string; readonly text: string; readonly lines: Lines }
  /** A message ended; `text` is what its deltas did not show: all of it, or "" when it streamed. */
  | { readonly kind: "assistant"; readonly runId: string; readonly text: string }
  | {
      readonly kind: "tool-call";
      readonly runId: string;
      readonly callId: string;
      /** The model's name for the tool (an MCP call's `label` names it for people in `title`). */
      readonly tool: string;
      /** `$ command`, the tool and the file, or the tool and its arguments on one line. */
      readonly title: string;
      /** The call in full: the command, the proposed change of a file, the arguments. */
      readonly detail: string;
      /** An edit's lines added and removed (its `detail` is then `-`/`+` lines). */
      readonly stat?: DiffStat;
      readonly lines: Lines;
    }
  | {
      readonly kind: "approval";
      readonly runId: string;
      readonly callId: string;
      /** The decision and the rule that made it: `auto (rule: pytest *, project)`. */
      readonly decision: string;
      /** Denied by the user or by default: the call does not run. */
      readonly denied: boolean;
      /** Not `auto` (a rule or the sandbox): the user decided, or the default did for them. */
      readonly asked: boolean;
      /** "ran in the sandbox (bwrap)": the call ran unasked in a sandbox. */
      readonly sandbox?: string;
      readonly lines: Lines;
    }
  | {
      readonly kind: "tool-result";
      readonly runId: string;
      readonly callId: string;
      readonly ok: boolean;
      /** The last lines of the output (and the error), for a card. */
      readonly output: string;
      readonly lines: Lines;
    }
  | { readonly kind: "usage"; readonly runId: string; readonly usage: UsageView; readonly lines: Lines }
  /** Each plan replaces the one before, whole. */
  | {
      readonly kind: "plan";
      readonly runId: string;
      readonly plan: readonly PlanStep[];
      readonly lines: Lines;
    }
  | {
      readonly kind: "run-finished";
      readonly runId: string;
      readonly outcome: Outcome;
      readonly steps: number;
      readonly lines: Lines;
    }
  /**
   * A command still runs (a transient report, its result replaces it): `status` says the
   * time so far and its last line (`⠹ 3 s · collected 3 items`), `output` the end of its output.
   */
  | {
      readonly kind: "tool-progress";
      readonly runId: string;
      readonly callId: string;
      readonly status: string;
      readonly output: string;
      readonly lines: Lines;
    }
  /** `compacted`, `injection-flagged`, `retry`, and any kind newer than this extension. */
  | { readonly kind: "unshown"; readonly runId: string; readonly lines: Lines };

const MAX_ARGUMENTS_CHARS = 200;
const MAX_OUTPUT_LINES = 12;
const OUTPUT_TAIL_LINES = 20;
const DETAIL_CHARS = 4000;

/** A value as JSON on one line, cut to `limit` characters. */
export function oneLine(value: unknown, limit = MAX_ARGUMENTS_CHARS): string {
  const text = JSON.stringify(value) ?? "";
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** Tool output indented under its header, cut to its first lines with a note. */
export function indentOutput(output: string, maxLines = MAX_OUTPUT_LINES): string[] {
  const lines = output.replace(/\n$/, "").split("\n");
  const shown = lines.slice(0, maxLines).map((line) => `  ${line}`);
  if (lines.length > maxLines) {
    shown.push(`  … ${lines.length - maxLines} more lines …`);
  }
  return shown;
}

/** The last lines of a tool's output, with a note of what was left out. */
export function outputTail(output: string, maxLines = OUTPUT_TAIL_LINES): string {
  const lines = output.replace(/\n$/, "").split("\n");
  if (lines.length <= maxLines) {
    return lines.join("\n");
  }
  return [`… ${lines.length - maxLines} earlier lines …`, ...lines.slice(-maxLines)].join("\n");
}

/** Text cut to `limit` characters, with a note of how many more there were. */
export function clip(text: string, limit = DETAIL_CHARS): string {
  return text.length > limit ? `${text.slice(0, limit)}\n… (${text.length - limit} more characters)` : text;
}

const SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";

/**
 * A running command's status: `⠹ 3 s · collected 3 items` (a spinner turned by the time, the
 * seconds so far, the last line it printed: the server sends it escaped, on one line).
 */
export function runningText(elapsedMs: number, lastLine: string): string {
  const ms = Math.max(0, Math.floor(elapsedMs) || 0);
  const said = `${SPINNER[Math.floor(ms / 100) % SPINNER.length]} ${Math.floor(ms / 1000)} s`;
  const last = Array.from(lastLine, (c) => (c < " " || c === "\u007f" ? " " : c)).join("");
  return last === "" ? said : `${said} · ${last}`;
}

/** "1 step", "3 steps". */
export function steps(count: number): string {
  return `${count} step${count === 1 ? "" : "s"}`;
}

type Usage = { inputTokens?: number; outputTokens?: number; costUsd?: number | null };

/** A `usage` event's or a run result's counts (0 when not given) and cost (when known). */
export function usageView(usage: Usage): UsageView {
  const { inputTokens, outputTokens, costUsd } = usage;
  return {
    inputTokens: inputTokens ?? 0,
    outputTokens: outputTokens ?? 0,
    ...(typeof costUsd === "number" ? { costUsd } : {}),
  };
}

/** "1200 in / 140 out tokens", and " · $0.0012" when the cost is known. */
export function tokens(usage: Usage): string {
  const counts = `${usage.inputTokens ?? 0} in / ${usage.outputTokens ?? 0} out tokens`;
  return typeof usage.costUsd === "number" ? `${counts} · $${usage.costUsd.toFixed(4)}` : counts;
}

/** How a call that ran unasked in a sandbox reads on its panel card and in the transcript. */
function sandboxNote(backend: string): string {
  return `ran in the sandbox (${backend})`;
}

function prefixed(text: string, mark: string): string {
  return text
    .replace(/\n$/, "")
    .split("\n")
    .map((line) => `${mark}${line}`)
    .join("\n");
}

/**
 * Lines added and removed by a unified diff (or ` `/`-`/`+` prefixed lines); its `---`/`+++`
 * headers, before the first `@@`, not counted (a removed line may start with `--`).
 */
export function diffStat(diff: string): DiffStat {
  let added = 0;
  let removed = 0;
  // A unified diff with headers (of one file or several): a `---` / `+++` line once a hunk
  // has had the lines its `@@ -a,b +c,d @@` says is the next file's header, not counted.
  const unified = diff.startsWith("--- ");
  let [oldLeft, newLeft] = [0, 0];
  for (const line of diff.split("\n")) {
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk !== null) {
      [oldLeft, newLeft] = [Number(hunk[1] ?? 1), Number(hunk[2] ?? 1)];
      continue;
    }
    if (unified && oldLeft <= 0 && newLeft <= 0 && (line.startsWith("--- ") || line.startsWith("+++ "))) {
      continue;
    }
    if (line.startsWith("+")) {
      added += 1;
      newLeft -= 1;
    } else if (line.startsWith("-")) {
      removed += 1;
      oldLeft -= 1;
    } else if (line.startsWith(" ")) {
      oldLeft -= 1;
      newLeft -= 1;
    }
  }
  return { added, removed };
}

/** Past this many line pairs, a change is shown as every old line removed and every new one added. */
const MAX_DIFF_CELLS = 250_000;

function lines(text: string): string[] {
  return text === "" ? [] : text.replace(/\n$/, "").split("\n");
}

/**
 * `before` → `after` as diff lines (` ` kept, `-` removed, `+` added), the fewest changed: what
 * the server's own diff of the edit counts (the approval card's `+1 −1`), not every line of
 * both texts.
 */
export function lineDiff(before: string, after: string): string {
  const a = lines(before);
  const b = lines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) {
    start += 1;
  }
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const oldMiddle = a.slice(start, endA);
  const newMiddle = b.slice(start, endB);
  const middle =
    oldMiddle.length * newMiddle.length > MAX_DIFF_CELLS
      ? [...oldMiddle.map((line) => `-${line}`), ...newMiddle.map((line) => `+${line}`)]
      : commonLines(oldMiddle, newMiddle);
  return [
    ...a.slice(0, start).map((line) => ` ${line}`),
    ...middle,
    ...a.slice(endA).map((line) => ` ${line}`),
  ].join("\n");
}

/** The lines of `a` and `b` by their longest common subsequence: removed before added. */
function commonLines(a: readonly string[], b: readonly string[]): string[] {
  // longest[i][j]: the longest common subsequence of a[i..] and b[j..].
  const longest = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      longest[i][j] =
        a[i] === b[j] ? longest[i + 1][j + 1] + 1 : Math.max(longest[i + 1][j], longest[i][j + 1]);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(` ${a[i]}`);
      i += 1;
      j += 1;
    } else if (i < a.length && (j === b.length || longest[i + 1][j] >= longest[i][j + 1])) {
      out.push(`-${a[i]}`);
      i += 1;
    } else {
      out.push(`+${b[j]}`);
      j += 1;
    }
  }
  return out;
}

/** A tool call's title and full detail: the command, the file and its change (with its +N −M). */
export function describeCall(
  tool: string,
  args: Record<string, unknown>,
  displayPath: (pathOrUri: string) => string,
  label?: string | null,
): { title: string; detail: string; stat?: DiffStat } {
  // An MCP call's `label` ("notes · echo") names it for people; `tool` is the model's name.
  const name = shownLine(label ?? tool);
  const str = (key: string): string | undefined =>
    typeof args[key] === "string" ? (args[key] as string) : undefined;
  const command = str("command");
  if (tool === "bash" && command !== undefined) {
    return { title: `$ ${command}`, detail: command };
  }
  const question = str("question");
  if (tool === "ask_user" && question !== undefined) {
    // The model's question (agent/ask asks it in a quick pick): said, not its call's JSON.
    const choices = Array.isArray(args.choices) ? args.choices.map(String) : [];
    const offered = [
      ...choices,
      ...(choices.length > 0 && args.free_text !== false ? ["or an answer of your own"] : []),
    ];
    const line = question.replace(/[ \t]*\n[ \t]*/g, " "); // escaped after, as every title
    return {
      title: `${name}: ${line.length > 80 ? `${line.slice(0, 79)}…` : line}`,
      detail: clip(
        [question, ...(offered.length > 0 ? ["", ...offered.map((c) => `· ${c}`)] : [])].join("\n"),
      ),
    };
  }
  const file = str("path") ?? str("uri");
  if (file !== undefined) {
    const shown = displayPath(file);
    if (tool === "edit_file" && str("old_text") !== undefined) {
      const change = lineDiff(str("old_text") ?? "", str("new_text") ?? "");
      return { title: `${name} ${shown}`, detail: clip(change), stat: diffStat(change) };
    }
    if (tool === "write_file" && str("content") !== undefined) {
      const content = prefixed(str("content") ?? "", "+");
      return { title: `${name} ${shown}`, detail: clip(content), stat: diffStat(content) };
    }
    return { title: `${name} ${shown}`, detail: clip(JSON.stringify(args, null, 2)) };
  }
  return {
    title: `${name} ${oneLine(args, 80)}`,
    detail: clip(JSON.stringify(args, null, 2)),
  };
}

/**
 * Turns each event into its `EventView`. It keeps one thing per run: whether the current
 * step streamed its text, since the step's `assistant` event then repeats it.
 */
export class EventRenderer {
  private readonly streamed = new Set<string>();
  /** Runs whose last delta ended in `\r`, held: with the next delta's `\n` it is one line break. */
  private readonly carriageReturn = new Set<string>();

  /** @param displayPath how a file the model names is shown (relative to the workspace) */
  constructor(private readonly displayPath: (pathOrUri: string) => string) {}

  render(event: AgentEventParams): EventView {
    const view = this.view(event);
    if (
      event.kind !== "text-delta" &&
      event.kind !== "tool-progress" &&
      this.carriageReturn.delete(event.runId)
    ) {
      return { ...view, held: "\\r" }; // no line feed came: the carriage return is shown
    }
    return view;
  }

  private view(event: AgentEventParams): EventView {
    const runId = event.runId;
    switch (event.kind) {
      case "run-started": {
        const { sessionId } = event;
        const prompt = shownText(event.prompt);
        const lines = [`▶ ${prompt}`, `  run ${runId} · session ${sessionId}`];
        return { kind: "run-started", runId, sessionId, prompt, lines };
      }
      case "step":
        this.streamed.delete(runId);
        return { kind: "step", runId, step: event.step, lines: [`── step ${event.step} ──`] };
      case "text-delta": {
        this.streamed.add(runId);
        let text = (this.carriageReturn.delete(runId) ? "\r" : "") + event.text;
        if (text.endsWith("\r")) {
          this.carriageReturn.add(runId); // `\r\n` may be cut between two deltas: wait
          text = text.slice(0, -1);
        }
        return { kind: "text-delta", runId, text: shownText(text) };
      }
      case "thinking":
        return { kind: "thinking", runId, text: shownText(event.text), lines: [] };
      case "assistant":
        return { kind: "assistant", runId, text: this.streamed.has(runId) ? "" : shownText(event.text) };
      case "tool-call": {
        const call = describeCall(event.tool, event.arguments, this.displayPath, event.label);
        const line = `→ ${shownLine(event.label ?? event.tool)} ${shownLine(oneLine(event.arguments))}`;
        return {
          kind: "tool-call",
          runId,
          callId: event.callId,
          tool: event.tool,
          ...call,
          title: shownText(call.title),
          detail: shownText(call.detail),
          lines: [line],
        };
      }
      case "approval": {
        const rule = event.rules?.[0];
        const sandbox = event.sandbox ? sandboxNote(event.sandbox) : undefined;
        const asked = event.decision !== "auto";
        return {
          kind: "approval",
          runId,
          callId: event.callId,
          decision: rule
            ? `${event.decision} (rule: ${shownLine(rule.pattern)}, ${rule.scope ?? "session"})`
            : event.decision,
          denied: event.decision === "deny" || event.decision === "denied-by-default",
          asked,
          ...(sandbox !== undefined ? { sandbox } : {}),
          lines: sandbox !== undefined ? [`  ${sandbox}`] : asked ? [`  approval: ${event.decision}`] : [],
        };
      }
      case "tool-result": {
        const { callId, ok } = event;
        const output = shownText(event.output);
        const error = event.error ? shownText(event.error) : event.error;
        return {
          kind: "tool-result",
          runId,
          callId,
          ok,
          // A failure's error is often its output too (a denial): said once.
          output: outputTail(error && !output.includes(error) ? `${output}\n${error}` : output),
          lines: [`${ok ? "✓" : "✗"} ${shownLine(event.label ?? event.tool)}`, ...indentOutput(output)],
        };
      }
      case "tool-progress": // the card's, not the transcript's: it would repeat every second
        return {
          kind: "tool-progress",
          runId,
          callId: event.callId,
          status: runningText(event.elapsedMs, event.lastLine),
          output: outputTail(event.tail ?? ""),
          lines: [],
        };
      case "usage": // the transcript's summary of the run carries the totals
        return { kind: "usage", runId, usage: usageView(event), lines: [] };
      case "plan": {
        const plan = event.entries.map((entry) => ({
          content: shownLine(entry.content),
          status: entry.status ?? "pending",
          ...(entry.priority ? { priority: entry.priority } : {}),
        }));
        return { kind: "plan", runId, plan, lines: [] };
      }
      case "run-finished":
        this.streamed.delete(runId);
        return {
          kind: "run-finished",
          runId,
          outcome: event.outcome,
          steps: event.steps,
          lines: [`■ ${event.outcome} after ${steps(event.steps)}`],
        };
      default:
        return { kind: "unshown", runId, lines: [] };
    }
  }
}
