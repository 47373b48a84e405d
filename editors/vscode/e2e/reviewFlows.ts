// The real-VS-Code flows of inline review, the run's context and diagnostics (after those of
// flows.ts, in the same window): per-hunk Accept / Reject in the file itself, Ask about
// Selection from the editor's context menu, and a real pyright diagnostic in the Problems view
// and (once the server asks `agent/diagnostics` after an edit) in the edit's tool result.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { Locator } from "./browser";
import { STEP_TIMEOUT_MS, Workbench, transcript, waitFor } from "./workbench";

export const CALC = "one = 1\ntwo = 2\nthree = 3\nfour = 4\nfive = 5\n";
export const TYPED = "def add(a: int, b: int) -> int:\n    return a + b\n";
/** pyright's message for TYPED's edit below (rule reportReturnType). */
const PYRIGHT_ERROR = 'Type "str" is not assignable to return type "int"';

/** The "Tether Server" output channel (the LanguageClient's trace of every message). */
export function serverLog(userData: string): string {
  return logsNamed(userData, /^\d+-Tether Server\.log$/);
}

function logsNamed(userData: string, name: RegExp): string {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else if (/output_logging_/.test(dir) && name.test(entry.name)) {
        found.push(full);
      }
    }
  };
  const logs = path.join(userData, "logs");
  if (fs.existsSync(logs)) {
    walk(logs);
  }
  return found.map((file) => fs.readFileSync(file, "utf8")).join("");
}

function finishedRuns(userData: string): number {
  return (transcript(userData).match(/^■ /gm) ?? []).length;
}

