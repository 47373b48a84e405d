// The session commands in the panel of the real VS Code: `/` lists them (the server's
// agent/commands, then the panel's /resume and /rules), each runs on the panel's session and
// answers in the conversation — none goes to the model as a prompt. Runs after
// settingsFlows.ts, in the same window, with the scripted provider.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import type { Locator } from "./browser";
import { panelFrame, visible } from "./panelFlows";
import { STEP_TIMEOUT_MS, Workbench, transcript, waitFor } from "./workbench";

export async function commandFlows(bench: Workbench, root: string, userData: string): Promise<string[]> {
  const page = bench.page;
  const passed: string[] = [];
  const panel = panelFrame(bench);
  const prompt = panel.locator("#prompt");
  const lastRun = (): Locator => panel.locator("article.run").last();
  const started = (): number => (transcript(userData).match(/^▶ /gm) ?? []).length;
  const finished = (): number => (transcript(userData).match(/^■ /gm) ?? []).length;
  const script = (value: object): void =>
    fs.writeFileSync(path.join(root, "flow.json"), JSON.stringify(value));
  const ask = async (text: string): Promise<void> => {
    await prompt.click();
    await prompt.fill(text);
    await prompt.press("Enter");
  };
  /** Runs `input` in the panel: the answer of its entry, the newest in the conversation. */
  const command = async (input: string): Promise<string> => {
    const newest = panel.locator("article.command").last();
    const before =
      (await panel.locator("article.command").count()) > 0 ? await newest.getAttribute("data-key") : null;
    await ask(input);
    await waitFor(`the answer of ${input}`, async () => {
      const count = await panel.locator("article.command").count();
      return count > 0 && (await newest.getAttribute("data-key")) !== before;
    });
    assert.strictEqual((await newest.locator(".command-input").textContent()) ?? "", input);
    return (await newest.locator(".command-output").textContent()) ?? "";
  };
  await bench.command("Tether: Open Agent Panel");
  await visible(prompt);

  // 1. `/` lists the commands with their descriptions; typing narrows them, Tab completes.
  await prompt.click();
  await prompt.fill("");
  await prompt.press("/");
  const list = panel.locator("#mentions li.command-option");
  await waitFor("the session commands listed", async () => (await list.count()) === 10);
  assert.deepStrictEqual(
    (await panel.locator("#mentions li.command-option .command-name").allTextContents()).map((t) => t.trim()),
    [
      "/undo",
      "/rewind ID [files|conversation|both] [force]",
      "/new",
      "/model [NAME]",
      "/effort [off|low|medium|high]",
      "/compact",
      "/cost",
      "/jobs [stop ID]",
      "/resume [SESSION]",
      "/rules",
    ],
  );
  await bench.screenshot("commands-listed");
  await prompt.press("c");
  await prompt.press("o");
  await waitFor("/compact and /cost", async () => (await list.count()) === 2);
  await prompt.press("ArrowDown");
  await prompt.press("Tab");
  assert.strictEqual(await prompt.inputValue(), "/cost");
  await prompt.fill("");

  // 2. A new session, a run that writes a file and answers with a table; then /cost, /undo
  //    (the file goes, the run says so), /compact, /rules — no prompt reaches the model.
  assert.strictEqual(await command("/new"), "a new session starts with the next message");
  await visible(panel.locator("#session-label", { hasText: /^New session$/ }));
  script({
    turns: [
      { toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "a note\n" } }] },
      { text: "Wrote it:\n\n| file | lines |\n|---|--:|\n| notes.txt | 1 |\n" },
    ],
  });
  let before = finished();
  await ask("write the notes");
  const card = panel.locator("section.approval", { hasText: "notes.txt" });
  await visible(card);
  await card.locator("button", { hasText: /^Allow$/ }).click();
  await waitFor("the run to finish", () => finished() > before);
  await visible(lastRun().locator(".answer table th", { hasText: "lines" }));
  await visible(lastRun().locator(".answer table td.right", { hasText: "1" }));
  assert.ok(fs.existsSync(path.join(root, "notes.txt")));
  const runs = started();
  assert.match(await command("/cost"), /^session s-\S+: 1 run · \d+ in \/ \d+ out tokens/);
  assert.match(await command("/undo"), /^undid run \S+\n {2}put back: notes\.txt$/);
  await waitFor("notes.txt put back (removed)", () => !fs.existsSync(path.join(root, "notes.txt")));
  await visible(lastRun().locator(".undone", { hasText: "Undone: put back: notes.txt" }));
  assert.match(await command("/compact"), /^nothing to compact: /);
  assert.match(await command("/rules"), /^no rules of yours\nand \d+ built-in read-only rules/);
  await bench.screenshot("commands-answered");
  passed.push(
    "commands: / lists the session commands (the server's, then /resume and /rules), Tab completes; /cost, /undo (the file put back, its run marked), /compact and /rules answer in the panel; a table in the answer is a table",
  );

  // 3. /new empties the conversation; /resume offers the stored sessions and continues the
  //    one picked.
  assert.strictEqual(await command("/new"), "a new session starts with the next message");
  assert.strictEqual(await panel.locator("article.run").count(), 0, "/new kept the earlier runs");
  await ask("/resume");
  const sessions = page.locator(".quick-input-widget", { hasText: "continue which session?" });
  await visible(sessions);
  await bench.screenshot("commands-resume-pick");
  await page.locator(".quick-input-widget input").fill("write the notes");
  await visible(sessions.locator(".monaco-list-row", { hasText: "write the notes" }));
  await page.keyboard.press("Enter");
  await visible(panel.locator("article.command .command-output", { hasText: "continuing: write the notes" }));
  await visible(panel.locator("#session-label", { hasText: "Continuing: write the notes" }));
  script({ turns: [{ text: "Still here." }] });
  before = finished();
  await ask("and now?");
  await waitFor("the run to finish", () => finished() > before);
  const resumed = transcript(userData).match(/▶ and now\?\n {2}run \S+ · session (\S+)\n/);
  const written = transcript(userData).match(/▶ write the notes\n {2}run \S+ · session (\S+)\n/);
  assert.ok(
    resumed && written && resumed[1] === written[1],
    "the prompt after /resume ran in another session",
  );
  assert.strictEqual(started(), runs + 1, "a session command went to the model as a prompt");
  await prompt.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  passed.push(
    "commands: /new starts an empty conversation; /resume picks a stored session and the next prompt continues it",
  );
  return passed;
}
