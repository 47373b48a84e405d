// The model's questions (its `ask_user` tool, `agent/ask`) in the real VS Code: a quick pick of
// the choices with "Type an answer…", an input box for a typed answer, the escaped question
// shown as text (no icon, no link), each answer reaching the model (its tool result in the
// transcript); a question the server withdraws (the run cancelled from its notification) closes
// its pick. Runs with the scripted provider, in the same window as the other flows (last).
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { STEP_TIMEOUT_MS, Workbench, transcript, waitFor } from "./workbench";

const LINK = "[the docs](command:workbench.action.openSettings)";

function ask(question: string, choices?: string[]): object {
  return { toolCalls: [{ name: "ask_user", arguments: { question, ...(choices ? { choices } : {}) } }] };
}

export async function askFlows(bench: Workbench, root: string, userData: string): Promise<string[]> {
  const page = bench.page;
  const passed: string[] = [];
  const finished = (): number => (transcript(userData).match(/^■ /gm) ?? []).length;
  const widget = (title: string) => page.locator(".quick-input-widget", { hasText: `Tether asks: ${title}` });
  fs.writeFileSync(
    path.join(root, "flow.json"),
    JSON.stringify({
      turns: [
        ask("Which database, $(alert) sqlite or postgres?", ["sqlite", "$(database) postgres"]),
        ask(`Name of the file? See ${LINK}.`),
        ask("Wait for me?", ["yes", "no"]),
        { text: "Done." },
      ],
    }),
  );
  // The side bar closed: with the agent panel visible the run would go there, and its
  // progress (the Cancel used below) would be a notification no more.
  await bench.command("View: Close Primary Side Bar");
  const before = finished();
  await bench.run("pick a database");

  // 1. The choices and Type an answer… in a quick pick titled with the question as text.
  const pick = widget("Which database,");
  await pick.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  const choices = ["sqlite", "$(database) postgres", "Type an answer…"];
  // Each choice a row of its own, in order. The widget is reused, and a row of an earlier pick
  // (a session list) stays in its DOM: the rows are read for the choices, not counted.
  const rows = async (): Promise<string[]> =>
    (await pick.locator(".quick-input-list .monaco-list-row .label-name").allTextContents())
      .map((t) => t.trim())
      .filter((t) => choices.includes(t));
  await waitFor(
    "the choices and Type an answer…",
    async () => (await rows()).join("\n") === choices.join("\n"),
  );
  const title = (await pick.locator(".quick-input-title").textContent()) ?? "";
  assert.strictEqual(title, "Tether asks: Which database, $(alert) sqlite or postgres?");
  assert.strictEqual(await pick.locator(".codicon").count(), 0, "$(…) became an icon");
  await bench.screenshot("ask-pick");
  await pick.locator(".quick-input-list .monaco-list-row", { hasText: "postgres" }).click();
  await waitFor("the choice to reach the model", () =>
    transcript(userData).includes("The user chose: $(database) postgres"),
  );
  passed.push(
    "ask: the model's choices and Type an answer… in a quick pick titled with the question, both as text ($(…) no icon); the pick reaches the model",
  );

  // 2. No choices: an input box whose prompt shows a [link](command:…) as text, not a link.
  const box = widget("Name of the file?");
  await box.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  const message = box.locator(".quick-input-message");
  assert.strictEqual(await message.locator("a").count(), 0, "the question's link is a link");
  const prompt = ((await message.textContent()) ?? "").replace(/\u200b/g, "");
  assert.ok(prompt.includes(LINK), prompt);
  await bench.screenshot("ask-input");
  await page.locator(".quick-input-widget input").fill("cache.db");
  await page.keyboard.press("Enter");
  await waitFor("the typed answer to reach the model", () =>
    transcript(userData).includes("The user answered: cache.db"),
  );
  passed.push(
    "ask: without choices an input box (a link in the question shown as text); the typed answer reaches the model",
  );

  // 3. The run cancelled from its notification while a question waits: the server withdraws
  //    it ($/cancelRequest) and the pick closes (it stays open when focus moves).
  const waiting = widget("Wait for me?");
  await waiting.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await page
    .locator(".notification-toast", { hasText: "ask_user" })
    .locator(".monaco-button", { hasText: /^Cancel$/ })
    .click();
  await waitFor("the run to finish", () => finished() > before);
  await waiting.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  const thisRun = transcript(userData);
  const ours = thisRun.slice(thisRun.lastIndexOf("▶ pick a database")); // earlier flows said "Done." too
  assert.ok(ours.startsWith("▶ pick a database"), "this run's prompt in the transcript");
  assert.ok(!ours.includes("Done."), "the run went on after its cancel");
  await bench.screenshot("ask-withdrawn");
  passed.push("ask: a question the server withdraws (its run cancelled) closes its pick");
  return passed;
}
