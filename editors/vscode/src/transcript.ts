// The run transcript: events rendered as text as they arrive, into the "Tether" output
// channel (or any sink). No `vscode` import: tested directly.
import type { AgentEventParams, AgentRunResult } from "./protocol";

/** How a call that ran unasked in a sandbox reads on its panel card and in the transcript. */
export function sandboxNote(backend: string): string {
  return `ran in the sandbox (${backend})`;
}

/** What the transcript writes to (vscode.OutputChannel has both). */
export interface OutputSink {
  append(text: string): void;
  appendLine(text: string): void;
}

const MAX_ARGUMENTS_CHARS = 200;
const MAX_OUTPUT_LINES = 12;

export function oneLine(value: unknown, limit = MAX_ARGUMENTS_CHARS): string {
  const text = JSON.stringify(value) ?? "";
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** Tool output indented under its header, cut to a few lines with a note. */
export function indentOutput(output: string, maxLines = MAX_OUTPUT_LINES): string[] {
  const lines = output.replace(/\n$/, "").split("\n");
  const shown = lines.slice(0, maxLines).map((line) => `  ${line}`);
  if (lines.length > maxLines) {
    shown.push(`  … ${lines.length - maxLines} more lines …`);
  }
  return shown;
}

/** "1 step", "3 steps". */
export function steps(count: number): string {
  return `${count} step${count === 1 ? "" : "s"}`;
}

/** The run's totals; its outcome and steps unless the `run-finished` line already said them. */
export function summary(result: AgentRunResult, outcomeShown = false): string {
  const usage = result.usage;
  const parts = outcomeShown ? [] : [`outcome ${result.outcome}`, steps(result.steps)];
  parts.push(`${usage.inputTokens ?? 0} in / ${usage.outputTokens ?? 0} out tokens`);
  if (typeof usage.costUsd === "number") {
    parts.push(`$${usage.costUsd.toFixed(4)}`);
  }
  return parts.join(" · ");
}

/** A `file:` URI as its path; any other URI as it is. */
export function filePath(uri: string): string {
  return uri.startsWith("file://") ? decodeURIComponent(uri.replace(/^file:\/\/[^/]*/, "")) : uri;
}

/**
 * Renders the events of any number of runs into one sink. Streamed text is appended as it
 * arrives; when events of another run come in between, the open line is closed and a
 * marker says which run continues.
 */
export class Transcript {
  private lineOpen = false;
  private lastRunId: string | undefined;
  private readonly streamed = new Set<string>();
  /** Runs whose `run-finished` line is written: their summary leaves the outcome out. */
  private readonly finished = new Set<string>();

  /** @param displayPath how a changed file is named (the extension: relative to the workspace) */
  constructor(
    private readonly sink: OutputSink,
    private readonly displayPath: (uri: string) => string = filePath,
  ) {}

  handle(event: AgentEventParams): void {
    if (this.lastRunId !== undefined && event.runId !== this.lastRunId && event.kind !== "run-started") {
      this.line(`── run ${event.runId} ──`);
    }
    this.lastRunId = event.runId;
    switch (event.kind) {
      case "run-started":
        this.line(`▶ ${event.prompt}`);
        this.line(`  run ${event.runId} · session ${event.sessionId}`);
        break;
      case "step":
        this.streamed.delete(event.runId);
        this.line(`── step ${event.step} ──`);
        break;
      case "text-delta":
        this.streamed.add(event.runId);
        this.sink.append(event.text);
        this.lineOpen = !event.text.endsWith("\n");
        break;
      case "assistant":
        if (!this.streamed.has(event.runId) && event.text !== "") {
          this.line(event.text);
        }
        this.closeLine();
        break;
      case "tool-call":
        this.line(`→ ${event.label ?? event.tool} ${oneLine(event.arguments)}`);
        break;
      case "approval":
        if (event.sandbox) {
          this.line(`  ${sandboxNote(event.sandbox)}`);
        } else if (event.decision !== "auto") {
          this.line(`  approval: ${event.decision}`);
        }
        break;
      case "tool-result":
        this.line(`${event.ok ? "✓" : "✗"} ${event.label ?? event.tool}`);
        for (const line of indentOutput(event.output)) {
          this.line(line);
        }
        break;
      case "run-finished":
        this.streamed.delete(event.runId);
        this.finished.add(event.runId);
        this.line(`■ ${event.outcome} after ${steps(event.steps)}`);
        break;
      default:
        break; // usage: the summary at the end carries the totals
    }
  }

  /** The result of `agent/run`: totals, changed files and the error, if any. */
  finish(result: AgentRunResult): void {
    if (this.lastRunId !== result.runId) {
      this.line(`── run ${result.runId} ──`);
      this.lastRunId = result.runId;
    }
    this.line(`  ${summary(result, this.finished.delete(result.runId))}`);
    for (const uri of result.changedFiles ?? []) {
      this.line(`  changed ${this.displayPath(uri)}`);
    }
    if (result.error) {
      this.line(`  error: ${result.error}`);
    }
    this.line("");
  }

  /** A line of the extension's own (a failed request, a cancel). */
  note(text: string): void {
    this.line(text);
  }

  private closeLine(): void {
    if (this.lineOpen) {
      this.sink.appendLine("");
      this.lineOpen = false;
    }
  }

  private line(text: string): void {
    this.closeLine();
    this.sink.appendLine(text);
  }
}
