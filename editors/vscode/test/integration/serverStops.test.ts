// The extension when the server cannot keep running: the user's own Tether config file is
// not valid TOML, so `tether serve` answers `initialize`, says why on stderr and exits with
// status 2 — with the real LanguageClient and server, the VS Code API faked.
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { activate, deactivate } from "../../src/extension";
import * as vscode from "../fakeVscode";

const SERVER = process.env.TETHER_SERVER ?? path.resolve(__dirname, "../../..", "../../.venv/bin/tether");

describe("integration: a server that stops at start (the user's config file cannot be used)", function () {
  this.timeout(60000);
  let root: string;
  const saved = { ...process.env };

  before(() => {
    assert.ok(fs.existsSync(SERVER), `no server at ${SERVER}: set TETHER_SERVER`);
    vscode.reset();
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "tether-vscode-stops-")));
    fs.mkdirSync(path.join(root, "config", "tether"), { recursive: true });
    fs.writeFileSync(path.join(root, "config", "tether", "config.toml"), "maxSteps = \n");
    for (const key of Object.keys(process.env).filter(
      (k) => k.startsWith("TETHER_") && k !== "TETHER_SERVER",
    )) {
      delete process.env[key];
    }
    process.env.XDG_CONFIG_HOME = path.join(root, "config");
    process.env.TETHER_STATE_DIR = path.join(root, ".state");
    vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(root), name: "ws" }];
    Object.assign(vscode.settings, { serverPath: SERVER, provider: "scripted" });
  });

  after(async () => {
    await deactivate();
    for (const key of Object.keys(process.env).filter((k) => !(k in saved))) {
      delete process.env[key];
    }
    Object.assign(process.env, saved);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("a prompt in the panel says why the server stopped, with the file to open", async () => {
    const subscriptions: Array<{ dispose(): unknown }> = [];
    const secrets = {
      get: async () => undefined,
      store: async () => undefined,
      delete: async () => undefined,
    };
    activate({ subscriptions, secrets, extensionUri: vscode.Uri.file(root) } as unknown as Parameters<
      typeof activate
    >[0]);
    const panel = vscode.showWebviewView("tether.panel");
    await panel.send({ type: "ready" });
    await panel.send({ type: "run", prompt: "hello" });
    type Run = { prompt: string; error?: string; fix?: string; runId: string };
    const runs = (panel.posted as Array<{ state?: { runs: Run[] } }>).flatMap((m) => m.state?.runs ?? []);
    const deadline = Date.now() + 30000;
    while (!runs.some((r) => r.error) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      runs.push(...(panel.posted as Array<{ state?: { runs: Run[] } }>).flatMap((m) => m.state?.runs ?? []));
    }
    const refused = runs.filter((r) => r.prompt === "hello" && r.error).at(-1);
    assert.ok(refused, "the prompt was dropped");
    const file = path.join(root, "config", "tether", "config.toml");
    assert.strictEqual(
      refused.error,
      `The Tether server stopped. Your Tether config file ${file} cannot be used: not valid TOML: Invalid value (at line 1, column 12)`,
    );
    assert.strictEqual(refused.fix, "Open Config File");
    vscode.calls.length = 0;
    await panel.send({ type: "fix", runId: refused.runId });
    const opened = vscode.calls.filter(([name]) => name === "executeCommand").map(([, args]) => args);
    assert.strictEqual(opened.length, 1);
    assert.strictEqual(opened[0][0], "vscode.open");
    assert.strictEqual((opened[0][1] as vscode.Uri).fsPath, file);
    for (const subscription of subscriptions) {
      subscription.dispose();
    }
  });
});
