// The whole extension — activate, its commands, the real LanguageClient and the real
// `tether serve` — with only the VS Code API faked: the UI answers come from the test and
// `workspace.applyEdit` writes to a temporary workspace the way VS Code would.
import * as assert from "assert";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pathToFileURL } from "url";
import { activate, deactivate } from "../../src/extension";
import type { AgentRunResult } from "../../src/protocol";
import * as vscode from "../fakeVscode";
import { applyTextEdits } from "./workspaceEdit";

const SERVER = process.env.TETHER_SERVER ?? path.resolve(__dirname, "../../..", "../../.venv/bin/tether");
const APP = "def add(a, b):\n    return a + b\n";

function applyToDisk(edit: vscode.WorkspaceEdit): boolean {
  for (const operation of edit.operations) {
    const file = operation.uri.fsPath;
    if (operation.kind === "create") {
      if (operation.overwrite || !fs.existsSync(file)) {
        fs.writeFileSync(file, "");
      }
    } else {
      fs.writeFileSync(file, applyTextEdits(fs.readFileSync(file, "utf8"), operation.edits));
    }
  }
  return true;
}

/** Child processes of this test process whose command line mentions `serve`. */
function serverChildren(): string[] {
  try {
    const out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" });
    return out.split("\n").filter((line) => / serve\b/.test(line));
  } catch {
    return []; // ps exits 1 when there is no child at all
  }
}

