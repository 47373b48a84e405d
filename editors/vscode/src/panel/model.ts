// The agent panel's view model, built from the server's `agent/event`s as events.ts renders
// them (runs started from the panel or the palette alike), the results of `agent/run` and
// the approvals pending. No `vscode` import: tested directly.
import type {
  AgentApproveParams,
  AgentEventParams,
  AgentRunResult,
  CommandPreview,
  DiffPreview,
  RunContext,
} from "../protocol";
import { SHELL_TOOL } from "../answers";
import { suggestedPatterns } from "../rulePicks";
import { splitTitle } from "../titles";
import { EventRenderer, type PlanStep, clip, diffStat, steps, tokens, usageView } from "../events";
import { shownText } from "../display";
import { renderMarkdown } from "./markdown";
import type { ApprovalView, ContextChip, RewoundView, RunItem, RunView, ToolCard } from "./messages";
import { Explained, Fix, explainError, fixLabel } from "../userErrors";

const MAX_RUNS = 30;

function isCommand(preview: DiffPreview | CommandPreview): preview is CommandPreview {
  return preview.kind === "command" || typeof (preview as CommandPreview).command === "string";
}

/** An `agent/approve` request as the panel shows it. */
export function approvalView(
  params: AgentApproveParams,
  alsoIn: ApprovalView["alsoIn"],
  displayPath: (pathOrUri: string) => string,
  progress?: string,
): ApprovalView {
  const { headline, reason } = splitTitle(params.title);
  const base = {
    callId: params.callId,
    runId: params.runId,
    title: headline,
    ...(reason !== undefined ? { reason } : {}),
    alsoIn,
    suggestions: suggestedPatterns(params),
  };
  const preview = params.preview;
  if (isCommand(preview)) {
    return {
      ...base,
      kind: "command",
      subject: preview.command,
      cwd: displayPath(preview.cwd),
      editable: params.tool === SHELL_TOOL,
    };
  }
  return {
    ...base,
    kind: "diff",
    subject: displayPath(preview.uri),
    diff: clip(preview.diff),
    stat: diffStat(preview.diff),
    // A change of several files (a rename, no window): allowed or denied whole, never edited.
    ...(preview.proposed === undefined || preview.proposed === null ? { editable: false } : {}),
    ...(progress !== undefined ? { progress } : {}),
  };
}

/** A run's context as chips: the active file, the selection (with its text), the open files. */
export function contextChips(
  context: RunContext | undefined | null,
  displayPath: (pathOrUri: string) => string,
): ContextChip[] {
  const chips: ContextChip[] = [];
  if (context?.uri) {
    const name = displayPath(context.uri);
    chips.push({ part: "file", label: name });
    if (context.selection) {
      const { start, end } = context.selection;
      const last = end.character === 0 && end.line > start.line ? end.line - 1 : end.line;
      const lines = last === start.line ? `${start.line + 1}` : `${start.line + 1}–${last + 1}`;
      chips.push({
        part: "selection",
        label: `${name}:${lines}`,
        ...(context.selectedText ? { detail: clip(context.selectedText) } : {}),
      });
    }
  }
  const open = context?.openFiles ?? [];
  if (open.length > 0) {
    chips.push({
      part: "openFiles",
      label: `${open.length} open file${open.length === 1 ? "" : "s"}`,
      detail: open.map(displayPath).join("\n"),
    });
  }
  return chips;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };

interface RunState extends Omit<
  Mutable<RunView>,
  "items" | "context" | "plan" | "summary" | "fix" | "rewound"
> {
  /** What fixes the run's error (the button's label is in the view). */
  fix?: Fix;
  /** The server refused it (or there was no server): it never ran. */
  refused?: boolean;
  command?: { message: string; failed?: boolean };
  context?: ContextChip[];
  plan?: PlanStep[];
  items: Array<
    | { kind: "text"; markdown: string; html?: string; step?: number }
    | { kind: "tool"; card: Mutable<ToolCard>; step?: number }
    | ThinkingItem
  >;
  /** The step the run is in (its last `step` event): each item is of the step it came in. */
  step?: number;
  /**
   * A conversation rewind left out this run's steps from this one on (`0`: the whole run,
   * its prompt too).
   */
  rewoundFrom?: number;
  /** The text item the current step streams into, if any. */
  openText?: { kind: "text"; markdown: string; html?: string; step?: number };
  /** The thinking item the model's thinking streams into, until anything else comes. */
  openThinking?: ThinkingItem;
}

