// The run transcript: the lines events.ts renders for each event, written as they arrive
// into the "Tether" output channel (or any sink). No `vscode` import: tested directly.
import { shownLine } from "./display";
import { EventRenderer, steps, tokens } from "./events";
import type { AgentEventParams, AgentRunResult } from "./protocol";

/** What the transcript writes to (vscode.OutputChannel has both). */
export interface OutputSink {
  append(text: string): void;
  appendLine(text: string): void;
}

/** The run's totals; its outcome and steps unless the `run-finished` line already said them. */
export function summary(result: AgentRunResult, outcomeShown = false): string {
  const parts = outcomeShown ? [] : [`outcome ${result.outcome}`, steps(result.steps)];
  return [...parts, tokens(result.usage)].join(" · ");
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
  private readonly events: EventRenderer;
  /** Runs whose `run-finished` line is written: their summary leaves the outcome out. */
  private readonly finished = new Set<string>();

  /** @param displayPath how a file is named (the extension: relative to the workspace) */
  constructor(
    private readonly sink: OutputSink,
    private readonly displayPath: (uri: string) => string = filePath,
  ) {
    this.events = new EventRenderer(displayPath);
  }

  /** Writes the event's lines (events.ts renders them); streamed text as it arrives. */
  handle(event: AgentEventParams): void {
    const view = this.events.render(event);
    if (this.lastRunId !== undefined && view.runId !== this.lastRunId && view.kind !== "run-started") {
      this.line(`── run ${view.runId} ──`);
    }
    this.lastRunId = view.runId;
    if (view.held !== undefined) {
      this.sink.append(view.held); // what the streamed text held back: it ends the open line
      this.lineOpen = true;
    }
    if (view.kind === "text-delta") {
      this.sink.append(view.text);
      this.lineOpen = !view.text.endsWith("\n");
      return;
    }
    if (view.kind === "assistant") {
      if (view.text !== "") {
        this.line(view.text);
      }
      this.closeLine();
      return;
    }
    for (const line of view.lines) {
      this.line(line);
    }
    if (view.kind === "run-finished") {
      this.finished.add(view.runId);
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
      this.line(`  error: ${shownLine(result.error)}`);
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
