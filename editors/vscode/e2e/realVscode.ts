// The extension in a real VS Code (code-server) driven by headless Chromium: a few flows a
// user goes through, against the real `tether serve` with the scripted provider. Started by
// scripts/real-vscode.sh, which installs everything and passes the paths in TETHER_* variables.
// Every step leaves a screenshot in TETHER_VSCODE_E2E_OUT; a failure prints their paths.
import * as assert from "assert";
import { ChildProcess, execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as net from "net";
import * as os from "os";
import * as path from "path";
import { askFlows } from "./askFlows";
import { codeFlows } from "./codeFlows";
import { launchChromium } from "./browser";
import { APP, flows } from "./flows";
import { mcpFlows } from "./mcpFlows";
import { commandFlows } from "./commandFlows";
import { panelFlows } from "./panelFlows";
import { progressFlows } from "./progressFlows";
import { settingsFlows } from "./settingsFlows";
import { reviewFlows } from "./reviewFlows";
import { rewindFlows } from "./rewindFlows";
import { thinkingFlows } from "./thinkingFlows";
import { STEP_TIMEOUT_MS, Workbench, waitFor } from "./workbench";

function required(name: string): string {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run scripts/real-vscode.sh`);
  return value;
}

const env = {
  codeServer: required("TETHER_CODE_SERVER"),
  node24: required("TETHER_NODE24"),
  chromium: required("TETHER_CHROMIUM"),
  playwright: required("TETHER_PLAYWRIGHT"),
  vsix: required("TETHER_VSIX"),
  pyrightVsix: required("TETHER_PYRIGHT_VSIX"),
  pyright: required("TETHER_E2E_PYRIGHT"),
  server: required("TETHER_SERVER"),
  mcpServer: required("TETHER_E2E_MCP_SERVER"),
  out: required("TETHER_VSCODE_E2E_OUT"),
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(port));
    });
  });
}

async function main(): Promise<void> {
  fs.mkdirSync(env.out, { recursive: true });
  for (const old of fs.readdirSync(env.out).filter((f) => f.endsWith(".png"))) {
    fs.rmSync(path.join(env.out, old));
  }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "tether-real-vscode-"));
  const root = path.join(scratch, "workspace");
  const userData = path.join(scratch, "user-data");
  const extensions = path.join(scratch, "extensions");
  fs.mkdirSync(root);
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.mkdirSync(path.join(userData, "Machine"), { recursive: true });
  fs.writeFileSync(path.join(root, "app.py"), APP);
  // A remote window: machine settings come from Machine/, the rest from User/.
  fs.writeFileSync(
    path.join(userData, "Machine", "settings.json"),
    JSON.stringify({ "tether.serverPath": env.server }),
  );
  fs.writeFileSync(
    path.join(userData, "User", "settings.json"),
    JSON.stringify({
      "files.autoSave": "off",
      "workbench.startupEditor": "none",
      "workbench.tips.enabled": false,
      // Nothing animates or blinks: a headless Chromium paints every frame on the CPU,
      // which the tests running beside the flows need.
      "workbench.reduceMotion": "on",
      "editor.cursorBlinking": "solid",
      "terminal.integrated.cursorBlinking": false,
      "editor.smoothScrolling": false,
      "tether.provider": "scripted",
      "tether.script": "flow.json",
      // The LanguageClient logs each message to "Tether Server": what the flows check was sent.
      "tether.trace.server": "verbose",
    }),
  );
  const port = await freePort();
  const config = path.join(scratch, "config.yaml");
  fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const common = ["--config", config, "--user-data-dir", userData, "--extensions-dir", extensions];
  const pathWithNode24 = `${path.dirname(env.node24)}:${process.env.PATH ?? ""}`;
  // XDG_CONFIG_HOME: the user's rules file (allow-always rules) in the scratch folder.
  // Nothing of the shell's model settings: the flows set them as a user does (a key from the
  // shell would also send a prompt to a real API).
  const shellEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^TETHER_(PROVIDER|MODEL|BASE_URL|SCRIPT)$|^(OPENAI|ANTHROPIC)_API_KEY$/.test(key),
    ),
  );
  const childEnv = {
    ...shellEnv,
    PATH: pathWithNode24,
    TETHER_STATE_DIR: path.join(scratch, "state"),
    XDG_CONFIG_HOME: path.join(scratch, "config"),
  };
  execFileSync(
    env.codeServer,
    [...common, "--install-extension", env.vsix, "--install-extension", env.pyrightVsix],
    {
      env: childEnv,
      stdio: "ignore",
      timeout: 120_000,
    },
  );
  const log = fs.openSync(path.join(env.out, "code-server.log"), "w");
  const codeServer: ChildProcess = spawn(
    env.codeServer,
    [
      ...common,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--ignore-last-opened",
      "--reconnection-grace-time",
      "5",
      root,
    ],
    { env: childEnv, detached: true, stdio: ["ignore", log, log] }, // its own process group
  );
  /** Ends code-server's process group (extension host and `tether serve` included). */
  const stopCodeServer = async (): Promise<void> => {
    const group = -(codeServer.pid ?? 0);
    const alive = (): boolean => {
      try {
        process.kill(group, 0);
        return true;
      } catch {
        return false;
      }
    };
    if (alive()) {
      process.kill(group, "SIGTERM");
    }
    const deadline = Date.now() + 10_000;
    while (alive() && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (alive()) {
      process.kill(group, "SIGKILL");
    }
  };
  let bench: Workbench | undefined;
  let failed = false;
  const browser = await launchChromium(env.playwright, env.chromium);
  try {
    await waitFor("code-server's /healthz", async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
      } catch {
        return false;
      }
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    bench = new Workbench(page, env.out);
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(root)}`);
    await page
      .locator(".monaco-workbench .part.editor")
      .waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
    await bench.screenshot("workbench");
    // TETHER_VSCODE_E2E_ONLY=panel, settings, commands, review, progress, mcp, thinking, ask, rewind, code or a list (panel,mcp): those flows alone
    // (quicker while working on them).
    const only = process.env.TETHER_VSCODE_E2E_ONLY?.split(",");
    const runs = (part: string): boolean => only === undefined || only.includes(part);
    const first = only !== undefined ? [] : await flows(bench, root, userData);
    const panel = runs("panel") ? await panelFlows(bench, root, userData) : [];
    const settings = runs("settings") ? await settingsFlows(bench, root, userData) : [];
    const commands = runs("commands") ? await commandFlows(bench, root, userData) : [];
    const review = runs("review") ? await reviewFlows(bench, root, userData) : [];
    const progress = runs("progress") ? await progressFlows(bench, root, userData) : [];
    // The notes MCP server, run by the Python that runs `tether serve` (it has the mcp SDK).
    const notes = { python: path.join(path.dirname(env.server), "python"), script: env.mcpServer };
    const mcp = runs("mcp") ? await mcpFlows(bench, root, userData, notes) : [];
    const thinking = runs("thinking") ? await thinkingFlows(bench, root, userData) : [];
    const asked = runs("ask") ? await askFlows(bench, root, userData) : [];
    const code = runs("code") ? await codeFlows(bench, root, userData) : [];
    const rewound = runs("rewind") ? await rewindFlows(bench, root, userData) : [];
    const passed = [
      ...first,
      ...panel,
      ...settings,
      ...commands,
      ...review,
      ...progress,
      ...mcp,
      ...thinking,
      ...asked,
      ...code,
      ...rewound,
    ];
    for (const flow of passed) {
      console.log(`ok - ${flow}`);
    }
    console.log(`${passed.length} passed, 0 failed`);
  } catch (error) {
    failed = true;
    if (bench !== undefined) {
      await bench.screenshot("failure").catch(() => undefined);
    }
    console.error(
      `real VS Code flow failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    console.error(`screenshots:\n${(bench?.screenshots ?? []).join("\n")}`);
    console.error(`code-server log: ${path.join(env.out, "code-server.log")}`);
  } finally {
    await browser.close().catch(() => undefined);
    await stopCodeServer();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

void main();
