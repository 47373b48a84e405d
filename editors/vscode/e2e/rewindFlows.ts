// Rewind in the real VS Code: a run edits an open file and runs a command that changes two
// more (scripted model, both allowed on the panel's cards); a later run answers. "Restore
// checkpoint" on the first run, files and conversation: the files on disk and the open
// editor's buffer are exactly as before it, the file the command created is gone, and the
// panel marks what the model no longer sees (the later run, the first run's steps) as
// rewound. Then another edit, unsaved typing in its editor, and Tether: Rewind… (files
// only): the typed file is a conflict, kept on disk and in the buffer as the user has it.
// Last, `/rewind ID conversation` typed in the panel marks that run too.
// Runs in the same window as the other flows, in a new session of the panel.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import type { Locator } from "./browser";
import { panelFrame, visible } from "./panelFlows";
import { STEP_TIMEOUT_MS, Workbench, transcript, waitFor } from "./workbench";

const REWIND = "first line\nsecond line\n";
const DATA = "a\n";

function finishedRuns(userData: string): number {
  return (transcript(userData).match(/^■ /gm) ?? []).length;
}

function edit(file: string, oldText: string, newText: string): object {
  return { name: "edit_file", arguments: { path: file, old_text: oldText, new_text: newText } };
}

export async function rewindFlows(bench: Workbench, root: string, userData: string): Promise<string[]> {
  const page = bench.page;
  const passed: string[] = [];
  const file = (name: string): string => path.join(root, name);
  const read = (name: string): string => fs.readFileSync(file(name), "utf8");
  const script = (value: object): void => fs.writeFileSync(file("flow.json"), JSON.stringify(value));
  const panel = panelFrame(bench);
  const prompt = panel.locator("#prompt");
  const runNamed = (text: string): Locator => panel.locator("article.run", { hasText: text });
  const ask = async (text: string): Promise<void> => {
    await prompt.click();
    await prompt.fill(text);
    await prompt.press("Enter");
  };
  const allow = async (title: string): Promise<void> => {
    const card = panel.locator("section.approval", { hasText: title });
    await visible(card);
    await card.locator("button", { hasText: /^Allow$/ }).click();
    await card.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  };
  const pickRow = async (title: string, row: string): Promise<void> => {
    await visible(page.locator(".quick-input-widget", { hasText: title }));
    await page.locator(".quick-input-list .monaco-list-row", { hasText: row }).first().click();
  };
  const rewindTab = page.locator(".tabs-container .tab", { hasText: "rewind.txt" });
  /** The rewind.txt editor's text (the tab brought to the front first). */
  const buffer = async (): Promise<string> => {
    await rewindTab.click();
    return bench.editorText();
  };
  const dirty = async (): Promise<boolean> =>
    ((await rewindTab.getAttribute("class")) ?? "").includes("dirty");

  fs.writeFileSync(file("rewind.txt"), REWIND);
  fs.writeFileSync(file("data.txt"), DATA);
  fs.rmSync(file("made.txt"), { force: true });
  await bench.command("Tether: Open Agent Panel");
  await visible(prompt);
  if ((await panel.locator("#new-session").getAttribute("hidden")) === null) {
    await panel.locator("#new-session").click(); // the earlier flows' conversation stays out
  }
  await page.locator(".monaco-workbench .part.editor").click();
  // rewind.txt open in an editor: the run's edit and the rewind go through its buffer.
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: "rewind.txt" }).first();
  await waitFor("rewind.txt in Quick Open", async () => {
    await page.keyboard.press("Control+P");
    await page.locator(".quick-input-widget input").fill("rewind.txt");
    try {
      await row.waitFor({ state: "visible", timeout: 3000 });
      return true;
    } catch {
      await page.keyboard.press("Escape");
      return false;
    }
  });
  await page.keyboard.press("Enter");
  await waitFor(
    "rewind.txt in the editor",
    async () => (await bench.editorText()) === "first line\nsecond line\n",
  );

  // 1. A run that edits the open file (step 1) and runs a command that changes one file and
  //    creates another (step 2); then a run that only answers.
  script({
    turns: [
      { text: "Editing rewind.txt.", toolCalls: [edit("rewind.txt", "second line", "edited line")] },
      {
        text: "Now the command.",
        toolCalls: [{ name: "bash", arguments: { command: "echo b >> data.txt && echo made > made.txt" } }],
      },
      { text: "Changed three files." },
    ],
  });
  let before = finishedRuns(userData);
  await ask("change the files");
  await allow("rewind.txt");
  await allow("Run echo b");
  await waitFor("the first run to finish", () => finishedRuns(userData) > before);
  const first = runNamed("change the files");
  await visible(first.locator(".answer", { hasText: "Changed three files." }));
  await waitFor("the edit saved", () => read("rewind.txt") === "first line\nedited line\n");
  assert.strictEqual(read("data.txt"), "a\nb\n");
  assert.strictEqual(read("made.txt"), "made\n");
  assert.strictEqual(await buffer(), "first line\nedited line\n");
  script({ turns: [{ text: "Second answer." }] });
  before = finishedRuns(userData);
  await ask("anything else?");
  const second = runNamed("anything else?");
  await visible(second.locator(".answer", { hasText: "Second answer." }));
  await waitFor("the second run to finish", () => finishedRuns(userData) > before);
  await bench.screenshot("rewind-before");

  // 2. Restore checkpoint on the first run, files and conversation: everything as before it.
  await first.locator("button.run-restore").click();
  await pickRow("restore what", "Files and conversation");
  await waitFor("rewind.txt restored on disk", () => read("rewind.txt") === REWIND);
  await waitFor("the buffer restored", async () => (await buffer()) === "first line\nsecond line\n");
  await visible(
    page.locator(".notification-toast", { hasText: "rewound to before step 1: 3 files restored" }),
  );
  assert.strictEqual(read("data.txt"), DATA, "the command's change to data.txt stayed");
  assert.ok(!fs.existsSync(file("made.txt")), "the file the command created stayed");
  assert.ok(!(await dirty()), "the restored buffer is left unsaved");
  // The panel shows what the model will see: the later run and the first run's steps rewound.
  await visible(second.locator(".rewound-label"));
  assert.ok(((await second.getAttribute("class")) ?? "").split(" ").includes("rewound"));
  await visible(first.locator(".rewound-label", { hasText: "step 1" }));
  assert.strictEqual(
    await first.locator(".items > .rewound").count(),
    await first.locator(".items > *").count(),
    "the first run's steps (all from step 1 on) are not all marked rewound",
  );
  assert.ok(!((await first.getAttribute("class")) ?? "").split(" ").includes("rewound"), "its prompt stays");
  await bench.screenshot("rewind-restored");
  passed.push(
    "rewind: Restore checkpoint on a run (files and conversation) puts back the open file's buffer and disk, a command's change and removes the file it created; the panel marks the later run and the run's steps rewound",
  );

  // 3. Another edit, then unsaved typing in its editor; Tether: Rewind… (files only) to before
  //    that edit: a conflict, the user's text kept on disk and in the buffer.
  script({
    turns: [
      { text: "Editing again.", toolCalls: [edit("rewind.txt", "second line", "third version")] },
      { text: "Edited." },
    ],
  });
  before = finishedRuns(userData);
  await ask("edit it again");
  await allow("rewind.txt");
  await waitFor("the third run to finish", () => finishedRuns(userData) > before);
  await waitFor("the edit saved", () => read("rewind.txt") === "first line\nthird version\n");
  await waitFor("the buffer edited", async () => (await buffer()) === "first line\nthird version\n");
  await page.locator(".editor-instance .view-line", { hasText: "third version" }).click();
  await page.keyboard.press("End");
  await page.keyboard.type(" typed by me");
  await waitFor("the typing unsaved", async () => await dirty());
  await bench.command("Tether: Rewind…");
  await visible(page.locator(".quick-input-widget", { hasText: "rewind to before which step?" }));
  await page.locator(".quick-input-list .monaco-list-row").first().click(); // newest: that edit
  await pickRow("restore what", "Files only");
  const conflict = page.locator(".notification-toast", {
    hasText: "conflict: rewind.txt changed since, kept as you have it",
  });
  await visible(conflict);
  await visible(conflict.locator(".monaco-button", { hasText: /^Force$/ }));
  assert.strictEqual(read("rewind.txt"), "first line\nthird version\n", "the file on disk was rewound");
  assert.strictEqual(await buffer(), "first line\nthird version typed by me\n");
  assert.ok(await dirty(), "the user's typing was saved or lost");
  await bench.screenshot("rewind-conflict");
  passed.push(
    "rewind: Tether: Rewind… (files only) over unsaved typing reports the file as a conflict with Force offered, and keeps it on disk and in the buffer",
  );

  // The typing reverted: the file as the last run left it.
  await rewindTab.click();
  await bench.command("File: Revert File");
  await waitFor("the typing reverted", async () => !(await dirty()));

  // 4. `/rewind` typed in the panel: the list, then the conversation alone to before the
  //    third run's edit: that run's steps are marked rewound, the files stay as they are.
  await ask("/rewind");
  const listed = panel.locator("article.command", { hasText: "/rewind" }).last().locator(".command-output");
  await visible(listed);
  const lines = ((await listed.textContent()) ?? "").split("\n").filter((l) => l.includes("edit_file"));
  const id = lines.at(-1)?.split(/\s+/)[0] ?? ""; // oldest first: the newest edit, the third run's
  assert.match(id, /\S/, `no edit in the /rewind list: ${await listed.textContent()}`);
  await ask(`/rewind ${id} conversation`);
  await visible(
    panel.locator("article.command .command-output", { hasText: `rewound to before ${id} (conversation)` }),
  );
  const third = runNamed("edit it again");
  await visible(third.locator(".rewound-label", { hasText: "rewound to before step 1" }));
  assert.strictEqual(
    await third.locator(".items > .rewound").count(),
    await third.locator(".items > *").count(),
  );
  assert.strictEqual(
    read("rewind.txt"),
    "first line\nthird version\n",
    "a conversation rewind changed a file",
  );
  await bench.screenshot("rewind-typed");
  passed.push(
    "rewind: /rewind ID conversation typed in the panel marks that run's steps rewound and leaves the files",
  );

  // Left as found for later flows: no editor open, no toast (the conflict's stays otherwise).
  await bench.command("View: Close All Editors");
  await bench.command("Notifications: Clear All Notifications");
  await page.locator(".notification-toast").first().waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  return passed;
}
