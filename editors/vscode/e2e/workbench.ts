// The workbench as the real-VS-Code flows see it: palette commands, title buttons, tabs and
// the editor's text through playwright-core, and the "Tether" output channel from its log file.
import * as fs from "fs";
import * as path from "path";
import { Locator, Page } from "./browser";

export const STEP_TIMEOUT_MS = 60_000;

/** Waits for `condition` (polled), failing with `what` after the step timeout. */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export class Workbench {
  private shots = 0;
  readonly screenshots: string[] = [];

  constructor(
    readonly page: Page,
    private readonly outDir: string,
  ) {}

  async screenshot(name: string): Promise<void> {
    this.shots += 1;
    const file = path.join(this.outDir, `${String(this.shots).padStart(2, "0")}-${name}.png`);
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
      // A palette still closing from the try before (or left open) would take this F1 and
      // hide under the text typed next: wait until none is shown.
      if (await input.isVisible()) {
        await this.page.keyboard.press("Escape");
      }
      await input.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
      await this.page.keyboard.press("F1");
      try {
        await input.waitFor({ state: "visible", timeout: 5000 });
        await input.fill(`>${title}`, { timeout: 5000 });
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

  titleButton(label: string): Locator {
    return this.page.locator(".editor-actions .action-label", { hasText: new RegExp(`^${label}$`) });
  }

  async proposalTabs(): Promise<number> {
    return this.page.locator('.tabs-container .tab[aria-label*="proposed by Tether"]').count();
  }

  /** The text of the focused editor, lines in order. */
  async editorText(): Promise<string> {
    // Runs in the page (no DOM types here): lines sorted by their position, nbsp as space;
    // not those of the editors inside inline review's blocks (comment threads).
    return this.page.evaluate<string>(`
      [...document.querySelectorAll(".editor-instance .view-line")]
        .filter((line) => !line.closest(".review-widget"))
        .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
        .map((line) => (line.textContent || "").replace(/\\u00a0/g, " "))
        .join("\\n")`);
  }
}

/** The "Tether" output channel as VS Code logs it under the user-data folder. */
export function transcript(userData: string): string {
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
export async function runsFinished(userData: string, count: number): Promise<void> {
  await waitFor(`${count} finished runs in the transcript`, () => {
    return (transcript(userData).match(/^■ /gm) ?? []).length >= count;
  });
}

/** The "Tether Server" output channel (the LanguageClient's trace of every message). */
export function serverTrace(userData: string): string {
  const logs = path.join(userData, "logs");
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else if (/output_logging_/.test(dir) && /^\d+-Tether Server\.log$/.test(entry.name)) {
        found.push(full);
      }
    }
  };
  if (fs.existsSync(logs)) {
    walk(logs);
  }
  return found.map((file) => fs.readFileSync(file, "utf8")).join("");
}

/**
 * Changes User settings as a user does, in the settings.json editor (code-server does not
 * notice the file written from outside): `undefined` removes a setting. Waits until the file
 * holds them and the extension told the server (workspace/didChangeConfiguration).
 */
export async function changeUserSettings(
  bench: Workbench,
  userData: string,
  change: Record<string, unknown>,
): Promise<void> {
  const file = path.join(userData, "User", "settings.json");
  const wanted = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
  for (const [key, value] of Object.entries(change)) {
    if (value === undefined) {
      delete wanted[key];
    } else {
      wanted[key] = value;
    }
  }
  const sent = /Sending notification 'workspace\/didChangeConfiguration'/g;
  const before = (serverTrace(userData).match(sent) ?? []).length;
  const page = bench.page;
  await bench.command("Preferences: Open User Settings (JSON)");
  // VS Code 1.139 opens it in a modal editor (no tab): found by its text.
  const lines = page.locator(".editor-instance .view-lines", { hasText: "files.autoSave" }).last();
  await lines.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await lines.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(JSON.stringify(wanted));
  await page.keyboard.press("Control+S");
  await waitFor("settings.json to be saved", () => {
    try {
      return JSON.stringify(JSON.parse(fs.readFileSync(file, "utf8"))) === JSON.stringify(wanted);
    } catch {
      return false; // being written
    }
  });
  // Closing sometimes meets "save changes?" (the modal JSON editor still counts itself
  // dirty): the file on disk is what counts.
  await page.keyboard.press("Control+W");
  const dontSave = page.locator(".monaco-dialog-box .monaco-button", { hasText: "Don't Save" });
  await waitFor("the settings editor to close", async () => {
    if ((await dontSave.count()) > 0) {
      await dontSave.click();
    }
    return (await lines.count()) === 0;
  });
  await waitFor(
    "the settings change to reach the server",
    () => (serverTrace(userData).match(sent) ?? []).length > before,
  );
}
