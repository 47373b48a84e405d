import * as assert from "assert";
import type { AgentRunParams, AgentRunResult } from "../src/protocol";
import { TetherProtocol, WorkDoneProgress } from "../src/protocolClient";
import type { runContext } from "../src/context";
import { RunBook, Runs } from "../src/run";
import { ServerNotFoundError } from "../src/server";
import { OutputSink, Transcript } from "../src/transcript";
import * as vscode from "./fakeVscode";

function selection(startLine: number, startChar: number, endLine: number, endChar: number) {
  return {
    isEmpty: startLine === endLine && startChar === endChar,
    start: { line: startLine, character: startChar },
    end: { line: endLine, character: endChar },
  };
}

function editor(uri: string, sel = selection(0, 0, 0, 0)) {
  return {
    document: { uri: vscode.Uri.parse(uri), getText: () => "the selected text" },
    selection: sel,
    visibleRanges: [selection(0, 0, 40, 0)],
  } as unknown as Parameters<typeof runContext>[0];
}

function result(
  runId: string,
  sessionId: string,
  outcome: AgentRunResult["outcome"] = "done",
): AgentRunResult {
  return {
    runId,
    sessionId,
    outcome,
    answer: "",
    steps: 2,
    usage: { inputTokens: 1, outputTokens: 1 },
    changedFiles: [],
  };
}

describe("RunBook", () => {
  it("lists the sessions of this window, most recent first, with their prompts", () => {
    const book = new RunBook();
    book.record(result("r1", "s1"), "first");
    book.record(result("r2", "s2"), "other");
    book.record(result("r3", "s1"), "again");
    assert.deepStrictEqual(book.sessions, [
      { sessionId: "s1", firstPrompt: "first", lastPrompt: "again", runs: 2 },
      { sessionId: "s2", firstPrompt: "other", lastPrompt: "other", runs: 1 },
    ]);
  });
});

