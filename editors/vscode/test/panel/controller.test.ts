import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import type {
  AgentApproveParams,
  AgentEventParams,
  AgentRunResult,
  Rule,
  RunContext,
} from "../../src/protocol";
import { withoutParts } from "../../src/context";
import { PanelController, PanelServices, undoNote } from "../../src/panel/controller";
import type { PanelState, ToView } from "../../src/panel/messages";
import { EditorApprovals, SharedApprovals } from "../../src/panel/sharedApprovals";
import * as vscode from "../fakeVscode";

const GOLDEN = path.resolve(__dirname, "../../../../../tests/golden");
const [, BASH] = JSON.parse(
  fs.readFileSync(path.join(GOLDEN, "agent-approve.params.json"), "utf8"),
) as AgentApproveParams[];

const RULE: Rule = { tool: "bash", pattern: "echo ran > ran.txt", decision: "allow", scope: "project" };
const BUILTIN: Rule = { tool: "bash", pattern: "ls *", decision: "allow", scope: "builtin" };

/** A server with a run that streams its events, undo, sessions and a rules store. */
class FakeServer implements PanelServices {
  readonly calls: string[] = [];
  commands?: PanelServices["commands"];
  command?: PanelServices["command"];
  pick?: PanelServices["pick"];
  rulesStored: Rule[] = [RULE, BUILTIN];
  onEvent: (event: AgentEventParams) => void = () => undefined;
  finishRun: (result: AgentRunResult) => void = () => undefined;

  leftOut: string[][] = [];
  context: RunContext | undefined = undefined;

  editorContext(): RunContext | undefined {
    return this.context;
  }
  async files(query: string): Promise<string[]> {
    return ["src/app.py", "src/apple.py", "README.md"].filter((f) => f.includes(query));
  }

  run(
    prompt: string,
    sessionId: string | undefined,
    onRunId: (id: string) => void,
    leaveOut: ReadonlySet<string> = new Set(),
  ): Promise<AgentRunResult | undefined> {
    this.calls.push(`run ${prompt} ${sessionId ?? "-"}`);
    this.leftOut.push([...leaveOut].sort());
    onRunId("r-1");
    let seq = 0;
    const send = (e: Record<string, unknown>): void =>
      this.onEvent({ runId: "r-1", seq: ++seq, ...e } as AgentEventParams);
    send({ kind: "run-started", prompt, sessionId: sessionId ?? "s-new" });
    send({ kind: "text-delta", text: "Sure, " });
    send({ kind: "text-delta", text: "`done`." });
    return new Promise((resolve) => (this.finishRun = resolve));
  }
  async cancel(runId: string): Promise<void> {
    this.calls.push(`cancel ${runId}`);
  }
  async undo(runId: string) {
    this.calls.push(`undo ${runId}`);
    return { reverted: ["file:///w/app.py"] };
  }
  async sessions() {
    return [
      {
        sessionId: "s-old",
        title: "earlier work",
        createdAt: "t0",
        updatedAt: "t1",
        runs: 2,
        lastOutcome: "done" as const,
      },
    ];
  }
  async rules(sessionId: string | undefined) {
    this.calls.push(`rules ${sessionId ?? "-"}`);
    return { rules: [...this.rulesStored], readOnlyDefaults: true };
  }
  async removeRule(rule: Rule, sessionId: string | undefined): Promise<boolean> {
    this.calls.push(`remove ${rule.pattern} ${rule.scope} ${sessionId ?? "-"}`);
    const before = this.rulesStored.length;
    this.rulesStored = this.rulesStored.filter((r) => JSON.stringify(r) !== JSON.stringify(rule));
    return this.rulesStored.length < before;
  }
}

const noEditor: EditorApprovals = {
  approve: () => vscode.never(),
  runEnded: () => undefined,
  decide: () => false,
};