/** The model's thinking of one step, as it streamed: escaped text, its words counted. */
interface ThinkingItem {
  kind: "thinking";
  text: string;
  words: number;
  step?: number;
}

/** The words of `text`, a piece of `before` (a word cut between the two counts once). */
function wordsAdded(before: string, text: string): number {
  const words = text.match(/\S+/g)?.length ?? 0;
  return words > 0 && /\S$/.test(before) && /^\S/.test(text) ? words - 1 : words;
}

/** What a rewind left out of `run` (all of it when `from` is 0, else its steps from `from` on). */
function rewoundView(run: RunState, from: number): RewoundView {
  if (from === 0) {
    return { whole: true, fromItem: 0, label: "rewound: the model no longer sees this run" };
  }
  // An item of no known step (an answer with no events) counts as the run's last.
  const index = run.items.findIndex((item) => (item.step ?? Infinity) >= from);
  return {
    whole: false,
    fromItem: index === -1 ? run.items.length : index,
    label: `rewound to before step ${from}: the model no longer sees what this run did from there`,
  };
}

/** Runs as the panel shows them, oldest first. */
export class PanelModel {
  private readonly runs: RunState[] = [];
  /** Session commands typed so far (their entries' ids). */
  private notes = 0;
  /** The context of runs started here whose run-started has not come yet. */
  private readonly carried = new Map<string, ContextChip[]>();
  /** Runs before this index belong to an earlier conversation (New session hid them)… */
  private shownFrom = 0;
  /** …except those of the session picked from Sessions. */
  private shownSession: string | undefined;

  private readonly events: EventRenderer;

  constructor(private readonly displayPath: (pathOrUri: string) => string) {
    this.events = new EventRenderer(displayPath);
  }

  /** Applies one `agent/event` (as events.ts renders it); true if anything shown changed. */
  apply(event: AgentEventParams): boolean {
    const view = this.events.render(event);
    if (view.kind === "run-started") {
      const context = this.carried.get(view.runId);
      this.carried.delete(view.runId);
      this.runs.push({
        runId: view.runId,
        sessionId: view.sessionId,
        prompt: view.prompt,
        items: [],
        running: true,
        ...(context !== undefined && context.length > 0 ? { context } : {}),
      });
      this.trim();
      return true;
    }
    const run = this.find(view.runId);
    if (run === undefined) {
      return false; // a run from before the panel was built
    }
    if (view.held !== undefined) {
      this.text(run).markdown += view.held; // what the streamed text held back (a final \r)
    }
    if (view.kind !== "thinking") {
      run.openThinking = undefined; // anything else ends the thinking: the next starts anew
    }
    switch (view.kind) {
      case "thinking": {
        if (run.openThinking === undefined) {
          run.openThinking = { kind: "thinking", text: "", words: 0, step: run.step };
          run.items.push(run.openThinking);
        }
        run.openThinking.words += wordsAdded(run.openThinking.text, view.text);
        run.openThinking.text += view.text;
        run.openText = undefined;
        return true;
      }
      case "step":
        run.openText = undefined;
        run.step = view.step;
        return false;
      case "text-delta":
        this.text(run).markdown += view.text;
        return true;
      case "assistant":
        if (view.text !== "") {
          this.text(run).markdown += view.text;
        }
        run.openText = undefined;
        return view.text !== "";
      case "tool-call": {
        run.openText = undefined;
        const { callId, tool, title, detail, stat } = view;
        const card = { callId, tool, title, detail, status: "running" as const };
        const made = stat !== undefined ? { ...card, stat } : card;
        run.items.push({ kind: "tool", card: made, step: run.step });
        return true;
      }
      case "approval": {
        const card = this.card(run, view.callId);
        if (card === undefined) {
          return false;
        }
        card.decision = view.decision;
        if (view.sandbox !== undefined) {
          card.sandbox = view.sandbox;
        } else if (card.sandbox !== undefined && view.asked) {
          // The same call asked again: the sandbox's walls stopped it (its title said why).
          card.sandbox = `${card.sandbox}; its walls stopped it, so it was asked again`;
        }
        if (view.denied) {
          card.status = "denied";
        } else if (card.status === "awaiting") {
          card.status = "running";
        }
        return true;
      }
      case "tool-result": {
        const card = this.card(run, view.callId);
        if (card === undefined) {
          return false;
        }
        if (card.status !== "denied") {
          card.status = view.ok ? "ok" : "failed";
        }
        card.output = view.output;
        delete card.progress;
        return true;
      }
      case "tool-progress": {
        const card = this.card(run, view.callId);
        if (card === undefined || card.status !== "running") {
          return false;
        }
        card.progress = view.status;
        if (view.output !== "") {
          card.output = view.output; // the output so far, until the result's
        }
        return true;
      }
      case "plan":
        run.plan = [...view.plan];
        return true;
      case "usage":
        run.usage = view.usage;
        return true;
      case "run-finished":
        for (const item of run.items) {
          if (item.kind === "tool" && (item.card.status === "running" || item.card.status === "awaiting")) {
            item.card.status = "stopped";
            delete item.card.progress;
          }
        }
        run.running = false;
        run.outcome = view.outcome;
        run.steps = view.steps;
        run.openText = undefined;
        return true;
      default:
        return false;
    }
  }

