// The agent panel in the real VS Code: a prompt typed in the panel streams its answer and
// outcome; an edit and a command are approved from the panel's cards; Undo this run; Cancel;
// the server's wider rule picked on a command's card ("Always allow `echo *`", this project)
// lets a later matching command run unasked, and is revoked from the Rules list; with
// tether.sandbox a command runs unasked in the sandbox and one its walls stopped is asked
// again. Runs after flows.ts, in the same window.
import * as assert from "assert";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import type { FrameLocator, Locator } from "./browser";
import { serverLog } from "./reviewFlows";
import { STEP_TIMEOUT_MS, Workbench, transcript, waitFor } from "./workbench";

/** The panel's document: the webview's outer iframe (ours, by extension id), then its content. */
export function panelFrame(bench: Workbench): FrameLocator {
  return bench.page
    .frameLocator('iframe.webview[src*="extensionId=tether-dev.tether"]')
    .frameLocator("iframe#active-frame");
}

function finishedRuns(userData: string): number {
  return (transcript(userData).match(/^■ /gm) ?? []).length;
}

export async function visible(locator: Locator): Promise<void> {
  await locator.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
}

/** Whether bubblewrap runs here (installed, and user namespaces allowed), as the server checks. */
function bwrapWorks(): boolean {
  try {
    execFileSync("bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "true"], {
      stdio: "ignore",
      timeout: 10_000,
    });
    return true;
  } catch {
    return false;
  }
}

/**
 * Sets (or removes) `tether.sandbox` in the User settings as a user does (the settings.json
 * editor: code-server does not notice the file written from outside) and waits until the
 * server was told.
 */