describe("integration: the extension with the real LanguageClient and server (VS Code API faked)", function () {
  this.timeout(20000);
  let root: string;
  let subscriptions: Array<{ dispose(): unknown }>;
  const app = (): string => fs.readFileSync(path.join(root, "app.py"), "utf8");
  const command = (id: string): ((...args: unknown[]) => unknown) => {
    const run = vscode.commands.registered.get(id);
    assert.ok(run, `command ${id} is not registered`);
    return run;
  };
  /** Resolves once an edit approval is pending: the status bar item is up. */
  const whenApprovalShown = (): Promise<void> =>
    vscode.until(() => vscode.statusItems.some((item) => item.visible));
  const writeScript = (name: string, oldText: string, newText: string): void => {
    const call = { name: "edit_file", arguments: { path: "app.py", old_text: oldText, new_text: newText } };
    const script = { turns: [{ text: "Changing the sum.", toolCalls: [call] }, { text: "Done." }] };
    fs.writeFileSync(path.join(root, name), JSON.stringify(script));
  };

  before(async () => {
    assert.ok(fs.existsSync(SERVER), `no server at ${SERVER}: set TETHER_SERVER`);
    vscode.reset();
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "tether-vscode-ext-")));
    fs.writeFileSync(path.join(root, "app.py"), APP);
    writeScript("multiply.json", "a + b", "a * b");
    vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(root), name: "ws" }];
    Object.assign(vscode.settings, { serverPath: SERVER, provider: "scripted", script: "multiply.json" });
    vscode.answers.applyEdit = async (edit) => applyToDisk(edit as vscode.WorkspaceEdit);
    vscode.answers.readFile = async (uri) => fs.readFileSync((uri as vscode.Uri).fsPath);
    subscriptions = [];
    const secrets = {
      get: async () => undefined,
      store: async () => undefined,
      delete: async () => undefined,
    };
    // The server may start from a folder of its own; keep TETHER_* of the shell out of it.
    for (const key of Object.keys(process.env).filter(
      (k) => k.startsWith("TETHER_") && k !== "TETHER_SERVER",
    )) {
      delete process.env[key];
    }
    process.env.TETHER_STATE_DIR = path.join(root, ".state");
    // A key from the shell would make the runs below call a real API.
    delete process.env.OPENAI_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    activate({ subscriptions, secrets, extensionUri: vscode.Uri.file(root) } as unknown as Parameters<
      typeof activate
    >[0]);
  });

  after(async () => {
    await deactivate();
    for (const subscription of subscriptions) {
      subscription.dispose();
    }
    delete process.env.TETHER_STATE_DIR;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("Tether: Run shows the proposal, applies the user's edited version and reports progress", async () => {
    vscode.answers.showInputBox = async () => "multiply instead";
    void whenApprovalShown().then(() => {
      const [diff] = vscode.calls.filter(([name, a]) => name === "executeCommand" && a[0] === "vscode.diff");
      const [, left, right] = diff[1] as [string, vscode.Uri, vscode.Uri];
      assert.strictEqual(left.toString(), pathToFileURL(path.join(root, "app.py")).toString());
      // The user edits the proposed text on the right, then clicks Allow in the editor title.
      vscode.workspace.textDocuments.push(
        vscode.document(right, "def add(a, b):\n    return a * b  # mine\n"),
      );
      command("tether.approval.allow")(right);
    });
    const result = (await command("tether.runPrompt")()) as AgentRunResult | undefined;
    assert.ok(result, "the run did not return a result");
    assert.strictEqual(result.outcome, "done");
    assert.strictEqual(app(), "def add(a, b):\n    return a * b  # mine\n");
    const reports = vscode.calls.filter(([name]) => name === "progress.report").map(([, args]) => args[0]);
    assert.deepStrictEqual(reports[0], { message: "multiply instead" });
    assert.ok(
      reports.some((r) => JSON.stringify(r) === JSON.stringify({ message: "step 1 · edit_file app.py" })),
      JSON.stringify(reports),
    );
    assert.strictEqual(vscode.calls.filter(([name]) => name === "applyEdit").length, 1);
  });

  it("settings changes reach the server; a deny from the editor title leaves the file alone", async () => {
    // The server still holds the agent's edit as the (unsaved, in VS Code) text of app.py.
    const before = app();
    writeScript("subtract.json", "a * b  # mine", "a - b");
    vscode.settings.script = "subtract.json";
    vscode.configurationChanges.fire({
      affectsConfiguration: (section) => "tether.script".startsWith(section),
    });
    vscode.answers.showInputBox = async (options) =>
      (options as { title: string }).title.startsWith("Deny") ? "keep the sum" : "subtract";
    vscode.calls.length = 0;
    void whenApprovalShown().then(() => command("tether.approval.deny")());
    const result = (await command("tether.runPrompt")()) as AgentRunResult | undefined;
    assert.strictEqual(result?.outcome, "done");
    assert.deepStrictEqual(result?.changedFiles, []);
    assert.strictEqual(app(), before);
    assert.strictEqual(vscode.calls.filter(([name]) => name === "applyEdit").length, 0);
    const transcript = vscode.outputs["Tether"];
    assert.ok(
      transcript.includes('→ edit_file {"path":"app.py","old_text":"a * b  # mine","new_text":"a - b"}'),
      transcript,
    );
    assert.ok(transcript.includes("  approval: deny\n✗ edit_file\n"), transcript);
    assert.ok(transcript.includes("The user said: keep the sum"), transcript);
    assert.deepStrictEqual(
      vscode.calls.filter(([name]) => name === "showErrorMessage"),
      [],
      "no error was shown",
    );
  });

  const changeSettings = (change: Record<string, unknown>): void => {
    for (const [key, value] of Object.entries(change)) {
      if (value === undefined) {
        delete vscode.settings[key];
      } else {
        vscode.settings[key] = value;
      }
    }
    const changed = Object.keys(change).map((key) => `tether.${key}`);
    vscode.configurationChanges.fire({
      affectsConfiguration: (section) => changed.some((key) => key.startsWith(section)),
    });
  };

  it("a setting removed applies on the next run, without a restart; the refusal says so with its fix", async () => {
    // The server started with tether.script set (initializationOptions); the user removes it.
    changeSettings({ script: undefined });
    vscode.answers.showInputBox = async () => "multiply again";
    vscode.answers.showErrorMessage = async (_message, ...actions) => actions[0] as string | undefined;
    vscode.calls.length = 0;
    const result = (await command("tether.runPrompt")()) as AgentRunResult | undefined;
    assert.strictEqual(result, undefined, "the run used the removed script");
    const shown = vscode.calls.filter(([name]) => name === "showErrorMessage").map(([, args]) => args);
    assert.deepStrictEqual(shown, [
      [
        "Tether: The scripted provider needs a script: set tether.script to a script file of the workspace.",
        "Open Setting tether.script",
      ],
    ]);
    await vscode.until(() => vscode.calls.some(([name]) => name === "executeCommand"));
    assert.deepStrictEqual(
      vscode.calls.filter(([name]) => name === "executeCommand").map(([, args]) => args),
      [["workbench.action.openSettings", "tether.script"]],
    );
    changeSettings({ script: "subtract.json" });
  });

  it("a prompt typed in the panel that cannot run shows there, in the user's words, with its fix; the text comes back", async () => {
    const panel = vscode.showWebviewView("tether.panel");
    await panel.send({ type: "ready" });
    type Posted = { type: string; prompt?: string; state?: { runs: Array<Record<string, unknown>> } };
    const posted = (): Posted[] => panel.posted as Posted[];
    const runNamed = (prompt: string): Record<string, unknown> | undefined =>
      posted()
        .flatMap((m) => (m.type === "state" ? (m.state?.runs ?? []) : []))
        .reverse()
        .find((r) => r.prompt === prompt && r.error !== undefined);
    const cases: Array<[Record<string, unknown>, string, RegExp, string, unknown[]]> = [
      [
        { provider: undefined },
        "fix the bug",
        /^No model provider is set\. Choose one in the tether\.provider setting/,
        "Open Setting tether.provider",
        ["workbench.action.openSettings", "tether.provider"],
      ],
      [
        { provider: "openai" },
        "fix it with openai",
        /^OpenAI needs an API key\. Store one with Tether: Set API Key .* OPENAI_API_KEY/,
        "Set API Key",
        ["tether.setApiKey"],
      ],
    ];
    for (const [change, prompt, words, button, command] of cases) {
      changeSettings(change);
      vscode.calls.length = 0;
      await panel.send({ type: "run", prompt });
      await vscode.until(() => runNamed(prompt) !== undefined);
      const run = runNamed(prompt)!;
      assert.match(String(run.error), words);
      assert.strictEqual(run.fix, button);
      assert.strictEqual(run.summary, "could not run");
      await vscode.until(() => posted().some((m) => m.type === "restorePrompt" && m.prompt === prompt));
      assert.deepStrictEqual(
        vscode.calls.filter(([name]) => name === "showErrorMessage"),
        [],
        "the panel's prompt was also shown as a notification",
      );
      await panel.send({ type: "fix", runId: run.runId });
      assert.deepStrictEqual(
        vscode.calls.filter(([name]) => name === "executeCommand").map(([, args]) => args),
        [command],
      );
    }
    changeSettings({ provider: "scripted" });
  });

  it("session commands typed in the panel run on its session (agent/command), never as prompts", async () => {
    fs.writeFileSync(path.join(root, "hello.json"), JSON.stringify({ turns: [{ text: "hello" }] }));
    changeSettings({ script: "hello.json" });
    const panel = vscode.showWebviewView("tether.panel");
    await panel.send({ type: "ready" });
    type State = {
      runs: Array<{ runId: string; prompt: string; outcome?: string; command?: { message: string } }>;
      commands: Array<{ name: string }>;
      sessionId?: string;
    };
    const states = (): State[] =>
      (panel.posted as Array<{ type: string; state?: State }>).flatMap((m) => (m.state ? [m.state] : []));
    const last = (): State => states()[states().length - 1];
    /** Waits for `condition`; past the test's time, fails saying what the panel showed. */
    const until = async (what: string, condition: () => boolean): Promise<void> => {
      const deadline = Date.now() + 15000;
      while (!condition()) {
        if (Date.now() > deadline) {
          assert.fail(`${what}; the panel shows ${JSON.stringify(last())}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    await until("the commands", () => states().length > 0 && last().commands.length > 2);
    assert.deepStrictEqual(
      last().commands.map((c) => c.name),
      ["undo", "rewind", "new", "model", "effort", "compact", "cost", "jobs", "resume", "rules"],
    );
    const answerOf = async (input: string): Promise<string> => {
      const seen = new Set(states().flatMap((state) => state.runs.map((run) => run.runId)));
      const answered = () => last().runs.find((run) => !seen.has(run.runId));
      await panel.send({ type: "run", prompt: input });
      await until(input, () => answered() !== undefined);
      const entry = answered()!;
      assert.strictEqual(entry.prompt, input);
      assert.ok(entry.command, `${input} ran as a prompt`);
      return entry.command.message;
    };
    await panel.send({ type: "run", prompt: "say hello" });
    await until("the run", () => last().runs.some((r) => r.prompt === "say hello" && r.outcome === "done"));
    const session = last().sessionId;
    assert.ok(session);
    const runsBefore = (vscode.outputs["Tether"].match(/^▶ /gm) ?? []).length;

    assert.match(
      await answerOf("/cost"),
      new RegExp(`^session ${session}: 1 run · \\d+ in / \\d+ out tokens`),
    );
    assert.strictEqual(await answerOf("/undo"), "nothing to undo: no run of this session edited a file");
    assert.strictEqual(await answerOf("/model tiny"), "model: tiny from the next message on");
    let offered: Array<{ label: string; description?: string }> = [];
    vscode.answers.showQuickPick = async (items) => {
      offered = items as typeof offered;
      return offered[0];
    };
    assert.strictEqual(await answerOf("/model"), "model: tiny from the next message on");
    assert.deepStrictEqual(offered, [{ value: "tiny", label: "tiny", description: "current" }]);
    assert.match(await answerOf("/rules"), /^no rules of yours\nand \d+ built-in read-only rules/);
    assert.strictEqual(await answerOf("/new"), "a new session starts with the next message");
    assert.strictEqual(last().sessionId, undefined);
    vscode.answers.showQuickPick = async (items) =>
      (items as Array<{ description: string }>).find((item) => item.description === session);
    assert.strictEqual(await answerOf("/resume"), "continuing: say hello");
    assert.strictEqual(last().sessionId, session);
    assert.strictEqual(
      (vscode.outputs["Tether"].match(/^▶ /gm) ?? []).length,
      runsBefore,
      "a command went to the model as a prompt",
    );
    changeSettings({ script: "subtract.json" });
  });

  it("Continue Session offers the sessions of this window", async () => {
    let offered: unknown;
    vscode.answers.showQuickPick = async (items) => {
      offered = items;
      return undefined;
    };
    await command("tether.continueSession")();
    assert.strictEqual((offered as unknown[]).length, 3); // the palette's two runs, the panel's one
  });

  it("deactivate stops the server process", async () => {
    assert.strictEqual(serverChildren().length, 1, serverChildren().join("\n"));
    await deactivate();
    const deadline = Date.now() + 5000;
    while (serverChildren().length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepStrictEqual(serverChildren(), []);
  });
});