describe("Runs", () => {
  const sink: OutputSink & { text: string } = {
    text: "",
    append(text) {
      this.text += text;
    },
    appendLine(text) {
      this.text += `${text}\n`;
    },
  };
  const channel = { show: () => undefined } as unknown as ConstructorParameters<typeof Runs>[2];

  function fakeProtocol(finish: (params: AgentRunParams) => Promise<AgentRunResult>) {
    const log: Array<[string, unknown]> = [];
    let progress: ((value: WorkDoneProgress) => void) | undefined;
    const protocol = {
      run: (params: AgentRunParams) => {
        log.push(["run", params]);
        return finish(params);
      },
      onProgress: (token: string, handler: (value: WorkDoneProgress) => void) => {
        log.push(["onProgress", token]);
        progress = handler;
        return { dispose: () => log.push(["progress disposed", token]) };
      },
      cancelProgress: async (token: string) => {
        log.push(["cancelProgress", token]);
      },
      cancel: async (runId: string) => {
        log.push(["cancel", runId]);
        return { cancelled: true };
      },
    };
    return { log, protocol: protocol as unknown as TetherProtocol, progress: () => progress };
  }

  beforeEach(() => {
    vscode.reset();
    sink.text = "";
  });

  it("runs under a cancellable notification fed by the run's own progress token", async () => {
    vscode.window.activeTextEditor = editor("file:///w/a.py", selection(1, 0, 2, 0));
    const fake = fakeProtocol(async (params) => {
      const report = fake.progress();
      report?.({ kind: "begin", title: "Tether", message: "go" });
      report?.({ kind: "report", message: "step 1 · read_file a.py" });
      report?.({ kind: "end", message: "done" });
      return result(String(params.runId), "s1");
    });
    const runs = new Runs(async () => fake.protocol, new Transcript(sink), channel);
    const done = await runs.start("go", "s0");
    const [, params] = fake.log[1] as [string, AgentRunParams];
    assert.strictEqual(done?.runId, params.runId);
    assert.deepStrictEqual(params, {
      prompt: "go",
      runId: params.runId,
      workDoneToken: `tether-${params.runId}`,
      sessionId: "s0",
      context: {
        uri: "file:///w/a.py",
        selection: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } },
        selectedText: "the selected text",
        visibleRange: { start: { line: 0, character: 0 }, end: { line: 40, character: 0 } },
      },
    });
    assert.deepStrictEqual(
      fake.log.map(([what]) => what),
      ["onProgress", "run", "progress disposed"],
    );
    const progressCalls = vscode.calls.filter(
      ([name]) => name === "withProgress" || name === "progress.report",
    );
    assert.deepStrictEqual(progressCalls, [
      [
        "withProgress",
        [{ location: vscode.ProgressLocation.Notification, title: "Tether", cancellable: true }],
      ],
      ["progress.report", [{ message: "go" }]],
      ["progress.report", [{ message: "step 1 · read_file a.py" }]],
    ]);
    assert.deepStrictEqual(
      runs.book.sessions.map((s) => s.sessionId),
      ["s1"],
    );
    assert.strictEqual(runs.book.inFlight.size, 0);
    assert.match(sink.text, /\n {2}outcome done · 2 steps · 1 in \/ 1 out tokens\n\n$/);
  });

  it("maps the notification's Cancel to window/workDoneProgress/cancel for the run's token", async () => {
    const fake = fakeProtocol(
      (params) =>
        new Promise((resolve) => {
          vscode.progressCancel.cancel();
          setImmediate(() => resolve(result(String(params.runId), "s", "cancelled")));
        }),
    );
    const runs = new Runs(async () => fake.protocol, new Transcript(sink), channel);
    const done = await runs.start("slow");
    assert.strictEqual(done?.outcome, "cancelled");
    assert.deepStrictEqual(
      fake.log.find(([what]) => what === "cancelProgress"),
      ["cancelProgress", `tether-${done?.runId}`],
    );
    assert.deepStrictEqual(
      vscode.calls.filter(([name]) => name === "showWarningMessage"),
      [],
    );
    const [status] = vscode.calls.filter(([name]) => name === "setStatusBarMessage");
    assert.deepStrictEqual(status, ["setStatusBarMessage", ["Tether: cancelled · 2 steps", 5000]]);
  });

  it("warns when a run stops for another reason than done or cancel", async () => {
    const fake = fakeProtocol(async (params) => ({
      ...result(String(params.runId), "s", "error"),
      error: "provider failed",
    }));
    const runs = new Runs(async () => fake.protocol, new Transcript(sink), channel);
    await runs.start("go");
    assert.deepStrictEqual(
      vscode.calls.filter(([name]) => name === "showWarningMessage"),
      [["showWarningMessage", ["Tether stopped: error: provider failed", "Show Log"]]],
    );
  });

  it("warns with the run's error escaped: a provider's controls and bidi overrides written out", async () => {
    const fake = fakeProtocol(async (params) => ({
      ...result(String(params.runId), "s", "error"),
      error: "provider \u001b[2Kfailed\u202e\nagain",
    }));
    const runs = new Runs(async () => fake.protocol, new Transcript(sink), channel);
    await runs.start("go");
    assert.deepStrictEqual(
      vscode.calls.filter(([name]) => name === "showWarningMessage"),
      [["showWarningMessage", ["Tether stopped: error: provider \\x1b[2Kfailed\\u202e\\nagain", "Show Log"]]],
    );
  });

  it("shows the run in one place: from the panel, or while it is visible, no notification, no Output panel, no toast", async () => {
    for (const [how, visible] of [
      [{ inPanel: true }, false],
      [{}, true],
    ] as const) {
      vscode.reset();
      const shown: unknown[] = [];
      const output = { show: (...args: unknown[]) => shown.push(args) } as unknown as ConstructorParameters<
        typeof Runs
      >[2];
      const fake = fakeProtocol(async (params) => {
        fake.progress()?.({ kind: "report", message: "step 1 · bash" });
        return { ...result(String(params.runId), "s", "error"), error: "provider failed" };
      });
      const runs = new Runs(
        async () => fake.protocol,
        new Transcript(sink),
        output,
        undefined,
        () => visible,
      );
      await runs.start("go", undefined, how);
      assert.deepStrictEqual(shown, [], "the Output panel stays closed");
      assert.deepStrictEqual(
        vscode.calls.filter(([name]) => name === "withProgress"),
        [["withProgress", [{ location: vscode.ProgressLocation.Window, title: "Tether" }]]],
      );
      assert.deepStrictEqual(
        vscode.calls.filter(([name]) => name === "showWarningMessage" || name === "showErrorMessage"),
        [],
      );
      assert.deepStrictEqual(
        vscode.calls.filter(([name]) => name === "setStatusBarMessage"),
        [["setStatusBarMessage", ["Tether: error · 2 steps", 5000]]],
      );
    }
    // Hidden panel, palette run: the notification and the Output panel, as before.
    vscode.reset();
    const shown: unknown[] = [];
    const output = { show: (...args: unknown[]) => shown.push(args) } as unknown as ConstructorParameters<
      typeof Runs
    >[2];
    const fake = fakeProtocol(async (params) => result(String(params.runId), "s"));
    await new Runs(
      async () => fake.protocol,
      new Transcript(sink),
      output,
      undefined,
      () => false,
    ).start("go");
    assert.deepStrictEqual(shown, [[true]]);
    assert.deepStrictEqual(vscode.calls.filter(([name]) => name === "withProgress")[0][1], [
      { location: vscode.ProgressLocation.Notification, title: "Tether", cancellable: true },
    ]);
  });

  it("reports a refused run (e.g. no provider) without throwing: the user's words and the fix", async () => {
    const refusal =
      "agent/run: provider: no model provider is configured; set initializationOptions.provider " +
      "(or TETHER_PROVIDER) to one of: scripted, openai, anthropic";
    const fake = fakeProtocol(() => Promise.reject(new Error(refusal)));
    const runs = new Runs(async () => fake.protocol, new Transcript(sink), channel);
    const settled: unknown[] = [];
    runs.onSettled((_runId, prompt, how) => settled.push([prompt, how]));
    assert.strictEqual(await runs.start("go"), undefined);
    const fix = { kind: "setting", key: "provider" };
    const message =
      "No model provider is set. Choose one in the tether.provider setting: openai or anthropic " +
      "(scripted plays a script, for demos).";
    assert.deepStrictEqual(
      vscode.calls.filter(([name]) => name === "showErrorMessage"),
      [["showErrorMessage", [`Tether: ${message}`, "Open Setting tether.provider"]]],
    );
    assert.deepStrictEqual(settled, [["go", { refused: { message, fix } }]]);
    // The transcript keeps the server's own words.
    assert.ok(sink.text.endsWith(`could not run: ${refusal}\n`), sink.text);
  });

  it("a run that could not connect to a server says where to set its path", async () => {
    const runs = new Runs(
      async () => {
        throw new ServerNotFoundError("the Tether server was not found");
      },
      new Transcript(sink),
      channel,
    );
    vscode.answers.showErrorMessage = async (_message, ...actions) => actions[0] as string | undefined;
    assert.strictEqual(await runs.start("go"), undefined);
    await vscode.until(() => vscode.calls.some(([name]) => name === "executeCommand"));
    assert.deepStrictEqual(
      vscode.calls.filter(([name]) => name.startsWith("show") || name === "executeCommand"),
      [
        ["showErrorMessage", ["Tether: the Tether server was not found", "Open Setting tether.serverPath"]],
        ["executeCommand", ["workbench.action.openSettings", "tether.serverPath"]],
      ],
    );
  });

  it("cancels the only run in flight with agent/cancel; says so when there is none", async () => {
    const fake = fakeProtocol(async () => result("r", "s"));
    const runs = new Runs(async () => fake.protocol, new Transcript(sink), channel);
    await runs.cancel();
    assert.deepStrictEqual(vscode.calls.at(-1), ["showInformationMessage", ["Tether: no run in progress."]]);
    runs.book.inFlight.set("r7", "slow");
    await runs.cancel();
    assert.deepStrictEqual(fake.log, [["cancel", "r7"]]);
  });

  it("continues a picked session with its id", async () => {
    const fake = fakeProtocol(async (params) => result(String(params.runId), String(params.sessionId)));
    const runs = new Runs(async () => fake.protocol, new Transcript(sink), channel);
    runs.book.record(result("r1", "s1"), "first");
    vscode.answers.showQuickPick = async (items) => (items as Array<{ description: string }>)[0];
    vscode.answers.showInputBox = async () => " more ";
    const done = await runs.continueSession();
    assert.strictEqual(done?.sessionId, "s1");
    const [, params] = fake.log[1] as [string, AgentRunParams];
    assert.strictEqual(params.prompt, "more");
    assert.deepStrictEqual(runs.book.sessions[0], {
      sessionId: "s1",
      firstPrompt: "first",
      lastPrompt: "more",
      runs: 2,
    });
  });
});
