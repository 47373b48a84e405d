// The little of playwright-core the real-VS-Code flows use, typed here: playwright-core lives
// in the harness's cache (scripts/real-vscode.sh), not among the extension's dependencies.

export interface Locator {
  waitFor(options: { state: "visible" | "hidden" | "attached"; timeout: number }): Promise<void>;
  click(options?: { button?: "left" | "right" }): Promise<void>;
  fill(value: string, options?: { timeout: number }): Promise<void>;
  isVisible(): Promise<boolean>;
  press(key: string): Promise<void>;
  selectOption(value: string): Promise<unknown>;
  textContent(): Promise<string | null>;
  inputValue(): Promise<string>;
  getAttribute(name: string): Promise<string | null>;
  count(): Promise<number>;
  first(): Locator;
  nth(index: number): Locator;
  last(): Locator;
  allTextContents(): Promise<string[]>;
  locator(selector: string, options?: { hasText?: string | RegExp; has?: Locator }): Locator;
}

/** The document inside an iframe (a webview is an iframe in an iframe). */
export interface FrameLocator {
  locator(selector: string, options?: { hasText?: string | RegExp; has?: Locator }): Locator;
  frameLocator(selector: string): FrameLocator;
}

export interface Page {
  goto(url: string): Promise<unknown>;
  locator(selector: string, options?: { hasText?: string | RegExp; has?: Locator }): Locator;
  frameLocator(selector: string): FrameLocator;
  keyboard: {
    press(key: string): Promise<void>;
    type(text: string): Promise<void>;
    insertText(text: string): Promise<void>;
  };
  screenshot(options: { path: string }): Promise<unknown>;
  evaluate<T>(expression: string): Promise<T>;
}

export interface Browser {
  newPage(options: { viewport: { width: number; height: number } }): Promise<Page>;
  close(): Promise<void>;
}

interface PlaywrightCore {
  chromium: {
    launch(options: { executablePath: string; args: string[]; headless: boolean }): Promise<Browser>;
  };
}

/** Debian's headless Chromium (no browser download), driven by playwright-core at `moduleDir`. */
export async function launchChromium(moduleDir: string, executablePath: string): Promise<Browser> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const playwright = require(moduleDir) as PlaywrightCore;
  // --no-sandbox: Chromium's sandbox cannot start as root (CI runs as root).
  return playwright.chromium.launch({ executablePath, args: ["--no-sandbox"], headless: true });
}
