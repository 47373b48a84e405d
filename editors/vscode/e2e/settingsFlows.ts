// Settings in the real VS Code: a prompt that cannot run shows where it was typed, in the
// user's words, with the fix as a button — no provider, no API key, an unreachable server, a
// config file that cannot be used — and keeps the prompt's text; from the palette, with the
// panel hidden, as a notification with the same button. Each setting is changed or removed
// in settings.json as a user does and applies to the next run, without a restart. Runs after
// panelFlows.ts, in the same window; leaves the settings as it found them.
import * as assert from "assert";
import * as fs from "fs";
import * as net from "net";
import * as path from "path";
import type { Locator } from "./browser";
import { panelFrame, visible } from "./panelFlows";
import { STEP_TIMEOUT_MS, Workbench, changeUserSettings, transcript, waitFor } from "./workbench";

/** A port nothing listens on (taken, then let go). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(port));
    });
  });
}

export async function settingsFlows(bench: Workbench, root: string, userData: string): Promise<string[]> {
  const page = bench.page;
  const passed: string[] = [];
  const panel = panelFrame(bench);
  const prompt = panel.locator("#prompt");
  const lastRun = (): Locator => panel.locator("article.run").last();
  const ask = async (text: string): Promise<void> => {
    await prompt.click();
    await prompt.fill(text);
    await prompt.press("Enter");
  };
  const started = (): number => (transcript(userData).match(/^▶ /gm) ?? []).length;
  /** The Settings editor, opened by a fix, shows the setting described so; then closed. */
  const settingShown = async (description: string): Promise<void> => {
    const setting = page.locator(".settings-editor .setting-item-contents", { hasText: description });
    await visible(setting);
    await bench.screenshot("setting-opened-by-the-fix");
    // VS Code 1.139 shows it in a modal editor (over which the palette does not open).
    await page.keyboard.press("Control+W");
    await setting.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  };
  const toasts = (text: string): Locator => page.locator(".notification-toast", { hasText: text });
  const original = JSON.parse(
    fs.readFileSync(path.join(userData, "User", "settings.json"), "utf8"),
  ) as Record<string, unknown>;
  await bench.command("Tether: Open Agent Panel");
  await visible(prompt);

  // 1. tether.provider removed from settings.json: the next prompt (no restart) cannot run,
  //    and says so on its run in the panel, in the user's words, with the setting one click
  //    away; the prompt is back in the box, and no notification doubles it.
  await changeUserSettings(bench, userData, { "tether.provider": undefined });
  let before = started();
  await ask("fix the bug");
  const noProvider = lastRun();
  await visible(noProvider.locator(".prompt", { hasText: "fix the bug" }));
  await visible(
    noProvider.locator(".error-text", {
      hasText: /^No model provider is set\. Choose one in the tether\.provider setting: openai or anthropic/,
    }),
  );
  await visible(noProvider.locator(".outcome", { hasText: /^could not run$/ }));
  await waitFor("the prompt back in the box", async () => (await prompt.inputValue()) === "fix the bug");
  assert.strictEqual(started(), before, "a run started without a provider");
  assert.strictEqual(await toasts("provider").count(), 0, "the panel's prompt was also a notification");
  const errorText = (await noProvider.locator(".error-text").textContent()) ?? "";
  assert.ok(!/initializationOptions|tether serve|agent\/run/.test(errorText), errorText);
  await bench.screenshot("settings-no-provider");
  await noProvider.locator("button.fix", { hasText: "Open Setting tether.provider" }).click();
  await settingShown("Model provider.");
  passed.push(
    "settings: tether.provider removed applies to the next prompt without a restart; the panel says no provider is set, in the user's words, with Open Setting tether.provider; the prompt is back in the box",
  );

  // 2. The same from the palette with the panel hidden: a notification with the same button.
  await bench.command("View: Show Explorer");
  await prompt.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  await bench.run("fix the bug from the palette");
  const toast = toasts("No model provider is set");
  await visible(toast);
  await bench.screenshot("settings-no-provider-notification");
  await toast.locator(".monaco-button", { hasText: "Open Setting tether.provider" }).click();
  await settingShown("Model provider.");
  await bench.command("Tether: Open Agent Panel");
  await visible(prompt);
  passed.push(
    "settings: a palette prompt without a provider, the panel hidden, is a notification in the user's words whose button opens the setting",
  );

  // 3. openai without a key: Set API Key on the run; /model offers the provider's models.
  await changeUserSettings(bench, userData, { "tether.provider": "openai" });
  before = started();
  await ask("fix it with openai");
  const noKey = lastRun();
  await visible(
    noKey.locator(".error-text", {
      hasText: /^OpenAI needs an API key\. Store one with Tether: Set API Key .*OPENAI_API_KEY set/,
    }),
  );
  assert.strictEqual(started(), before, "a run started without a key");
  await bench.screenshot("settings-no-key");
  await noKey.locator("button.fix", { hasText: "Set API Key" }).click();
  const whichProvider = page.locator(".quick-input-widget", { hasText: "API key for which provider?" });
  await visible(whichProvider);
  await page.keyboard.press("Escape");
  await whichProvider.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  await ask("/model");
  const models = page.locator(".quick-input-widget", { hasText: "the model of the next prompts" });
  await visible(models);
  await visible(models.locator(".monaco-list-row", { hasText: "gpt-5.4-mini" }));
  await bench.screenshot("settings-model-pick");
  await page.locator(".quick-input-widget input").fill("gpt-5.4-mini");
  await page.keyboard.press("Enter");
  const picked = panel.locator("article.command", { hasText: "/model" }).last();
  await visible(
    picked.locator(".command-output", { hasText: "model: gpt-5.4-mini from the next message on" }),
  );
  passed.push(
    "settings: openai without a key says so with Set API Key, which asks for it; /model in the panel offers the provider's models in a quick pick and picks one",
  );

  // 4. An unreachable tether.baseUrl: the run ends in an error that names the address and
  //    opens that setting.
  const unreachable = `http://127.0.0.1:${await closedPort()}/v1`;
  await changeUserSettings(bench, userData, { "tether.baseUrl": unreachable });
  await ask("reach the server");
  const noServer = lastRun();
  await noServer
    .locator(".error-text", { hasText: `Tether could not reach ${unreachable}` })
    .waitFor({ state: "visible", timeout: 3 * STEP_TIMEOUT_MS }); // after the retries
  await bench.screenshot("settings-unreachable");
  await noServer.locator("button.fix", { hasText: "Open Setting tether.baseUrl" }).click();
  await settingShown("Endpoint of an OpenAI-compatible or Anthropic server.");
  passed.push(
    "settings: an unreachable tether.baseUrl ends the run with the address named and the setting one click away",
  );

  // 5. A project config file that is not valid TOML (read again at a settings change): the
  //    prompt says which file, and opens it; once the file is fixed, the next prompt runs.
  const config = path.join(root, ".tether", "config.toml");
  fs.mkdirSync(path.dirname(config), { recursive: true });
  fs.writeFileSync(config, "maxSteps = \n");
  fs.writeFileSync(path.join(root, "flow.json"), JSON.stringify({ turns: [{ text: "Ran again." }] }));
  await changeUserSettings(bench, userData, {
    "tether.provider": original["tether.provider"],
    "tether.baseUrl": undefined,
  });
  before = started();
  await ask("with a broken config");
  const badFile = lastRun();
  await visible(
    badFile.locator(".error-text", {
      hasText: /^Your Tether config file \S+\.tether\/config\.toml cannot be used: /,
    }),
  );
  assert.strictEqual(started(), before, "a run started with a config file that cannot be used");
  await bench.screenshot("settings-bad-config");
  await badFile.locator("button.fix", { hasText: "Open Config File" }).click();
  await visible(page.locator(".tabs-container .tab", { hasText: "config.toml" }));
  await bench.command("View: Close Editor");
  fs.rmSync(path.dirname(config), { recursive: true });
  await ask("with the config fixed");
  await visible(lastRun().locator(".answer", { hasText: "Ran again." }));
  passed.push(
    "settings: a project config.toml that is not valid TOML names the file on the run, opens it from there; fixed, the next prompt runs",
  );
  assert.deepStrictEqual(
    JSON.parse(fs.readFileSync(path.join(userData, "User", "settings.json"), "utf8")),
    original,
    "the flows left the settings changed",
  );
  return passed;
}
