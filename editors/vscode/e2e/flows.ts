// The flows a user goes through in the real VS Code, in order (each starts from the state
// the one before left): approvals of edits and commands, cancel, undo, unsaved typing.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { STEP_TIMEOUT_MS, Workbench, runsFinished, transcript, waitFor } from "./workbench";

export const APP = "def add(a, b):\n    return a + b\n";

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

/** Runs every flow; the names of those that passed (the first failure throws). */
export async function flows(bench: Workbench, root: string, userData: string): Promise<string[]> {
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

  // 6. Deny from the title, with feedback: the buffer keeps its text, the agent hears why.
  script(editScript("a * b", "a / b"));
  await bench.run("divide instead");
  await bench.titleButton("Deny").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.titleButton("Deny").click();
  await page.locator(".quick-input-widget", { hasText: "Optional: tell the agent why" }).waitFor({
    state: "visible",
    timeout: STEP_TIMEOUT_MS,
  });
  await input.fill("keep the product");
  await page.keyboard.press("Enter");
  await runsFinished(userData, 6);
  assert.match(transcript(userData), /The user said: keep the product/);
  await waitFor("the proposal tab to close", async () => (await bench.proposalTabs()) === 0);
  assert.ok((await bench.editorText()).includes("a * b"));
  passed.push("edit denied from the title with feedback: nothing applied, the agent is told why");

  // 7. Allow Always for a command: the same command later in the run is not asked again.
  const again = { name: "bash", arguments: { command: "echo again >> again.txt" } };
  script({ turns: [{ toolCalls: [again] }, { toolCalls: [again] }, { text: "Done." }] });
  await bench.run("twice");
  await dialog.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await dialog.locator(".dialog-buttons .monaco-button", { hasText: "Allow Always" }).click();
  await runsFinished(userData, 7); // a second dialog would hold the run until the timeout
  assert.strictEqual(fs.readFileSync(path.join(root, "again.txt"), "utf8"), "again\nagain\n");
  passed.push("Allow Always: the same command runs again without a dialog");

  // 8. Cancel during a model call (the scripted model waits far longer than the step timeout).
  script({ delaySeconds: 600, turns: [{ text: "too late" }] });
  await bench.run("slow model");
  await waitFor("the run to start", () => transcript(userData).includes("▶ slow model"));
  await bench.command("Tether: Cancel");
  await runsFinished(userData, 8);
  assert.strictEqual((transcript(userData).match(/^■ cancelled/gm) ?? []).length, 2);
  await bench.screenshot("cancelled-during-model-call");
  passed.push("cancel during a model call ends the run");
  return passed;
}