describe("panel: controller", () => {
  let server: FakeServer;
  let posted: ToView[];
  let shared: SharedApprovals;
  let controller: PanelController;
  const states = (): PanelState[] => posted.flatMap((m) => (m.type === "state" ? [m.state] : []));
  const last = (): PanelState => states()[states().length - 1];
  const settle = async (): Promise<void> => {
    const count = posted.length;
    await vscode.until(() => posted.length > count);
  };

  beforeEach(() => {
    vscode.reset();
    server = new FakeServer();
    const sink: ToView[] = []; // this test's own: a post left over from the last test goes elsewhere
    posted = sink;
    shared = new SharedApprovals(noEditor, () => true);
    controller = new PanelController(
      server,
      shared,
      (m) => sink.push(m),
      (p) => p.replace("file:///w/", ""),
      0,
    );
    server.onEvent = (e) => controller.onEvent(e);
  });

  it("on ready posts the state, then the sessions and rules (built-ins not revocable)", async () => {
    await controller.handle({ type: "ready" });
    await vscode.until(() => last().rules.length === 2 && last().sessions.length === 1);
    assert.deepStrictEqual(
      last().rules.map((r) => [r.rule.pattern, r.removable]),
      [
        ["echo ran > ran.txt", true],
        ["ls *", false],
      ],
    );
    assert.strictEqual(last().sessions[0].title, "earlier work");
  });

  it("runs a prompt: streamed answer while running with Cancel's run id, then outcome, and the next prompt continues the session", async () => {
    const done = controller.handle({ type: "run", prompt: "  do it \n" });
    await vscode.until(() => states().some((m) => m.activeRunId === "r-1" && m.runs[0]?.items.length === 1));
    const running = last();
    assert.deepStrictEqual(running.runs[0].items, [
      { kind: "text", html: "<p>Sure, <code>done</code>.</p>" },
    ]);
    await controller.handle({ type: "cancel" });
    assert.ok(server.calls.includes("cancel r-1"));
    await controller.handle({ type: "run", prompt: "second while running" }); // ignored: one at a time
    server.finishRun({
      runId: "r-1",
      sessionId: "s-new",
      outcome: "cancelled",
      answer: "",
      steps: 1,
      usage: { inputTokens: 5, outputTokens: 2, costUsd: 0.5 },
    });
    await done;
    await settle();
    const finished = last();
    assert.strictEqual(finished.activeRunId, undefined);
    assert.deepStrictEqual(
      [finished.runs[0].outcome, finished.runs[0].usage],
      ["cancelled", { inputTokens: 5, outputTokens: 2, costUsd: 0.5 }],
    );
    assert.strictEqual(finished.sessionId, "s-new");
    assert.strictEqual(finished.undoRunId, undefined); // it changed no file: nothing to undo
    assert.deepStrictEqual(
      server.calls.filter((c) => c.startsWith("run ")),
      ["run do it -"],
    );

    const next = controller.handle({ type: "run", prompt: "more" });
    await vscode.until(() => server.calls.includes("run more s-new"));
    server.finishRun({ runId: "r-1", sessionId: "s-new", outcome: "done", answer: "", steps: 1, usage: {} });
    await next;
  });

  it("a run started from the palette while the panel shows has its Cancel here; the panel's prompt waits for it", async () => {
    controller.onRunStarted("p-1", undefined);
    await vscode.until(() => last()?.activeRunId === "p-1");
    await controller.handle({ type: "cancel" });
    assert.ok(server.calls.includes("cancel p-1"));
    await controller.handle({ type: "run", prompt: "mine" }); // ignored: one at a time
    assert.deepStrictEqual(
      server.calls.filter((c) => c.startsWith("run ")),
      [],
    );
    controller.onSettled("p-1", "from the palette", {
      result: { runId: "p-1", sessionId: "s-p", outcome: "cancelled", answer: "", steps: 1, usage: {} },
    });
    await vscode.until(() => last().activeRunId === undefined);
  });

  it("Undo this run calls agent/undo and says what it reverted", async () => {
    const done = controller.handle({ type: "run", prompt: "edit" });
    await vscode.until(() => server.calls.includes("run edit -"));
    server.finishRun({
      runId: "r-1",
      sessionId: "s-new",
      outcome: "done",
      answer: "",
      steps: 1,
      usage: {},
      changedFiles: ["file:///w/app.py"],
    });
    await done;
    await settle();
    assert.strictEqual(last().undoRunId, "r-1");
    await controller.handle({ type: "undo", runId: "r-1" });
    // The state that tells the undo (a post from the run's end may come before it).
    await vscode.until(() => posted.length > 0 && last().runs[0]?.undone !== undefined);
    assert.strictEqual(last().runs[0].undone, "reverted app.py");
    assert.strictEqual(last().undoRunId, undefined); // done once
  });

  it("says which files undo only partly reverted, and how many hunks it kept", () => {
    const shown = (uri: string) => uri.replace("file:///w/", "");
    const note = undoNote(
      {
        reverted: ["file:///w/a.py"],
        partial: [
          { uri: "file:///w/b.py", revertedHunks: 2, keptHunks: 1 },
          { uri: "file:///w/c.py", revertedHunks: 1, keptHunks: 0 },
        ],
      },
      shown,
    );
    assert.strictEqual(
      note,
      "reverted a.py; partly reverted b.py (2 hunks put back, 1 changed since kept as they are); " +
        "partly reverted c.py (1 hunk put back, the changes made since kept)",
    );
  });

  it("shows the context chips a prompt takes along, each a toggle; the run carries and shows what it sent", async () => {
    server.context = {
      uri: "file:///w/app.py",
      selection: { start: { line: 3, character: 0 }, end: { line: 6, character: 0 } },
      selectedText: "def add(a, b):\n    return a * b\n",
      openFiles: ["file:///w/app.py", "file:///w/util.py"],
    };
    controller.editorChanged();
    await settle();
    assert.deepStrictEqual(last().context, [
      { part: "file", label: "app.py", included: true },
      {
        part: "selection",
        label: "app.py:4–6",
        detail: "def add(a, b):\n    return a * b\n",
        included: true,
      },
      { part: "openFiles", label: "2 open files", detail: "app.py\nutil.py", included: true },
    ]);
    await controller.handle({ type: "toggleContext", part: "openFiles" });
    await settle();
    assert.deepStrictEqual(
      last().context.map((c) => c.included),
      [true, true, false],
    );
    const done = controller.handle({ type: "run", prompt: "explain" });
    await vscode.until(() => server.calls.includes("run explain -"));
    assert.deepStrictEqual(server.leftOut, [["openFiles"]]);
    // What Runs passes on as the run starts (before run-started, as here: the run began already).
    controller.onRunStarted("r-2", withoutParts(server.context, new Set(["openFiles"])));
    server.onEvent({
      runId: "r-2",
      seq: 1,
      kind: "run-started",
      prompt: "x",
      sessionId: "s",
    } as AgentEventParams);
    await settle();
    assert.deepStrictEqual(
      last()
        .runs.find((r) => r.runId === "r-2")
        ?.context?.map((c) => c.label),
      ["app.py", "app.py:4–6"],
    );
    server.finishRun({ runId: "r-1", sessionId: "s-new", outcome: "done", answer: "", steps: 1, usage: {} });
    await done;
    await controller.handle({ type: "files", query: "app" });
    assert.deepStrictEqual(posted.at(-1), {
      type: "files",
      query: "app",
      files: ["src/app.py", "src/apple.py"],
    });
  });

  it("New session starts an empty conversation; the session picked from Sessions shows its runs again", async () => {
    const done = controller.handle({ type: "run", prompt: "first" });
    await vscode.until(() => server.calls.includes("run first -"));
    server.finishRun({ runId: "r-1", sessionId: "s-new", outcome: "done", answer: "", steps: 1, usage: {} });
    await done;
    await settle();
    assert.strictEqual(last().runs.length, 1);
    await controller.handle({ type: "pickSession", sessionId: null });
    await settle();
    assert.deepStrictEqual(last().runs, []);
    assert.strictEqual(last().sessionId, undefined);
    server.sessions = async () => [
      {
        sessionId: "s-new",
        title: "first",
        createdAt: "t0",
        updatedAt: "t1",
        runs: 1,
        lastOutcome: "done" as const,
      },
    ];
    await controller.handle({ type: "refreshSessions" });
    await controller.handle({ type: "pickSession", sessionId: "s-new" });
    await settle();
    assert.deepStrictEqual(
      last().runs.map((r) => r.prompt),
      ["first"],
    );
  });

  it("picking a session continues it and lists its rules; New session forgets it", async () => {
    await controller.handle({ type: "refreshSessions" });
    await controller.handle({ type: "pickSession", sessionId: "s-old" });
    await settle();
    assert.deepStrictEqual([last().sessionId, last().sessionTitle], ["s-old", "earlier work"]);
    assert.ok(server.calls.includes("rules s-old"));
    await controller.handle({ type: "pickSession", sessionId: null });
    await settle();
    assert.strictEqual(last().sessionId, undefined);
  });

  it("revokes a rule through agent/rules/remove and shows the list the server has now", async () => {
    await controller.handle({ type: "refreshRules" });
    await controller.handle({ type: "revokeRule", rule: RULE });
    await settle();
    assert.ok(server.calls.includes("remove echo ran > ran.txt project -"));
    assert.deepStrictEqual(
      last().rules.map((r) => r.rule.pattern),
      ["ls *"],
    );
    assert.strictEqual(last().notice, undefined);
    await controller.handle({ type: "revokeRule", rule: RULE }); // gone already
    await settle();
    assert.match(last().notice ?? "", /No such rule any more: bash echo ran > ran.txt/);
  });

  it("shows a pending approval and answers it from the card", async () => {
    const answer = shared.approve(BASH, new vscode.CancellationTokenSource().token as never);
    await vscode.until(() => states().some((m) => m.approvals.length === 1));
    assert.deepStrictEqual(last().approvals[0], {
      callId: "call_3_1",
      runId: "r-1",
      title: "Run python -m unittest",
      alsoIn: "none",
      kind: "command",
      subject: "python -m unittest",
      cwd: "/work/app",
      editable: true,
      suggestions: ["python -m unittest", "python -m unittest *"],
    });
    await controller.handle({
      type: "approve",
      callId: "call_3_1",
      answer: { choice: "deny", feedback: "not now" },
    });
    assert.deepStrictEqual(await answer, { decision: "deny", feedback: "not now" });
    await vscode.until(() => last().approvals.length === 0);
    await controller.handle({ type: "approve", callId: "call_3_1", answer: { choice: "allow" } });
    await settle();
    assert.strictEqual(last().notice, "That approval is no longer pending.");
  });

  it("Edit in Diff Editor asks the shared approvals to show that diff", async () => {
    const shown: string[] = [];
    shared.reveal = async (callId: string) => {
      shown.push(callId);
      return false;
    };
    await controller.handle({ type: "reveal", callId: "c-9" });
    await settle();
    assert.deepStrictEqual(shown, ["c-9"]);
    assert.strictEqual(last().notice, "That approval is no longer pending.");
  });

  it("/effort without a level offers the levels in a pick, the current one marked; a typed level needs no pick", async () => {
    const asked: unknown[] = [];
    server.commands = async () => [
      {
        name: "effort",
        description: "show or change how hard the model thinks",
        argument: "[off|low|medium|high]",
      },
    ];
    server.command = async (params) => {
      asked.push(params);
      return params.argument
        ? { message: `effort: ${params.argument} from the next message on` }
        : {
            message: "effort: low; /effort off|low|medium|high changes it",
            choices: ["off", "low", "medium", "high"],
          };
    };
    const picks: unknown[] = [];
    server.pick = async (title, items) => {
      picks.push([title, items]);
      return items[3].value;
    };
    await controller.handle({ type: "ready" });
    await vscode.until(() => last().commands.some((c) => c.name === "effort"));
    const entry = (input: string) => last().runs.find((r) => r.prompt === input && r.command !== undefined);
    await controller.handle({ type: "run", prompt: "/effort" });
    await settle();
    assert.deepStrictEqual(picks, [
      [
        "Tether: how hard the model thinks in the next prompts (or type /effort LEVEL in the panel)",
        [
          { value: "off", label: "off" },
          { value: "low", label: "low", description: "current" },
          { value: "medium", label: "medium" },
          { value: "high", label: "high" },
        ],
      ],
    ]);
    assert.strictEqual(entry("/effort")?.command?.message, "effort: high from the next message on");
    await controller.handle({ type: "run", prompt: "/effort medium" });
    await settle();
    assert.strictEqual(picks.length, 1);
    assert.deepStrictEqual(asked, [
      { name: "effort" },
      { name: "effort", argument: "high" },
      { name: "effort", argument: "medium" },
    ]);
  });

  it("session commands typed in the box run with agent/command on the panel's session, their answers in the conversation", async () => {
    const asked: unknown[] = [];
    server.commands = async () => [
      { name: "undo", description: "put back the last run's edits" },
      { name: "new", description: "start a new session" },
      { name: "model", description: "show or change the model", argument: "[NAME]" },
      { name: "cost", description: "tokens and cost of the session" },
    ];
    server.command = async (params) => {
      asked.push(params);
      switch (params.name) {
        case "cost":
          return { message: "session s-new: 1 run · 10 in / 2 out tokens · $0.0001" };
        case "undo":
          return { message: "undid run r-1\n  put back: app.py", files: ["file:///w/app.py"] };
        case "new":
          return { message: "a new session starts with the next message", newSession: true };
        default:
          return params.argument
            ? { message: `model: ${params.argument} from the next message on` }
            : {
                message: "model: gpt-5.4 (openai); /model NAME changes it",
                choices: ["gpt-5.4", "gpt-5.4-mini"],
              };
      }
    };
    const picks: unknown[] = [];
    server.pick = async (title, items) => {
      picks.push([title, items]);
      return items[1].value;
    };
    await controller.handle({ type: "ready" });
    await vscode.until(() => last().commands.length === 6);
    assert.deepStrictEqual(
      last().commands.map((c) => c.name),
      ["undo", "new", "model", "cost", "resume", "rules"],
    );
    const done = controller.handle({ type: "run", prompt: "edit" });
    await vscode.until(() => server.calls.includes("run edit -"));
    server.finishRun({ runId: "r-1", sessionId: "s-new", outcome: "done", answer: "", steps: 1, usage: {} });
    await done;
    const entry = (input: string) => last().runs.find((r) => r.prompt === input && r.command !== undefined);

    await controller.handle({ type: "run", prompt: "/cost" });
    await settle();
    assert.deepStrictEqual(entry("/cost")?.command, {
      message: "session s-new: 1 run · 10 in / 2 out tokens · $0.0001",
    });
    await controller.handle({ type: "run", prompt: "/model" });
    await settle();
    assert.deepStrictEqual(picks, [
      [
        "Tether: the model of the next prompts (or type /model NAME in the panel)",
        [
          { value: "gpt-5.4", label: "gpt-5.4", description: "current" },
          { value: "gpt-5.4-mini", label: "gpt-5.4-mini" },
        ],
      ],
    ]);
    assert.strictEqual(entry("/model")?.command?.message, "model: gpt-5.4-mini from the next message on");
    await controller.handle({ type: "run", prompt: "/undo" });
    await settle();
    assert.strictEqual(last().runs.find((r) => r.runId === "r-1")?.undone, "put back: app.py");
    await controller.handle({ type: "run", prompt: "/new" });
    await settle();
    assert.strictEqual(last().sessionId, undefined);
    assert.deepStrictEqual(
      last().runs.map((r) => r.prompt),
      ["/new"],
    );
    // Not a command: a prompt that starts with a slash.
    const prompt = controller.handle({ type: "run", prompt: "/etc/hosts is wrong" });
    await vscode.until(() => server.calls.includes("run /etc/hosts is wrong -"));
    server.finishRun({ runId: "r-1", sessionId: "s-2", outcome: "done", answer: "", steps: 1, usage: {} });
    await prompt;
    assert.deepStrictEqual(asked, [
      { name: "cost", sessionId: "s-new" },
      { name: "model", sessionId: "s-new" },
      { name: "model", sessionId: "s-new", argument: "gpt-5.4-mini" },
      { name: "undo", sessionId: "s-new" },
      { name: "new", sessionId: "s-new" },
    ]);
    assert.deepStrictEqual(
      server.calls.filter((c) => c.startsWith("run ")),
      ["run edit -", "run /etc/hosts is wrong -"],
    );
  });

  it("/resume continues a stored session picked (or named); /rules lists the rules in force", async () => {
    server.pick = async (_title, items) => items[0].value;
    await controller.handle({ type: "run", prompt: "/resume" });
    await settle();
    assert.deepStrictEqual(
      [last().sessionId, last().runs.at(-1)?.command?.message],
      ["s-old", "continuing: earlier work"],
    );
    await controller.handle({ type: "run", prompt: "/resume nothing-like-it" });
    await settle();
    assert.strictEqual(
      last().runs.at(-1)?.command?.message,
      "no stored session is nothing-like-it; /resume alone lists them",
    );
    await controller.handle({ type: "run", prompt: "/rules" });
    await settle();
    assert.strictEqual(
      last().runs.at(-1)?.command?.message,
      "allow bash: echo ran > ran.txt (project)\nand 1 built-in read-only rules (Rules, above, lists them)",
    );
  });

  it("a command the server refuses says why in the conversation", async () => {
    server.commands = async () => [{ name: "undo", description: "put back the last run's edits" }];
    server.command = async () => {
      throw new Error("agent/command: run 'r-1' is still in flight; cancel it first");
    };
    await controller.handle({ type: "run", prompt: "/undo" });
    await settle();
    assert.deepStrictEqual(last().runs.at(-1)?.command, {
      message: "run 'r-1' is still in flight; cancel it first",
      failed: true,
    });
  });

  it("ignores malformed messages and says why a request failed", async () => {
    await controller.handle({ type: "revokeRule", rule: { pattern: 1 } });
    assert.deepStrictEqual(server.calls, []);
    server.undo = async () => {
      throw new Error("runId: no such run");
    };
    await controller.handle({ type: "undo", runId: "r-9" });
    await settle();
    assert.strictEqual(last().notice, "runId: no such run");
  });
});