  /**
   * A pending approval marks its card as waiting for the user; an edit's card then shows the
   * proposal's diff (`diff`), so that it and the approval's card count the same lines.
   */
  awaiting(runId: string, callId: string, diff?: string): void {
    const card = this.find(runId) && this.card(this.find(runId)!, callId);
    if (card === undefined) {
      return;
    }
    if (card.status === "running") {
      card.status = "awaiting";
    }
    if (diff !== undefined && card.stat !== undefined) {
      card.detail = clip(diff);
      card.stat = diffStat(diff);
    }
  }

  /** The result of `agent/run`: totals, changed files, the error. */
  finish(result: AgentRunResult): void {
    const run = this.find(result.runId);
    if (run === undefined) {
      return;
    }
    run.running = false;
    run.outcome = result.outcome;
    run.steps = result.steps;
    run.usage = usageView(result.usage);
    run.changedFiles = (result.changedFiles ?? []).map((uri) => this.displayPath(uri));
    if (result.error) {
      const explained = explainError(result.error);
      run.error = shownText(explained.message);
      run.fix = explained.fix;
    }
    if (run.items.length === 0 && result.answer !== "") {
      run.items.push({ kind: "text", markdown: shownText(result.answer) });
    }
  }

  /** A run that failed before the server answered (no events came). */
  failed(runId: string, prompt: string, error: string): void {
    const run = this.find(runId) ?? this.addRun(runId, prompt);
    run.running = false;
    run.outcome ??= "error";
    run.error = error;
  }

  /** A run that could not run (refused by the server, or no server): why, and its fix. */
  refused(runId: string, prompt: string, explained: Explained): void {
    const started = this.find(runId);
    this.failed(runId, prompt, explained.message);
    const run = this.find(runId)!;
    run.fix = explained.fix;
    run.refused = started === undefined || started.items.length === 0;
  }

  /** A session command typed in the prompt box and its answer, in the conversation. */
  note(input: string, message: string, sessionId: string | undefined, failed = false): void {
    this.notes += 1;
    this.runs.push({
      runId: `command-${this.notes}`,
      sessionId: sessionId ?? "",
      prompt: input,
      items: [],
      running: false,
      command: failed ? { message, failed } : { message },
    });
    this.trim();
  }

  /** The fix of a run's error, if it has one. */
  fixOf(runId: string): Fix | undefined {
    return this.find(runId)?.fix;
  }

  /** The context a run carries, known as it starts (before its run-started event). */
  carries(runId: string, context: RunContext | undefined): void {
    this.carried.set(runId, contextChips(context, this.displayPath));
    if (this.carried.size > MAX_RUNS) {
      this.carried.delete(this.carried.keys().next().value as string);
    }
  }

  /**
   * The conversation shown: a new session shows none of the earlier runs (undefined); a
   * session picked from Sessions shows its runs; runs started from now on show either way.
   */
  showSession(sessionId: string | undefined): void {
    this.shownFrom = this.runs.length;
    this.shownSession = sessionId;
  }

  /**
   * The conversation of session `sessionId` went back to before step `step` of run `runId`
   * (a rewind of `conversation` or `both`): that run's items from that step on, and the
   * session's runs after it, are marked rewound. A run this panel no longer holds is older
   * than every run it shows: then all of the session's are.
   */
  rewound(sessionId: string, runId: string, step: number): void {
    const at = this.runs.findIndex((run) => run.runId === runId);
    this.runs.forEach((run, index) => {
      if (run.sessionId !== sessionId || run.command !== undefined || index < at) {
        return;
      }
      const from = index === at ? Math.max(step, 1) : 0;
      run.rewoundFrom = Math.min(run.rewoundFrom ?? from, from);
    });
  }

