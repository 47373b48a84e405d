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
import { Page, launchChromium } from "./browser";

const STEP_TIMEOUT_MS = 60_000;

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
  server: required("TETHER_SERVER"),
  out: required("TETHER_VSCODE_E2E_OUT"),
};

const APP = "def add(a, b):\n    return a + b\n";

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

function editScript(oldText: string, newText: string): object {
  const call = { name: "edit_file", arguments: { path: "app.py", old_text: oldText, new_text: newText } };
  return { turns: [{ text: "Changing the sum.", toolCalls: [call] }, { text: "Done." }] };
}

function commandScript(command: string): object {
  return {
    turns: [
      { text: "Running it.", toolCalls: [{ name: "bash", arguments: { command } }] },
      { text: "Done." },
    ],
  };
}

/** Waits for `condition` (polled), failing with `what` after the step timeout. */
async function waitFor(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

class Workbench {
  private shots = 0;
  readonly screenshots: string[] = [];

  constructor(readonly page: Page) {}

  async screenshot(name: string): Promise<void> {
    this.shots += 1;
    const file = path.join(env.out, `${String(this.shots).padStart(2, "0")}-${name}.png`);
    await this.page.screenshot({ path: file });
    this.screenshots.push(file);
  }

  /**
   * Runs a palette command by its title. The palette lists what was known when it opened, and
   * the extension's commands arrive a little after the workbench: closed and opened again
   * until the command is listed.
   */
  async command(title: string): Promise<void> {
    const input = this.page.locator(".quick-input-widget input");
    const item = this.page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
    await waitFor(`"${title}" in the command palette`, async () => {
      await this.page.keyboard.press("F1");
      await input.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
      await input.fill(`>${title}`);
      try {
        await item.waitFor({ state: "visible", timeout: 3000 });
        return true;
      } catch {
        await this.page.keyboard.press("Escape");
        return false;
      }
    });
    await this.page.keyboard.press("Enter");
  }

  /** Tether: Run with `prompt`. */
  async run(prompt: string): Promise<void> {
    await this.command("Tether: Run");
    const input = this.page.locator(".quick-input-widget input");
    await this.page.locator(".quick-input-widget", { hasText: "What should Tether do?" }).waitFor({
      state: "visible",
      timeout: STEP_TIMEOUT_MS,
    });
    await input.fill(prompt);
    await this.page.keyboard.press("Enter");
  }

  titleButton(label: string): ReturnType<Page["locator"]> {
    return this.page.locator(".editor-actions .action-label", { hasText: new RegExp(`^${label}$`) });
  }

  async proposalTabs(): Promise<number> {
    return this.page.locator('.tabs-container .tab[aria-label*="proposed by Tether"]').count();
  }

  /** The text of the focused editor, lines in order. */
  async editorText(): Promise<string> {
    // Runs in the page (no DOM types here): lines sorted by their position, nbsp as space.
    return this.page.evaluate<string>(`
      [...document.querySelectorAll(".editor-instance .view-line")]
        .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
        .map((line) => (line.textContent || "").replace(/\\u00a0/g, " "))
        .join("\\n")`);
  }
}

/** The "Tether" output channel as VS Code logs it under the user-data folder. */
function transcript(userData: string): string {
  const logs = path.join(userData, "logs");
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else if (/output_logging_/.test(dir) && /^\d+-Tether\.log$/.test(entry.name)) {
        found.push(full);
      }
    }
  };
  if (fs.existsSync(logs)) {
    walk(logs);
  }
  return found.map((file) => fs.readFileSync(file, "utf8")).join("");
}

/** Waits until the transcript shows `count` finished runs. */
async function runsFinished(userData: string, count: number): Promise<void> {
  await waitFor(`${count} finished runs in the transcript`, () => {
    return (transcript(userData).match(/^■ /gm) ?? []).length >= count;
  });
}

