// The agent panel in the real VS Code: a prompt typed in the panel streams its answer and
// outcome; an edit and a command are approved from the panel's cards; Undo this run; Cancel;
// a rule stored with Allow Always is revoked from the panel's Rules list, and the server
// asks again. Runs after flows.ts, in the same window.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import type { FrameLocator, Locator } from "./browser";
import { STEP_TIMEOUT_MS, Workbench, transcript, waitFor } from "./workbench";

/** The panel's document: the webview's outer iframe (ours, by extension id), then its content. */
function panelFrame(bench: Workbench): FrameLocator {
  return bench.page
    .frameLocator('iframe.webview[src*="extensionId=tether-dev.tether"]')
    .frameLocator("iframe#active-frame");
}

function finishedRuns(userData: string): number {
  return (transcript(userData).match(/^■ /gm) ?? []).length;
}

async function visible(locator: Locator): Promise<void> {
  await locator.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
}

/** Runs every panel flow; the names of those that passed (the first failure throws). */
export async function panelFlows(bench: Workbench, root: string, userData: string): Promise<string[]> {
  const script = (value: object): void =>
    fs.writeFileSync(path.join(root, "flow.json"), JSON.stringify(value));
  const file = (name: string): string => path.join(root, name);
  const userRules = path.join(path.dirname(root), "config", "tether", "rules.toml");
  const passed: string[] = [];
  const panel = panelFrame(bench);
  const prompt = panel.locator("#prompt");
  const lastRun = (): Locator => panel.locator("article.run").last();
  const ask = async (text: string): Promise<void> => {
    await prompt.click();
    await prompt.fill(text);
    await prompt.press("Enter"); // Enter sends (Shift+Enter is a new line)
  };

  // 1. A prompt typed in the panel: the streamed answer as Markdown, a tool card, an edit
  //    approved on the panel's card (the diff editor closes with it), then the outcome.
  await bench.command("Tether: Open Agent Panel");
  await visible(prompt);
  await bench.screenshot("panel-open");
  const create = { name: "write_file", arguments: { path: "panel.py", content: "x = 1\n" } };
  script({
    turns: [
      { text: "Creating **panel.py** with `x = 1`:", toolCalls: [create] },
      { text: "Done: *one* file." },
    ],
  });
  let before = finishedRuns(userData);
  await ask("create panel.py");
  const card = panel.locator("section.approval", { hasText: "Create panel.py" });
  await visible(card);
  await visible(lastRun().locator(".answer strong", { hasText: "panel.py" }));
  await waitFor("the diff editor to show the same proposal", async () => (await bench.proposalTabs()) === 1);
  await bench.screenshot("panel-edit-approval");
  await card.locator("button", { hasText: /^Allow$/ }).click();
  await waitFor(
    "panel.py to be written",
    () => fs.existsSync(file("panel.py")) && fs.readFileSync(file("panel.py"), "utf8") === "x = 1\n",
  );
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  await visible(lastRun().locator(".outcome", { hasText: /^done · 2 steps · \d+ in \/ \d+ out tokens/ }));
  await visible(lastRun().locator("details.tool[data-status=ok]", { hasText: "write_file panel.py" }));
  await visible(lastRun().locator(".answer em", { hasText: "one" }));
  assert.strictEqual(await card.count(), 0, "the approval card stayed after the answer");
  await waitFor("the proposal tab to close", async () => (await bench.proposalTabs()) === 0);
  await bench.screenshot("panel-edit-allowed");
  passed.push(
    "panel: a prompt typed in the panel streams its Markdown answer; the edit allowed on its card; outcome and tokens shown",
  );

  // 2. Undo this run: agent/undo reverts the run's edit (the created file goes).
  await panel.locator("#undo").click();
  await visible(lastRun().locator(".undone", { hasText: "reverted" }));
  await waitFor("panel.py to be removed by undo", () => !fs.existsSync(file("panel.py")));
  await bench.screenshot("panel-undone");
  passed.push("panel: Undo this run reverts the run's edit");

  // 3. A command approved on the panel's card with the server's wider rule for this project
  //    ("Always allow `touch *`"): it runs; the next run's `touch` of another file runs
  //    without asking; the rule is listed under Rules, revoked there, and the server asks again.
  const touch = (name: string): object => ({
    turns: [{ toolCalls: [{ name: "bash", arguments: { command: `touch ${name}` } }] }, { text: "Ran it." }],
  });
  script(touch("panel-ran.txt"));
  before = finishedRuns(userData);
  await ask("run the command");
  const commandCard = panel.locator("section.approval", { hasText: "Run touch panel-ran.txt" });
  await visible(commandCard);
  assert.strictEqual(await bench.page.locator(".monaco-dialog-box").count(), 0, "a modal blocks the panel");
  const offered = (await commandCard.locator("button.always-allow").allTextContents()).map((t) => t.trim());
  assert.deepStrictEqual(offered, ["Always allow touch panel-ran.txt", "Always allow touch *"]);
  assert.strictEqual(await commandCard.locator("button", { hasText: /^Allow Always$/ }).count(), 0);
  await commandCard.locator("select.scope").selectOption("project");
  await bench.screenshot("panel-command-approval");
  await commandCard.locator('button.always-allow[data-pattern="touch *"]').click();
  await waitFor("the command to run", () => fs.existsSync(file("panel-ran.txt")));
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  await waitFor(
    "the rule in the user's rules file",
    () => fs.existsSync(userRules) && fs.readFileSync(userRules, "utf8").includes('"touch *"'),
  );
  script(touch("panel-ran-2.txt"));
  before = finishedRuns(userData);
  await ask("run a matching command");
  await waitFor("the matching command to run unasked", () => fs.existsSync(file("panel-ran-2.txt")));
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  assert.strictEqual(await panel.locator("section.approval").count(), 0, "the matching command was asked");
  const ranUnasked = lastRun().locator("details.tool", { hasText: "$ touch panel-ran-2.txt" });
  await ranUnasked.locator("summary").click();
  await visible(ranUnasked.locator(".tool-decision", { hasText: "auto (rule: touch *, project)" }));
  await panel.locator("#rules-box > summary").click();
  const rule = panel.locator("#rules li.rule", { hasText: "allow bash: touch *" });
  await visible(rule);
  await visible(rule.locator(".muted", { hasText: "project" }));
  await bench.screenshot("panel-rules");
  await rule.locator("button.revoke").click();
  await waitFor(
    "the rule to leave the rules file",
    () => !fs.readFileSync(userRules, "utf8").includes('"touch *"'),
  );
  await rule.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  await bench.screenshot("panel-rule-revoked");
  fs.rmSync(file("panel-ran.txt"));
  script(touch("panel-ran.txt"));
  before = finishedRuns(userData);
  await ask("run it again");
  await visible(commandCard); // asked again: the rule is gone on the server too
  await commandCard.locator("input.feedback").fill("not again");
  await commandCard.locator("button", { hasText: /^Deny$/ }).click();
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  assert.ok(!fs.existsSync(file("panel-ran.txt")), "the denied command ran");
  assert.match(transcript(userData), /not again/);
  passed.push(
    "panel: Always allow `touch *` for the project from the card stores the server's rule; a later `touch` runs unasked; Revoke in the Rules list removes it; the server asks again",
  );

  // 4. New session, then the first one picked again from Sessions: the next prompt runs in
  //    it. Cancel while the model thinks: the run ends cancelled.
  await panel.locator("#new-session").click();
  await visible(panel.locator("#session-label", { hasText: "New session" }));
  await panel.locator("#sessions-box > summary").click();
  const session = panel.locator("#sessions li button", { hasText: "create panel.py" });
  await visible(session);
  const sessionId = ((await session.getAttribute("title")) ?? "").split(" ")[0];
  assert.match(sessionId, /^s-/);
  await session.click();
  await visible(panel.locator("#session-label", { hasText: "Continuing: create panel.py" }));
  await bench.screenshot("panel-sessions");
  script({ delaySeconds: 600, turns: [{ text: "too late" }] });
  before = finishedRuns(userData);
  await ask("slow model");
  await waitFor("the run to start in the picked session", () =>
    new RegExp(`▶ slow model\\n  run \\S+ · session ${sessionId}\\n`).test(transcript(userData)),
  );
  await visible(panel.locator("#cancel"));
  await panel.locator("#cancel").click();
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  await visible(lastRun().locator(".outcome", { hasText: /^cancelled/ }));
  await bench.screenshot("panel-cancelled");
  passed.push("panel: a session picked from Sessions is continued; Cancel ends the run in flight");
  return passed;
}