/** Runs every flow; the names of those that passed (the first failure throws). */
export async function reviewFlows(bench: Workbench, root: string, userData: string): Promise<string[]> {
  const page = bench.page;
  const passed: string[] = [];
  const read = (name: string): string => fs.readFileSync(path.join(root, name), "utf8");
  const script = (value: object): void =>
    fs.writeFileSync(path.join(root, "flow.json"), JSON.stringify(value));
  const edit = (file: string, oldText: string, newText: string): object => ({
    turns: [
      {
        text: "Editing.",
        toolCalls: [{ name: "edit_file", arguments: { path: file, old_text: oldText, new_text: newText } }],
      },
      { text: "Done." },
    ],
  });
  const oneMoreRun = async (before: number): Promise<void> =>
    waitFor(`run ${before + 1} to finish`, () => finishedRuns(userData) > before);
  const lens = (title: string): Locator =>
    page.locator(".monaco-editor .codelens-decoration a", { hasText: new RegExp(`^${title}$`) });
  /** Inline review's block (a comment thread) of added lines, by its title. */
  const block = (title: string): Locator =>
    page.locator(".review-widget", { has: page.locator(".review-title", { hasText: title }) });
  const blockAction = (title: string, action: string): Locator =>
    block(title).locator(".head .action-label", { hasText: new RegExp(`^${action}$`) });
  const dirtyTabs = async (): Promise<number> => page.locator(".tabs-container .tab.dirty").count();
  /** VS Code's Comments view, shown in the panel. */
  const commentsView = page
    .locator(".part.panel .pane-body.commentsView, .part.panel .comments-panel")
    .first();
  /** Quick Open lists a new file once VS Code has seen it on disk: asked again until it does. */
  const open = async (name: string, text: string): Promise<void> => {
    const row = page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first();
    await waitFor(`${name} in Quick Open`, async () => {
      await page.keyboard.press("Control+P");
      await page.locator(".quick-input-widget input").fill(name);
      try {
        await row.waitFor({ state: "visible", timeout: 3000 });
        return true;
      } catch {
        await page.keyboard.press("Escape");
        return false;
      }
    });
    await page.keyboard.press("Enter");
    await waitFor(`${name} in the editor`, async () => (await bench.editorText()).includes(text));
  };

  // The agent panel beside the editor (already open after panelFlows): its cards follow the review.
  const panelPage = page
    .frameLocator('iframe.webview[src*="extensionId=tether-dev.tether"]')
    .frameLocator("iframe#active-frame");
  await bench.command("Tether: Open Agent Panel");
  // Once loaded the webview has the focus: given back to the workbench for its keys.
  await panelPage.locator("#prompt").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await page.locator(".monaco-workbench .part.editor").click();

  // 9. Inline review: from the diff editor's title "Review in File", the two changes are shown
  //    in calc.py itself; the user adds a line above them (unsaved), the review follows;
  //    accept the first, reject the second: only the first lands, the typing stays unsaved.
  fs.writeFileSync(path.join(root, "calc.py"), CALC);
  fs.writeFileSync(path.join(root, "typed.py"), TYPED); // for flow 11, seen by VS Code by then
  script(edit("calc.py", CALC, CALC.replace("one = 1", "one = 10").replace("five = 5", "five = 50")));
  let before = finishedRuns(userData);
  await bench.run("change two numbers");
  await bench.titleButton("Review in File").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.titleButton("Review in File").click();
  await lens("Tether change 1 of 2: Accept").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await waitFor("the proposal tab to make way for the file", async () => (await bench.proposalTabs()) === 0);
  assert.ok((await bench.editorText()).includes("one = 1\n"), "the buffer changed before any accept");
  assert.strictEqual(await lens("Tether change 2 of 2: Accept").count(), 1);
  // The added lines: a green block below each hunk's red old lines, not text after them.
  await block("Tether change 1 of 2: 1 line to add")
    .locator(".comment-body", { hasText: "+one = 10" })
    .waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await block("Tether change 2 of 2: 1 line to add")
    .locator(".comment-body", { hasText: "+five = 50" })
    .waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  assert.ok(!(await bench.editorText()).includes("→"), "the added text is still after the old line");
  await bench.screenshot("inline-review");
  await page.locator(".editor-instance .view-line", { hasText: "two = 2" }).click();
  await page.keyboard.press("Control+Home");
  await page.keyboard.press("Enter");
  await page.keyboard.press("ArrowUp");
  await page.keyboard.type("# note");
  await waitFor("the typed line", async () => (await bench.editorText()).startsWith("# note\none = 1\n"));
  assert.strictEqual(
    await lens("Tether change 2 of 2: Accept").count(),
    1,
    "the review stopped on typing above it",
  );
  await lens("Tether change 1 of 2: Accept").click();
  await lens("Tether change 1 of 2: Accepted · Undo").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  // The panel's card follows the review (issue 28 item 3).
  const card = page
    .frameLocator('iframe.webview[src*="extensionId=tether-dev.tether"]')
    .frameLocator("iframe#active-frame")
    .locator("section.approval", { hasText: "Edit calc.py" });
  await card
    .locator(".approval-where", { hasText: "under review in the file · 1 of 2 accepted" })
    .waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  // The edit's tool row counts the lines its card counts (one diff, the proposal's).
  const row = panelPage.locator("details.tool", { hasText: "edit_file calc.py" }).last();
  assert.deepStrictEqual(
    await row.locator(".tool-stat .stat").textContent(),
    await card.locator(".file-pill .stat").textContent(),
  );
  assert.strictEqual(await card.locator(".file-pill .stat").textContent(), "+2−2");
  // VS Code showed its Comments view for the blocks (they are comment threads).
  await commentsView.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.screenshot("inline-review-first-accepted");
  // The second from the keyboard: Alt+F5 goes to the next change, Alt+N rejects it.
  await page.locator(".editor-instance .view-line", { hasText: "three = 3" }).click();
  await page.keyboard.press("Alt+F5");
  await waitFor("the cursor on the second change", async () =>
    /Ln 6,/.test(
      (await page
        .locator(".statusbar-item", { hasText: /^Ln \d+, Col \d+/ })
        .first()
        .textContent()) ?? "",
    ),
  );
  await page.keyboard.press("Alt+N");
  await oneMoreRun(before);
  const accepted = `# note\n${CALC.replace("one = 1", "one = 10")}`;
  await waitFor(
    "the buffer to hold the accepted change only",
    async () => (await bench.editorText()) === accepted,
  );
  assert.strictEqual(read("calc.py"), CALC, "the user's unsaved typing was saved with the edit");
  await page.keyboard.press("Control+S");
  await waitFor("calc.py saved", () => read("calc.py") === accepted);
  await waitFor("the lenses to go", async () => (await lens("Open Diff").count()) === 0);
  assert.match(transcript(userData), /✓ edit_file/);
  // …and it closes with the review, not left open and empty.
  await commentsView.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  await bench.screenshot("inline-review-done");
  passed.push(
    "inline review in the file, typing above it: the first change accepted (the panel's card says 1 of 2 accepted), the second rejected with Alt+F5 then Alt+N; only the first lands",
  );

  // 10. Ask about Selection from the editor's context menu: the run gets the selected text.
  await page.locator(".editor-instance .view-line", { hasText: "three = 3" }).click();
  await page.keyboard.press("Home");
  await page.keyboard.press("Shift+End");
  await page.locator(".editor-instance .view-line", { hasText: "three = 3" }).click({ button: "right" });
  const item = page.locator(".context-view .action-label", { hasText: "Tether: Ask about Selection" });
  await item.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.screenshot("ask-about-selection-menu");
  await item.click();
  await page.locator(".quick-input-widget", { hasText: "About line 4 of calc.py" }).waitFor({
    state: "visible",
    timeout: STEP_TIMEOUT_MS,
  });
  script({ turns: [{ text: "It sets three." }] });
  before = finishedRuns(userData);
  await page.locator(".quick-input-widget input").fill("what is this?");
  await page.keyboard.press("Enter");
  await oneMoreRun(before);
  const sent = serverLog(userData);
  assert.match(sent, /"selectedText": "three = 3"/, "agent/run carried no selectedText");
  assert.match(sent, /"uri": "file:\/\/\/[^"]*\/calc\.py"/);
  assert.match(sent, /"openFiles": \[/);
  // The run in the panel shows the selection it carried (issue 28 item 6).
  const askedRun = page
    .frameLocator('iframe.webview[src*="extensionId=tether-dev.tether"]')
    .frameLocator("iframe#active-frame")
    .locator("article.run", { hasText: "what is this?" });
  const chip = askedRun.locator(".run-context .chip.selection", { hasText: "calc.py:4" });
  await chip.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await chip.locator("summary").click();
  await chip
    .locator(".chip-detail", { hasText: "three = 3" })
    .waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.screenshot("ask-about-selection-in-panel");
  passed.push(
    "Ask about Selection from the context menu runs with the selection, its text and the open files; the panel's run shows the selection",
  );

  // 11. A real language server: pyright (a test-only extension) reports the type error an
  //     allowed edit introduces, in the Problems view, and the server's agent/diagnostics
  //     after the edit puts it in the edit's tool result.
  await open("typed.py", "return a + b");
  script(edit("typed.py", "return a + b", "return str(a + b)"));
  before = finishedRuns(userData);
  await bench.run("return a string");
  await bench.titleButton("Allow").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.titleButton("Allow").click();
  await oneMoreRun(before);
  // Ctrl+Shift+M: the Problems view (the Output panel is no longer opened by runs the agent
  // panel shows, so the bottom panel may be closed).
  await page.locator(".monaco-workbench .part.editor").click();
  await page.keyboard.press("Control+Shift+M");
  const problem = page.locator(".markers-panel .monaco-list-row", { hasText: PYRIGHT_ERROR });
  await problem.first().waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.screenshot("pyright-problem");
  passed.push("a real pyright diagnostic of the agent's edit shows in the Problems view");
  assert.match(
    serverLog(userData),
    /"tools": \[[^\]]*"diagnostics"/,
    "the server offers no diagnostics tool",
  );
  assert.ok(
    transcript(userData).includes(PYRIGHT_ERROR),
    "the edit's tool result lacks pyright's diagnostic",
  );
  assert.match(serverLog(userData), /Received request 'agent\/diagnostics/);
  await page.locator(".part.panel .action-label", { hasText: /^Output/ }).click();
  await bench.screenshot("pyright-in-tool-result");
  passed.push("pyright's diagnostic reaches the model in the edit's tool result (agent/diagnostics)");

  // 12. The buffer during a review is the user's: unchanged and not dirty while the blocks show;
  //     saved in the middle of the review, the file on disk keeps the original text; all
  //     rejected from the blocks' titles, nothing changed and Ctrl+Z brings nothing back.
  const REVIEWED = "alpha = 1\nbeta = 2\ngamma = 3\ndelta = 4\nepsilon = 5\n";
  fs.writeFileSync(path.join(root, "reviewed.py"), REVIEWED);
  await open("reviewed.py", "epsilon = 5");
  const proposed = REVIEWED.replace("alpha = 1", "alpha = 100\nalpha_2 = 200").replace(
    "epsilon = 5",
    "epsilon = 500",
  );
  script(edit("reviewed.py", REVIEWED, proposed));
  before = finishedRuns(userData);
  await bench.run("change alpha and epsilon");
  await bench.titleButton("Review in File").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.titleButton("Review in File").click();
  const first = "Tether change 1 of 2: 2 lines to add";
  const second = "Tether change 2 of 2: 1 line to add";
  await block(first).locator(".comment-body", { hasText: "+alpha_2 = 200" }).waitFor({
    state: "visible",
    timeout: STEP_TIMEOUT_MS,
  });
  await waitFor("the proposal tab to make way for the file", async () => (await bench.proposalTabs()) === 0);
  await page.locator(".editor-instance .view-line", { hasText: "gamma = 3" }).click();
  assert.strictEqual(await bench.editorText(), REVIEWED, "the buffer changed during review");
  assert.strictEqual(await dirtyTabs(), 0, "the file under review is dirty");
  await bench.screenshot("inline-review-blocks");
  await page.keyboard.press("Control+S");
  // Saving is quick; nothing to wait for but the disk, which must hold the original text.
  await waitFor("the save to be done", async () => (await dirtyTabs()) === 0);
  assert.strictEqual(read("reviewed.py"), REVIEWED, "saving in the middle of a review saved the proposal");
  assert.strictEqual(await block(second).count(), 1, "saving ended the review");
  await blockAction(second, "Reject").click();
  await block(second).waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  await blockAction(first, "Reject").click();
  await oneMoreRun(before);
  await waitFor("the blocks to go", async () => (await page.locator(".review-widget").count()) === 0);
  assert.match(transcript(userData), /✗ edit_file/);
  assert.strictEqual(await dirtyTabs(), 0, "rejecting all left the file dirty");
  await page.locator(".editor-instance .view-line", { hasText: "gamma = 3" }).click();
  await page.keyboard.press("Control+Z");
  await page.keyboard.press("Control+Z");
  assert.strictEqual(await bench.editorText(), REVIEWED, "Ctrl+Z brought text back");
  assert.strictEqual(await dirtyTabs(), 0, "Ctrl+Z after rejecting all made the file dirty");
  assert.strictEqual(read("reviewed.py"), REVIEWED);
  passed.push(
    "inline review with blocks: the buffer is unchanged and not dirty during review; a save in the middle saves the original; all rejected from the blocks' titles, nothing to undo",
  );

  // 13. Accepted from the blocks' titles: the edit lands once, and one Ctrl+Z undoes it.
  script(edit("reviewed.py", REVIEWED, proposed));
  before = finishedRuns(userData);
  await bench.run("change alpha and epsilon again");
  await bench.titleButton("Review in File").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.titleButton("Review in File").click();
  await blockAction(first, "Accept").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await blockAction(first, "Accept").click();
  // Accepted: the block folds away (its gutter icon opens it: *accepted*, with Undo), the
  // CodeLens says so; the buffer is still unchanged.
  await lens("Tether change 1 of 2: Accepted · Undo").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await block(first).waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  assert.strictEqual(read("reviewed.py"), REVIEWED);
  assert.strictEqual(await dirtyTabs(), 0, "accepting one change of two changed the buffer");
  await bench.screenshot("inline-review-block-accepted");
  await blockAction(second, "Accept").click();
  await oneMoreRun(before);
  await waitFor("the edit in the buffer", async () => (await bench.editorText()) === proposed);
  assert.strictEqual(
    ((await bench.editorText()).match(/alpha_2 = 200/g) ?? []).length,
    1,
    "the edit landed twice",
  );
  await waitFor("the blocks to go", async () => (await page.locator(".review-widget").count()) === 0);
  await bench.screenshot("inline-review-accepted-landed");
  await page.locator(".editor-instance .view-line", { hasText: "gamma = 3" }).click();
  await page.keyboard.press("Control+Z");
  await waitFor("one Ctrl+Z to undo the edit", async () => (await bench.editorText()) === REVIEWED);
  passed.push(
    "inline review with blocks: both accepted from the blocks' titles, the edit lands once; one Ctrl+Z undoes it",
  );
  // Left as found for later flows: the undo leaves the buffer dirty, and a later flow's
  // "Close All Editors" would stop at VS Code's "save the changes?" dialog.
  await bench.command("File: Revert File");
  await waitFor("reviewed.py no longer dirty", async () => (await dirtyTabs()) === 0);
  return passed;
}