async function flows(bench: Workbench, root: string, userData: string): Promise<string[]> {
  const app = (): string => fs.readFileSync(path.join(root, "app.py"), "utf8");
  const script = (value: object): void =>
    fs.writeFileSync(path.join(root, "flow.json"), JSON.stringify(value));
  const passed: string[] = [];
  const page = bench.page;

  // 1. An edit approval in the diff editor, allowed with the labelled title button; one
  //    Ctrl+Z undoes the agent's edit.
  script(editScript("a + b", "a * b"));
  await bench.run("multiply instead");
  await bench.titleButton("Allow").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  assert.strictEqual(await bench.titleButton("Deny").count(), 1);
  await bench.screenshot("edit-approval");
  await bench.titleButton("Allow").click();
  await waitFor("app.py to be changed on disk", () => app().includes("a * b"));
  await waitFor("the proposal tab to close", async () => (await bench.proposalTabs()) === 0);
  await bench.screenshot("edit-allowed");
  await page.keyboard.press("Control+P");
  await page.locator(".quick-input-widget input").fill("app.py");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "app.py" }).first().waitFor({
    state: "visible",
    timeout: STEP_TIMEOUT_MS,
  });
  await page.keyboard.press("Enter");
  await waitFor("app.py in the editor", async () => (await bench.editorText()).includes("a * b"));
  await page.locator(".editor-instance .view-lines").first().click();
  await page.keyboard.press("Control+Z");
  await waitFor("one Ctrl+Z to undo the edit", async () => (await bench.editorText()).includes("a + b"));
  await bench.screenshot("edit-undone");
  passed.push("edit approval allowed from the diff editor's title; one Ctrl+Z undoes it");

  // 2. Tether: Cancel while an approval is open closes the diff tab and its buttons.
  await page.keyboard.press("Control+S"); // the undo, saved: the next edit starts from it
  await waitFor("app.py saved", () => app() === APP);
  script(editScript("a + b", "a - b"));
  await bench.run("subtract instead");
  await bench.titleButton("Allow").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.screenshot("approval-before-cancel");
  await bench.command("Tether: Cancel");
  await waitFor("the approval to close", async () => (await bench.proposalTabs()) === 0);
  await waitFor("the title buttons to go", async () => (await bench.titleButton("Allow").count()) === 0);
  assert.strictEqual(app(), APP);
  await bench.screenshot("approval-closed-by-cancel");
  passed.push("cancel during an approval closes its diff tab and title buttons; nothing changes");

  // 3. A command approval in the modal: its buttons, no separate Cancel, Allow runs it.
  script(commandScript("echo ran > ran.txt"));
  await bench.run("run a command");
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  const labels = (await dialog.locator(".dialog-buttons .monaco-button").allTextContents()).map((t) =>
    t.trim(),
  );
  assert.deepStrictEqual(
    [...labels].sort(),
    ["Allow", "Allow Always", "Deny", "Edit Command…"],
    labels.join(),
  );
  await bench.screenshot("command-approval");
  await dialog.locator(".dialog-buttons .monaco-button", { hasText: /^Allow$/ }).click();
  await waitFor("the command to run", () => fs.existsSync(path.join(root, "ran.txt")));
  await bench.screenshot("command-allowed");
  passed.push("command approval in the modal (Allow, Allow Always, Edit Command…, Deny; no Cancel) runs it");

  // 4. Edit Command…: the dialog comes back titled with the new command; Deny (asking for
  //    optional feedback, Enter sends none) runs nothing.
  script(commandScript("echo first > first.txt"));
  await bench.run("another command");
  await dialog.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await dialog.locator(".dialog-buttons .monaco-button", { hasText: "Edit Command…" }).click();
  const input = page.locator(".quick-input-widget input");
  await page.locator(".quick-input-widget", { hasText: "Command to run in" }).waitFor({
    state: "visible",
    timeout: STEP_TIMEOUT_MS,
  });
  await input.fill("echo edited > edited.txt");
  await page.keyboard.press("Enter");
  await page.locator(".monaco-dialog-box", { hasText: "Tether: Run echo edited > edited.txt" }).waitFor({
    state: "visible",
    timeout: STEP_TIMEOUT_MS,
  });
  await bench.screenshot("command-edited");
  await dialog.locator(".dialog-buttons .monaco-button", { hasText: /^Deny$/ }).click();
  await page.locator(".quick-input-widget", { hasText: "Optional: tell the agent why" }).waitFor({
    state: "visible",
    timeout: STEP_TIMEOUT_MS,
  });
  await page.keyboard.press("Enter");
  await runsFinished(userData, 4);
  assert.ok(!fs.existsSync(path.join(root, "edited.txt")) && !fs.existsSync(path.join(root, "first.txt")));
  passed.push("Edit Command… retitles the dialog with the new command; Deny runs nothing");

  // 5. Allowing an edit of a file with the user's unsaved typing leaves that typing unsaved.
  await page.locator(".editor-instance .view-lines").first().click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("# mine\n");
  await waitFor(
    "the tab to be dirty",
    async () => (await page.locator(".tabs-container .tab.dirty").count()) === 1,
  );
  script(editScript("a + b", "a * b"));
  await bench.run("multiply, with my typing unsaved");
  await bench.titleButton("Allow").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.titleButton("Allow").click();
  await runsFinished(userData, 5);
  await waitFor("the edit in the buffer", async () => {
    const text = await bench.editorText();
    return text.includes("a * b") && text.includes("# mine");
  });
  assert.strictEqual(app(), APP, "the user's unsaved typing was saved with the agent's edit");
  assert.strictEqual(await page.locator(".tabs-container .tab.dirty").count(), 1);
  assert.match(transcript(userData), /Tether changed app\.py; not saved, as it holds your unsaved changes/);
  await bench.screenshot("edit-allowed-typing-unsaved");
  passed.push("allowing an edit keeps the user's unsaved typing in that file unsaved");
  return passed;
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
      "tether.provider": "scripted",
      "tether.script": "flow.json",
    }),
  );
  const port = await freePort();
  const config = path.join(scratch, "config.yaml");
  fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const common = ["--config", config, "--user-data-dir", userData, "--extensions-dir", extensions];
  const pathWithNode24 = `${path.dirname(env.node24)}:${process.env.PATH ?? ""}`;
  const childEnv = { ...process.env, PATH: pathWithNode24, TETHER_STATE_DIR: path.join(scratch, "state") };
  execFileSync(env.codeServer, [...common, "--install-extension", env.vsix], {
    env: childEnv,
    stdio: "ignore",
    timeout: 120_000,
  });
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
    bench = new Workbench(page);
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(root)}`);
    await page
      .locator(".monaco-workbench .part.editor")
      .waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
    await bench.screenshot("workbench");
    const passed = await flows(bench, root, userData);
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