  undone(runId: string, note: string): void {
    const run = this.find(runId);
    if (run !== undefined) {
      run.undone = note;
    }
  }

  running(runId: string): boolean {
    return this.find(runId)?.running ?? false;
  }

  sessionOf(runId: string): string | undefined {
    return this.find(runId)?.sessionId;
  }

  /**
   * The run "Undo this run" applies to, as /undo: the last one shown that changed a file and
   * was not undone (a later run that edited nothing is not it).
   */
  undoTarget(): string | undefined {
    const edited = (run: RunState): boolean =>
      (run.changedFiles?.length ?? 0) > 0 ||
      run.items.some(
        (item) => item.kind === "tool" && item.card.stat !== undefined && item.card.status === "ok",
      );
    return [...this.shown()]
      .reverse()
      .find((run) => !run.running && run.sessionId !== "" && run.undone === undefined && edited(run))?.runId;
  }

  /** The runs (and commands) of the conversation shown, oldest first. */
  private shown(): RunState[] {
    return this.runs.filter(
      (run, index) =>
        index >= this.shownFrom || (this.shownSession !== undefined && run.sessionId === this.shownSession),
    );
  }

  /** The runs with their text rendered (each text rendered once per change). */
  views(): RunView[] {
    return this.shown().map((run) => ({
      runId: run.runId,
      sessionId: run.sessionId,
      prompt: run.prompt,
      running: run.running,
      items: run.items.map((item): RunItem => {
        if (item.kind === "tool") {
          return { kind: "tool", card: { ...item.card } };
        }
        if (item.kind === "thinking") {
          return { kind: "thinking", text: item.text, words: item.words };
        }
        item.html ??= renderMarkdown(item.markdown);
        return { kind: "text", html: item.html };
      }),
      summary: run.refused
        ? "could not run"
        : [
            run.outcome,
            run.steps !== undefined ? steps(run.steps) : undefined,
            run.usage && tokens(run.usage),
          ]
            .filter((part) => part)
            .join(" · "),
      ...(run.outcome !== undefined ? { outcome: run.outcome } : {}),
      ...(run.steps !== undefined ? { steps: run.steps } : {}),
      ...(run.usage !== undefined ? { usage: run.usage } : {}),
      ...(run.changedFiles !== undefined ? { changedFiles: run.changedFiles } : {}),
      ...(run.error !== undefined ? { error: run.error } : {}),
      ...(run.fix !== undefined ? { fix: fixLabel(run.fix) } : {}),
      ...(run.undone !== undefined ? { undone: run.undone } : {}),
      ...(run.context !== undefined ? { context: run.context } : {}),
      ...(run.plan !== undefined ? { plan: run.plan.map((step) => ({ ...step })) } : {}),
      ...(run.command !== undefined ? { command: { ...run.command } } : {}),
      ...(run.rewoundFrom !== undefined ? { rewound: rewoundView(run, run.rewoundFrom) } : {}),
    }));
  }

  /** The oldest entries go past MAX_RUNS. */
  private trim(): void {
    const dropped = Math.max(0, this.runs.length - MAX_RUNS);
    this.runs.splice(0, dropped);
    this.shownFrom = Math.max(0, this.shownFrom - dropped);
  }

  private addRun(runId: string, prompt: string): RunState {
    const run: RunState = { runId, sessionId: "", prompt, items: [], running: true };
    this.runs.push(run);
    return run;
  }

  private find(runId: string): RunState | undefined {
    return this.runs.find((run) => run.runId === runId);
  }

  private card(run: RunState, callId: string): Mutable<ToolCard> | undefined {
    for (const item of run.items) {
      if (item.kind === "tool" && item.card.callId === callId) {
        return item.card;
      }
    }
    return undefined;
  }

  /** The text item the step streams into, opened on its first text. */
  private text(run: RunState): { kind: "text"; markdown: string; html?: string; step?: number } {
    if (run.openText === undefined) {
      run.openText = { kind: "text", markdown: "", step: run.step };
      run.items.push(run.openText);
    }
    run.openText.html = undefined; // changed: render again
    return run.openText;
  }
}
