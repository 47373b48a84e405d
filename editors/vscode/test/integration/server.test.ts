// The extension's protocol layer against the real `tether serve` over stdio: whole scripted
// runs with approvals answered by the extension's own answer logic, edits applied to a
// temporary workspace, progress, cancel and a clean shutdown.
import * as assert from "assert";
import { ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pathToFileURL } from "url";
import {
  MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from "vscode-jsonrpc/node";
import type { ApplyWorkspaceEditParams, InitializeResult } from "vscode-languageserver-protocol";
import { buildAnswer, commandAnswer, diffAnswer } from "../../src/answers";
import type {
  AgentApproveParams,
  AgentApproveResult,
  AgentEventParams,
  AgentSaveDocumentsParams,
  DiffPreview,
  Script,
  ToolResultEvent,
} from "../../src/protocol";
import { PROTOCOL_VERSION } from "../../src/protocol";
import { editedWindow, proposalTexts } from "../../src/proposal";
import { CLIENT_CAPABILITIES, TetherProtocol, WorkDoneProgress } from "../../src/protocolClient";
import { applyWorkspaceEdit } from "./workspaceEdit";

const EXTENSION_ROOT = path.resolve(__dirname, "../../..");
const SERVER = process.env.TETHER_SERVER ?? path.resolve(EXTENSION_ROOT, "../../.venv/bin/tether");
const APP = "def add(a, b):\n    return a + b\n";

function editApp(oldText: string, newText: string): Script {
  return {
    turns: [
      {
        text: "I'll fix the sum.",
        toolCalls: [
          { name: "edit_file", arguments: { path: "app.py", old_text: oldText, new_text: newText } },
        ],
      },
      { text: "Fixed." },
    ],
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe("integration: the protocol layer against the real tether serve", function () {
  this.timeout(20000);

  let root: string;
  let child: ChildProcess;
  let stderr = "";
  let connection: MessageConnection;
  let protocol: TetherProtocol;
  let initialized: InitializeResult;
  let events: AgentEventParams[] = [];
  let approvals: AgentApproveParams[] = [];
  let applied: ApplyWorkspaceEditParams[] = [];
  let saves: AgentSaveDocumentsParams[] = [];
  let messages: unknown[] = [];
  let answer: (params: AgentApproveParams) => AgentApproveResult = () => ({ decision: "allow" });
  const app = (): string => fs.readFileSync(path.join(root, "app.py"), "utf8");
  const appUri = (): string => pathToFileURL(path.join(root, "app.py")).toString();
  const eventsOf = (runId: string): AgentEventParams[] => events.filter((e) => e.runId === runId);
  const results = (runId: string): ToolResultEvent[] =>
    eventsOf(runId).filter((e): e is ToolResultEvent => e.kind === "tool-result");

  before(async function () {
    assert.ok(fs.existsSync(SERVER), `no server at ${SERVER}: set TETHER_SERVER`);
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "tether-vscode-")));
    fs.mkdirSync(path.join(root, "ws"));
    const state = path.join(root, "state");
    root = path.join(root, "ws");
    fs.writeFileSync(path.join(root, "app.py"), APP);
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("TETHER_")));
    child = spawn(SERVER, ["serve"], { cwd: root, env: { ...env, TETHER_STATE_DIR: state }, stdio: "pipe" });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    connection = createMessageConnection(
      new StreamMessageReader(child.stdout!),
      new StreamMessageWriter(child.stdin!),
    );
    protocol = new TetherProtocol(connection, {
      onEvent: (event) => events.push(event),
      approve: async (params) => {
        approvals.push(params);
        return answer(params);
      },
      saveDocuments: async (params) => {
        saves.push(params);
        return { saved: params.uris };
      },
      applyEdit: async (params) => {
        applied.push(params);
        return applyWorkspaceEdit(params);
      },
    });
    connection.onNotification("window/showMessage", (params) => messages.push(params));
    connection.onRequest("window/workDoneProgress/create", () => null); // runs without a token
    connection.listen();
    const rootUri = pathToFileURL(root).toString();
    initialized = await withTimeout(
      connection.sendRequest<InitializeResult>("initialize", {
        processId: process.pid,
        rootUri,
        workspaceFolders: [{ uri: rootUri, name: "ws" }],
        capabilities: {
          workspace: {
            applyEdit: true,
            workspaceEdit: { documentChanges: true, resourceOperations: ["create"] },
          },
          window: { workDoneProgress: true },
          experimental: { tether: { ...CLIENT_CAPABILITIES } },
        },
        initializationOptions: { provider: "scripted", script: editApp("a + b", "a * b") },
      }),
      10000,
      "initialize",
    );
    await connection.sendNotification("initialized", {});
  });

  beforeEach(() => {
    events = [];
    approvals = [];
    applied = [];
    saves = [];
    messages = [];
    fs.writeFileSync(path.join(root, "app.py"), APP);
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed") {
      console.error(`server stderr:\n${stderr}`);
    }
  });

  after(async () => {
    protocol?.dispose();
    connection?.dispose();
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL"); // only when the shutdown test failed
    }
    fs.rmSync(path.dirname(root), { recursive: true, force: true });
  });

  it("initializes with the contract's capabilities", () => {
    const tether = (
      initialized.capabilities.experimental as { tether: { protocolVersion: number; tools: string[] } }
    ).tether;
    assert.strictEqual(tether.protocolVersion, PROTOCOL_VERSION);
    assert.deepStrictEqual(tether.tools, [
      "read_file",
      "list_files",
      "search",
      "diagnostics",
      "plan",
      "ask_user",
      "edit_file",
      "write_file",
      "bash",
      "job_output",
      "job_stop",
    ]);
    assert.deepStrictEqual(initialized.capabilities.executeCommandProvider?.commands, [
      "tether.run",
      "tether.cancel",
    ]);
  });

  it("runs a whole approved edit: preview, applyEdit, save, events and progress", async () => {
    const progress: WorkDoneProgress[] = [];
    const subscription = protocol.onProgress("tok-1", (value) => progress.push(value));
    answer = (params) => {
      const preview = params.preview as DiffPreview;
      assert.ok(preview.proposed !== undefined && preview.proposed !== null);
      assert.strictEqual(proposalTexts(app(), preview.proposed).right, APP.replace("a + b", "a * b"));
      return buildAnswer("allow");
    };
    const result = await withTimeout(
      protocol.run({ prompt: "fix the sum", runId: "r1", workDoneToken: "tok-1" }),
      10000,
      "run r1",
    );
    subscription.dispose();

    assert.strictEqual(result.outcome, "done");
    assert.strictEqual(result.answer, "Fixed.");
    assert.deepStrictEqual(result.changedFiles, [appUri()]);
    assert.strictEqual(app(), "def add(a, b):\n    return a * b\n");

    assert.strictEqual(approvals.length, 1);
    const [approval] = approvals;
    assert.strictEqual(approval.tool, "edit_file");
    assert.strictEqual(approval.title, "Edit app.py");
    assert.deepStrictEqual(approval.preview, {
      kind: "diff",
      uri: appUri(),
      diff: "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a + b\n+    return a * b\n",
      proposed: {
        range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } },
        text: "    return a * b\n",
        baseText: "    return a + b\n",
        hunks: [
          {
            range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } },
            text: "    return a * b\n",
          },
        ],
      },
    });
    assert.strictEqual(applied.length, 1);
    assert.deepStrictEqual(saves, [{ uris: [appUri()] }]);

    const run = eventsOf("r1");
    assert.deepStrictEqual(
      run.map((e) => e.seq),
      run.map((_, i) => i + 1),
      "seq counts 1, 2, 3… with no gaps",
    );
    assert.deepStrictEqual(
      run.map((e) => e.kind).filter((kind) => kind !== "text-delta"),
      [
        "run-started",
        "step",
        "assistant",
        "usage",
        "tool-call",
        "approval",
        "tool-result",
        "step",
        "assistant",
        "usage",
        "run-finished",
      ],
    );
    const firstStep = run.slice(
      0,
      run.findIndex((e) => e.kind === "assistant"),
    );
    const streamed = firstStep.map((e) => (e.kind === "text-delta" ? e.text : "")).join("");
    assert.strictEqual(streamed, "I'll fix the sum.");
    assert.deepStrictEqual(run.at(-1), {
      runId: "r1",
      seq: run.length,
      kind: "run-finished",
      outcome: "done",
      steps: 2,
    });
    assert.deepStrictEqual(
      run.filter((e) => e.kind === "approval").map((e) => (e.kind === "approval" ? e.decision : "")),
      ["allow"],
    );

    // A server may add a starting percentage (plain LSP clients show a bar with it).
    const { percentage, ...begin } = progress[0] as WorkDoneProgress & { percentage?: number };
    assert.deepStrictEqual(begin, {
      kind: "begin",
      title: "Tether",
      cancellable: true,
      message: "fix the sum",
    });
    assert.ok(percentage === undefined || percentage === 0, `begin percentage ${percentage}`);
    assert.ok(
      progress.some((p) => p.kind === "report" && p.message === "step 1 · edit_file app.py"),
      JSON.stringify(progress),
    );
    assert.deepStrictEqual(progress.at(-1), { kind: "end", message: "done" });
  });

  it("a denied edit leaves the file unchanged and the model gets the feedback", async () => {
    await protocol.configure({ provider: "scripted", script: editApp("a + b", "a - b") });
    answer = () => buildAnswer("deny", { feedback: "keep the sum" });
    const result = await withTimeout(protocol.run({ prompt: "subtract", runId: "r2" }), 10000, "run r2");
    assert.strictEqual(result.outcome, "done");
    assert.deepStrictEqual(result.changedFiles, []);
    assert.strictEqual(app(), APP);
    assert.deepStrictEqual(applied, []);
    assert.strictEqual(approvals.length, 1);
    const [toolResult] = results("r2");
    assert.strictEqual(toolResult.ok, false);
    assert.match(toolResult.output, /denied/);
    assert.match(toolResult.output, /keep the sum/);
    assert.deepStrictEqual(messages, [], "the settings change was accepted");
  });

  it("an edit the user changed in the proposal runs as changed", async () => {
    await protocol.configure({ provider: "scripted", script: editApp("a + b", "a * b") });
    let edited = "";
    answer = (params) => {
      const preview = params.preview as DiffPreview;
      assert.ok(preview.proposed !== undefined && preview.proposed !== null);
      const texts = proposalTexts(app(), preview.proposed);
      edited = texts.right.replace("return a * b", "return a ** b  # the user's version");
      return diffAnswer("allow", editedWindow(texts, edited) ?? undefined);
    };
    const result = await withTimeout(protocol.run({ prompt: "multiply", runId: "r3" }), 10000, "run r3");
    assert.strictEqual(result.outcome, "done");
    assert.strictEqual(app(), "def add(a, b):\n    return a ** b  # the user's version\n");
    assert.strictEqual(app(), edited);
    const [toolResult] = results("r3");
    assert.strictEqual(toolResult.ok, true, toolResult.output);
    assert.match(toolResult.output, /the user changed this call/);
  });

  it("shows a command with its folder and runs the command the user edited", async () => {
    const script: Script = {
      turns: [{ toolCalls: [{ name: "bash", arguments: { command: "echo from-the-model" } }] }],
    };
    await protocol.configure({ provider: "scripted", script });
    answer = (params) => commandAnswer("allow", params, "echo from-the-user");
    const result = await withTimeout(protocol.run({ prompt: "echo", runId: "r4" }), 10000, "run r4");
    assert.strictEqual(result.outcome, "done");
    assert.deepStrictEqual(approvals[0].preview, {
      kind: "command",
      command: "echo from-the-model",
      cwd: root,
    });
    const [toolResult] = results("r4");
    assert.strictEqual(
      toolResult.output,
      'Note: the user changed this call before allowing it; it ran with {"command": "echo from-the-user"}\nexit code: 0\nfrom-the-user',
    );
  });

  it("cancelling the run's progress token stops the run and keeps its result", async () => {
    await protocol.configure({
      provider: "scripted",
      script: { turns: [{ text: "slow" }], delaySeconds: 30 },
    });
    const subscription = protocol.onProgress("tok-5", (value) => {
      if (value.kind === "begin") {
        void protocol.cancelProgress("tok-5");
      }
    });
    const started = Date.now();
    const result = await withTimeout(
      protocol.run({ prompt: "wait", runId: "r5", workDoneToken: "tok-5" }),
      10000,
      "run r5",
    );
    subscription.dispose();
    assert.strictEqual(result.outcome, "cancelled");
    assert.ok(Date.now() - started < 5000, "the run stopped promptly");
    assert.deepStrictEqual(eventsOf("r5").at(-1)?.kind, "run-finished");
  });

  it("a setting the editor removed (null in settings.tether) no longer applies", async () => {
    // initialize named a script; the editor's settings now say it has none.
    await protocol.configure({ provider: "scripted", script: null });
    await assert.rejects(
      withTimeout(protocol.run({ prompt: "edit", runId: "r6" }), 10000, "run r6"),
      /script: the scripted provider needs a script/,
    );
    assert.deepStrictEqual(eventsOf("r6"), [], "a refused run sends no event");
    await protocol.configure({ provider: "scripted", script: { turns: [{ text: "back" }] } });
    const result = await withTimeout(protocol.run({ prompt: "again", runId: "r7" }), 10000, "run r7");
    assert.strictEqual(result.answer, "back");
  });

  it("shuts down and exits with code 0", async () => {
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    await withTimeout(connection.sendRequest("shutdown"), 5000, "shutdown");
    await connection.sendNotification("exit");
    assert.strictEqual(await withTimeout(exited, 5000, "server exit"), 0);
  });
});