async function setSandbox(bench: Workbench, userData: string, value: "auto" | undefined): Promise<void> {
  const file = path.join(userData, "User", "settings.json");
  const entry = '"tether.sandbox":"auto",';
  const sent = /Sending notification 'workspace\/didChangeConfiguration'/g;
  const before = (serverLog(userData).match(sent) ?? []).length;
  await bench.command("Preferences: Open User Settings (JSON)");
  // VS Code 1.139 opens it in a modal editor (no tab): found by its text.
  const lines = bench.page.locator(".editor-instance .view-lines", { hasText: "files.autoSave" }).last();
  await lines.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await lines.click();
  // The file is one line, `{"files.autoSave":…}`: the entry goes (or is) right after `{`.
  await bench.page.keyboard.press("Control+Home");
  await bench.page.keyboard.press("ArrowRight");
  if (value === "auto") {
    await bench.page.keyboard.type(entry);
  } else {
    for (let i = 0; i < entry.length; i += 1) {
      await bench.page.keyboard.press("Shift+ArrowRight");
    }
    await bench.page.keyboard.press("Delete");
  }
  await bench.page.keyboard.press("Control+S");
  await waitFor("settings.json to be saved", () => {
    try {
      const saved = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
      return saved["tether.sandbox"] === value;
    } catch {
      return false; // being written
    }
  });
  // The file on disk is what counts; closing sometimes meets "save changes?" (the modal JSON
  // editor still counts itself dirty), which would block the panel behind it: don't save.
  await bench.page.keyboard.press("Control+W");
  const dontSave = bench.page.locator(".monaco-dialog-box .monaco-button", { hasText: "Don't Save" });
  await waitFor("the settings editor to close", async () => {
    if ((await dontSave.count()) > 0) {
      await dontSave.click();
    }
    return (await lines.count()) === 0;
  });
  await waitFor("the settings change to reach the server", () => {
    const log = serverLog(userData);
    const last = log.slice(log.lastIndexOf("workspace/didChangeConfiguration"));
    const told = (log.match(sent) ?? []).length > before;
    return told && last.includes('"sandbox": "auto"') === (value === "auto");
  });
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
  const plan = {
    name: "plan",
    arguments: {
      steps: [
        { content: "Look at the workspace", status: "completed" },
        { content: "Create panel.py", status: "in_progress", priority: "high" },
        { content: "Say what was done" },
      ],
    },
  };
  script({
    turns: [
      { text: "Creating **panel.py** with `x = 1`:", toolCalls: [plan, create] },
      { text: "Done: *one* file." },
    ],
  });
  let before = finishedRuns(userData);
  await ask("create panel.py");
  const card = panel.locator("section.approval", { hasText: "Create panel.py" });
  await visible(card);
  await visible(lastRun().locator(".answer strong", { hasText: "panel.py" }));
  await waitFor("the diff editor to show the same proposal", async () => (await bench.proposalTabs()) === 1);
  // One surface per run (issue 28 item 2): no progress notification besides the panel.
  assert.strictEqual(
    await bench.page.locator(".notification-toast", { hasText: "Tether" }).count(),
    0,
    "a run from the panel showed a notification",
  );
  await visible(card.locator(".file-pill .stat-add", { hasText: "+1" }));
  // The model's plan at the top of the run (issue 28 item 8).
  await visible(
    lastRun().locator("ol.plan li.plan-step[data-status=in_progress]", { hasText: "Create panel.py" }),
  );
  assert.deepStrictEqual(
    (await lastRun().locator("ol.plan .plan-text").allTextContents()).map((t) => t.trim()),
    ["Look at the workspace", "Create panel.py", "Say what was done"],
  );
  await visible(card.locator("pre.diff .line.add", { hasText: "+x = 1" }));
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
    "panel: a prompt typed in the panel streams its Markdown answer with the model's plan on top and no notification; the edit's coloured diff and +1 −0 on its card, allowed there; outcome and tokens shown",
  );

  // 2. Undo this run: agent/undo reverts the run's edit (the created file goes).
  await lastRun().locator("button.run-undo").click(); // on the run itself (issue 28 item 7)
  await visible(lastRun().locator(".undone", { hasText: "Undone: reverted panel.py" }));
  await waitFor("panel.py to be removed by undo", () => !fs.existsSync(file("panel.py")));
  await bench.screenshot("panel-undone");
  passed.push("panel: Undo this run reverts the run's edit");

  // 3. A command approved on the panel's card with the server's wider rule for this project
  //    ("Always allow `echo *`": the server offers a wider rule only for programs that run,
  //    write and show nothing whatever their arguments): it runs; the next run's `echo` of
  //    other words runs without asking; the rule is listed under Rules, revoked there, and
  //    the server asks again.
  const echo = (words: string): object => ({
    turns: [{ toolCalls: [{ name: "bash", arguments: { command: `echo ${words}` } }] }, { text: "Ran it." }],
  });
  const touch = (name: string): object => ({
    turns: [{ toolCalls: [{ name: "bash", arguments: { command: `touch ${name}` } }] }, { text: "Ran it." }],
  });
  const ranWith = (words: string) => lastRun().locator("details.tool", { hasText: `$ echo ${words}` });
  script(echo("panel-ran"));
  before = finishedRuns(userData);
  await ask("run the command");
  const commandCard = panel.locator("section.approval", { hasText: "Run echo panel-ran" });
  await visible(commandCard);
  assert.strictEqual(await bench.page.locator(".monaco-dialog-box").count(), 0, "a modal blocks the panel");
  const offered = (await commandCard.locator("button.always-allow").allTextContents()).map((t) => t.trim());
  assert.deepStrictEqual(offered, ["Always allow echo panel-ran", "Always allow echo *"]);
  assert.strictEqual(await commandCard.locator("button", { hasText: /^Allow Always$/ }).count(), 0);
  await commandCard.locator("select.scope").selectOption("project");
  await bench.screenshot("panel-command-approval");
  await commandCard.locator('button.always-allow[data-pattern="echo *"]').click();
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  await waitFor(
    "the rule in the user's rules file",
    () => fs.existsSync(userRules) && fs.readFileSync(userRules, "utf8").includes('"echo *"'),
  );
  script(echo("panel-ran-2"));
  before = finishedRuns(userData);
  await ask("run a matching command");
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  assert.strictEqual(await panel.locator("section.approval").count(), 0, "the matching command was asked");
  const ranUnasked = ranWith("panel-ran-2");
  await ranUnasked.locator("summary").click();
  await visible(ranUnasked.locator(".tool-decision", { hasText: "auto (rule: echo *, project)" }));
  await panel.locator("#rules-box > summary").click();
  const rule = panel.locator("#rules li.rule", { hasText: "allow bash: echo *" });
  await visible(rule);
  await visible(rule.locator(".muted", { hasText: "project" }));
  await bench.screenshot("panel-rules");
  await rule.locator("button.revoke").click();
  await waitFor(
    "the rule to leave the rules file",
    () => !fs.readFileSync(userRules, "utf8").includes('"echo *"'),
  );
  await rule.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  await bench.screenshot("panel-rule-revoked");
  script(echo("panel-ran-3"));
  before = finishedRuns(userData);
  await ask("run it again");
  const askedAgain = panel.locator("section.approval", { hasText: "Run echo panel-ran-3" });
  await visible(askedAgain); // asked again: the rule is gone on the server too
  await askedAgain.locator("textarea.feedback").fill("not again");
  await askedAgain.locator("button", { hasText: /^Deny$/ }).click();
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  assert.match(transcript(userData), /not again/);
  // The denied card says the denial once (its words were the result's output and its error).
  const denied = ranWith("panel-ran-3");
  await denied.locator("summary").click();
  const deniedOutput = (await denied.locator(".tool-output").textContent()) ?? "";
  assert.strictEqual(deniedOutput.match(/Not done: the user denied it/g)?.length, 1, deniedOutput);
  passed.push(
    "panel: Always allow `echo *` for the project from the card stores the server's rule; a later `echo` runs unasked; Revoke in the Rules list removes it; the server asks again",
  );

  // 4. New session, then the first one picked again from Sessions: the next prompt runs in
  //    it. Cancel while the model thinks: the run ends cancelled.
  await panel.locator("#new-session").click();
  await visible(panel.locator("#session-label", { hasText: "New session" }));
  await visible(panel.locator("#empty")); // a new session starts empty (issue 28 item 6)
  assert.strictEqual(await panel.locator("article.run").count(), 0, "New session kept the earlier runs");
  await bench.screenshot("panel-new-session");
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

  //    A prompt from the palette while the panel shows is followed there only (no
  //    notification with a Cancel of its own): the panel's Cancel ends it.
  script({ delaySeconds: 600, turns: [{ text: "too late" }] });
  before = finishedRuns(userData);
  await bench.run("slow from the palette");
  await waitFor("the palette's run to start", () => /▶ slow from the palette\n/.test(transcript(userData)));
  await visible(panel.locator("#cancel"));
  await panel.locator("#cancel").click();
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  await visible(lastRun().locator(".outcome", { hasText: /^cancelled/ }));
  passed.push("panel: a prompt from the palette while the panel shows is cancelled from the panel");

  // 5. tether.sandbox "auto" (bubblewrap here): a command that would be asked runs unasked in
  //    the sandbox and its card says so; one the walls stop (a write outside the workspace)
  //    is asked again on a card whose title says why, and denied. Then the setting goes.
  if (!bwrapWorks()) {
    console.log("not run here: panel sandbox flow (bubblewrap is missing or cannot start on this machine)");
  } else {
    await setSandbox(bench, userData, "auto");
    script(touch("sandboxed.txt"));
    before = finishedRuns(userData);
    await ask("run it in the sandbox");
    await waitFor("the sandboxed command to run unasked", () => fs.existsSync(file("sandboxed.txt")));
    await waitFor("the run to finish", () => finishedRuns(userData) > before);
    const sandboxed = lastRun().locator("details.tool", { hasText: "$ touch sandboxed.txt" });
    await sandboxed.locator("summary").click();
    await visible(sandboxed.locator(".tool-sandbox", { hasText: /^ran in the sandbox \(bwrap\)$/ }));
    await bench.screenshot("panel-sandboxed");
    const outside = "/usr/local/tether-e2e-outside.txt";
    script(touch(outside));
    before = finishedRuns(userData);
    await ask("write outside the workspace");
    const reasked = panel.locator("section.approval", { hasText: "outside the sandbox" });
    await visible(reasked);
    assert.strictEqual(
      (await reasked.locator(".approval-title").textContent()) ?? "",
      "Run touch /usr/local/tether-e2e-outside.txt outside the sandbox?",
    );
    assert.match(
      (await reasked.locator(".approval-reason").textContent()) ?? "",
      /^The sandbox stopped it: it needs .*Read-only file system/,
    );
    // The exact command at most, never a wider rule (issue 28 item 5).
    const rules = await reasked.locator("button.always-allow .pattern").allTextContents();
    assert.ok(
      rules.every((r) => r === `touch ${outside}`),
      `offered ${JSON.stringify(rules)}`,
    );
    await bench.screenshot("panel-sandbox-asked-again");
    await reasked.locator("button", { hasText: /^Deny$/ }).click();
    await waitFor("the run to finish", () => finishedRuns(userData) > before);
    assert.ok(!fs.existsSync(outside), "the denied command ran outside the sandbox");
    const stopped = lastRun().locator("details.tool", { hasText: `$ touch ${outside}` });
    await stopped.locator("summary").click();
    await visible(
      stopped.locator(".tool-sandbox", { hasText: "its walls stopped it, so it was asked again" }),
    );
    await setSandbox(bench, userData, undefined);
    passed.push(
      "panel: with tether.sandbox auto a command runs unasked in bwrap and its card says so; one the walls stopped is asked again, the card's title saying why",
    );
  }

  // 6. The exact "Always allow echo exact-rule" button (not the wider one) for the project:
  //    the rules file and the Rules list hold exactly that rule; the identical call next
  //    runs unasked; revoked again after.
  script(echo("exact-rule"));
  before = finishedRuns(userData);
  await ask("run the exact command");
  const exactCard = panel.locator("section.approval", { hasText: "Run echo exact-rule" });
  await visible(exactCard);
  assert.deepStrictEqual(
    (await exactCard.locator("button.always-allow").allTextContents()).map((t) => t.trim()),
    ["Always allow echo exact-rule", "Always allow echo *"],
  );
  await exactCard.locator("select.scope").selectOption("project");
  await exactCard.locator('button.always-allow[data-pattern="echo exact-rule"]').click();
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  await waitFor(
    "the exact rule in the user's rules file",
    () => fs.existsSync(userRules) && fs.readFileSync(userRules, "utf8").includes('"echo exact-rule"'),
  );
  const stored = fs.readFileSync(userRules, "utf8");
  assert.ok(!stored.includes('"echo *"'), `the wider rule was stored too:\n${stored}`);
  assert.strictEqual((stored.match(/echo/g) ?? []).length, 1, `more than the offered rule:\n${stored}`);
  const rulesBox = panel.locator("#rules-box");
  if ((await rulesBox.getAttribute("open")) === null) {
    await panel.locator("#rules-box > summary").click();
  }
  await visible(panel.locator("#rules li.rule", { hasText: "allow bash: echo exact-rule" }));
  assert.deepStrictEqual(
    (await panel.locator("#rules li.rule", { hasText: "echo" }).allTextContents()).length,
    1,
    "the Rules list holds more than the offered rule",
  );
  await bench.screenshot("panel-exact-rule");
  script(echo("exact-rule"));
  before = finishedRuns(userData);
  await ask("run the exact command again");
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  assert.strictEqual(await panel.locator("section.approval").count(), 0, "the identical call was asked");
  const ranExact = lastRun().locator("details.tool", { hasText: "$ echo exact-rule" });
  await ranExact.locator("summary").click();
  await visible(ranExact.locator(".tool-decision", { hasText: "auto (rule: echo exact-rule, project)" }));
  await panel
    .locator("#rules li.rule", { hasText: "allow bash: echo exact-rule" })
    .locator("button.revoke")
    .click();
  await waitFor(
    "the exact rule to leave the rules file",
    () => !fs.readFileSync(userRules, "utf8").includes('"echo exact-rule"'),
  );
  passed.push(
    "panel: the exact Always allow button stores exactly the offered rule (file and Rules list); the identical call runs unasked",
  );

  // 7. The `@` completion in the prompt box: "@ap" lists app.py; a click puts "@app.py " in
  //    the prompt; sent, the run carries it.
  await prompt.click();
  await prompt.fill("what is in @ap");
  const mention = panel.locator("#mentions li.mention", { hasText: /^app\.py$/ });
  await visible(mention);
  await bench.screenshot("panel-mention-list");
  await mention.click();
  await panel.locator("#mentions").waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  assert.strictEqual(await prompt.inputValue(), "what is in @app.py ");
  script({ turns: [{ text: "A function." }] });
  before = finishedRuns(userData);
  await prompt.press("Enter");
  await waitFor("the run to finish", () => finishedRuns(userData) > before);
  assert.match(serverLog(userData), /"prompt": "what is in @app\.py ?"/, "agent/run lacked the mention");
  // No run since the undone one changed a file: nothing for Undo this run to aim at.
  assert.notStrictEqual(await lastRun().locator("button.run-undo").getAttribute("hidden"), null);
  assert.notStrictEqual(await panel.locator("#undo").getAttribute("hidden"), null);
  await bench.screenshot("panel-mention-sent");
  passed.push(
    "panel: the `@` list in the prompt box offers app.py; a click inserts @app.py, which the run carries",
  );
  return passed;
}
