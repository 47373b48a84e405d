// The model's code tools answered by VS Code's own language features (`agent/code`), with a
// real Python language server in the window: pyright, through the test-only extension of
// e2e/pyright. A scripted session calls definition, references, hover and symbols (each
// result must name VS Code as who answered, not a language server Tether started), then a
// rename of a function used in two files: its approval is the change of both files in the
// multi-file diff editor, denied once (no file changes) and allowed once (both files change,
// through their open buffers, and are saved). Runs in the same window as the other flows.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { STEP_TIMEOUT_MS, Workbench, serverTrace, transcript, waitFor } from "./workbench";

const SHAPES =
  'def area(width: float, height: float) -> float:\n    """The area of a rectangle."""\n    return width * height\n';
const REPORT =
  'from shapes import area\n\n\ndef report() -> str:\n    total = area(2, 3)\n    return f"{total}"\n';

function call(name: string, args: object): object {
  return { name, arguments: args };
}

export async function codeFlows(bench: Workbench, root: string, userData: string): Promise<string[]> {
  const page = bench.page;
  const passed: string[] = [];
  const read = (name: string): string => fs.readFileSync(path.join(root, name), "utf8");
  const script = (value: object): void =>
    fs.writeFileSync(path.join(root, "flow.json"), JSON.stringify(value));
  const finished = (): number => (transcript(userData).match(/^■ /gm) ?? []).length;
  /** This run's part of the transcript (earlier flows' runs said similar things). */
  const runText = (prompt: string): string => {
    const text = transcript(userData);
    return text.slice(text.lastIndexOf(`▶ ${prompt}`));
  };
  const count = (text: string, pattern: RegExp): number => (text.match(pattern) ?? []).length;
  // Quick Open lists a file written from outside once the file search notices it: asked again.
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

  /** Unsaved tabs of this flow's files (earlier flows may leave others). */
  const ourDirtyTabs = async (): Promise<number> =>
    page.locator(".tabs-container .tab.dirty", { hasText: /shapes\.py|report\.py/ }).count();

  fs.writeFileSync(path.join(root, "shapes.py"), SHAPES);
  fs.writeFileSync(path.join(root, "report.py"), REPORT);
  // Runs started from the palette, their approvals in the editor: no panel in the way.
  if ((await page.locator(".monaco-workbench .part.sidebar:visible").count()) > 0) {
    await bench.command("View: Close Primary Side Bar"); // listed only while it is open
  }
  // Both files open: pyright (activated by a Python file) has them, and a rename reaches
  // their buffers.
  await open("shapes.py", "The area of a rectangle.");
  await open("report.py", "total = area(2, 3)");

  // 1. definition, references, hover and symbols, each answered by VS Code's providers.
  script({
    turns: [
      {
        text: "Looking around.",
        toolCalls: [
          call("definition", { path: "report.py", line: 5, symbol: "area" }),
          call("references", { path: "shapes.py", line: 1, symbol: "area" }),
          call("hover", { path: "report.py", line: 5, symbol: "area" }),
          call("symbols", { path: "shapes.py" }),
          call("symbols", { query: "report" }),
        ],
      },
      { text: "Done." },
    ],
  });
  const asked = count(serverTrace(userData), /Received request 'agent\/code/g);
  let before = finished();
  await bench.run("where is area");
  await waitFor("the code tools' run to finish", () => finished() > before);
  const looked = runText("where is area");
  await bench.screenshot("code-tools");
  const expected = [
    "Definition of area (answered by VS Code):",
    "shapes.py:1:5: def area(width: float, height: float) -> float:",
    "3 references to area (answered by VS Code):",
    "report.py:1:20: from shapes import area",
    "report.py:5:13: total = area(2, 3)",
    "area (answered by VS Code):",
    "-> float",
    "The area of a rectangle.",
    "Symbols of shapes.py (answered by VS Code):",
    "function area — shapes.py:1:5",
    "Workspace symbols matching 'report' (answered by VS Code):",
    "function report — report.py:4:5",
  ];
  for (const line of expected) {
    assert.ok(looked.includes(line), `the run's results lack ${JSON.stringify(line)}:\n${looked}`);
  }
  assert.ok(!looked.includes("pyright-langserver"), "a language server Tether started answered");
  assert.ok(
    count(serverTrace(userData), /Received request 'agent\/code/g) >= asked + 5,
    "agent/code not asked",
  );
  passed.push(
    "code tools: definition, references, hover and symbols answered by VS Code's language features (pyright)",
  );

  // 2. A rename across both files, denied: the change of both files in one multi-file diff
  //    editor; Deny (with feedback) changes nothing, on disk or in the buffers.
  const RENAME = "Rename area → rect_area in 2 files (answered by VS Code)";
  script({
    turns: [
      {
        text: "Renaming.",
        toolCalls: [call("rename", { path: "shapes.py", line: 1, symbol: "area", new_name: "rect_area" })],
      },
      { text: "Done." },
    ],
  });
  const editsBefore = count(serverTrace(userData), /Received request 'workspace\/applyEdit/g);
  before = finished();
  await bench.run("rename area, then deny");
  const changes = page.locator(`.tabs-container .tab[aria-label*="${RENAME} (proposed by Tether)"]`);
  await changes.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  const multi = page.locator(".monaco-workbench .part.editor .multiDiffEditor");
  await multi.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await waitFor("both files in the multi-file diff editor", async () => {
    const text = (await multi.textContent()) ?? "";
    return text.includes("shapes.py") && text.includes("report.py") && text.includes("rect_area");
  });
  // Each file shown as changed in place, not as a file renamed (its proposal has its path).
  assert.strictEqual(
    await multi.locator(".multiDiffEntry .status.renamed").count(),
    0,
    "a file shown renamed",
  );
  await bench.titleButton("Allow").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.screenshot("rename-approval");
  await bench.titleButton("Deny").click();
  await page.locator(".quick-input-widget", { hasText: "Optional: tell the agent why" }).waitFor({
    state: "visible",
    timeout: STEP_TIMEOUT_MS,
  });
  await page.locator(".quick-input-widget input").fill("keep the name area");
  await page.keyboard.press("Enter");
  await waitFor("the denied rename's run to finish", () => finished() > before);
  await changes.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  assert.strictEqual(read("shapes.py"), SHAPES);
  assert.strictEqual(read("report.py"), REPORT);
  assert.strictEqual(await ourDirtyTabs(), 0, "a buffer changed");
  assert.ok((await bench.editorText()).includes("total = area(2, 3)"), "report.py's buffer changed");
  assert.strictEqual(count(serverTrace(userData), /Received request 'workspace\/applyEdit/g), editsBefore);
  assert.ok(runText("rename area, then deny").includes("keep the name area"), "the agent was not told why");
  await bench.screenshot("rename-denied");
  passed.push("rename: the change of both files in one multi-file diff editor; Deny changes neither");

  // 3. The same rename allowed: both files change through the editor (workspace/applyEdit,
  //    one per file, into the open buffers) and are saved.
  script({
    turns: [
      {
        text: "Renaming.",
        toolCalls: [call("rename", { path: "shapes.py", line: 1, symbol: "area", new_name: "rect_area" })],
      },
      { text: "Done." },
    ],
  });
  before = finished();
  await bench.run("rename area, then allow");
  await changes.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.titleButton("Allow").waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await bench.titleButton("Allow").click();
  await waitFor("the allowed rename's run to finish", () => finished() > before);
  await changes.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
  assert.strictEqual(read("shapes.py"), SHAPES.replace("def area", "def rect_area"));
  assert.strictEqual(read("report.py"), REPORT.replace(/\barea\b/g, "rect_area"));
  assert.strictEqual(
    count(serverTrace(userData), /Received request 'workspace\/applyEdit/g),
    editsBefore + 2,
  );
  await waitFor("report.py's buffer to show the rename", async () =>
    (await bench.editorText()).includes("total = rect_area(2, 3)"),
  );
  assert.strictEqual(await ourDirtyTabs(), 0, "a renamed buffer is unsaved");
  assert.ok(
    runText("rename area, then allow").includes(
      "Renamed area to rect_area: 3 occurrences in 2 files (shapes.py, report.py) (answered by VS Code).",
    ),
    runText("rename area, then allow"),
  );
  await bench.screenshot("rename-allowed");
  passed.push("rename: allowed, both files change through their open buffers and are saved");

  // 4. A rename whose edit also renames a file (a Rust module's, as rust-analyzer renames it;
  //    the test extension's provider here): VS Code's public WorkspaceEdit lists only the text
  //    edit, and applying that alone would leave `mod salute;` with no salute.rs. No approval:
  //    the tool's error says why, and neither file changes.
  const MAIN = "mod greet;\n\nfn main() {\n    greet::hello();\n}\n";
  const GREET = "pub fn hello() {}\n";
  fs.writeFileSync(path.join(root, "main.rs"), MAIN);
  fs.writeFileSync(path.join(root, "greet.rs"), GREET);
  await open("main.rs", "greet::hello()");
  script({
    turns: [
      {
        text: "Renaming the module.",
        toolCalls: [call("rename", { path: "main.rs", line: 1, symbol: "greet", new_name: "salute" })],
      },
      { text: "Done." },
    ],
  });
  before = finished();
  const applied = count(serverTrace(userData), /Received request 'workspace\/applyEdit/g);
  await bench.run("rename the module greet");
  await waitFor("the module rename's run to finish", () => finished() > before);
  const refused = runText("rename the module greet");
  assert.ok(
    refused.includes("the rename would also rename greet.rs to salute.rs, which Tether does not apply"),
    refused,
  );
  assert.strictEqual(read("main.rs"), MAIN);
  assert.strictEqual(read("greet.rs"), GREET);
  assert.ok(!fs.existsSync(path.join(root, "salute.rs")), "salute.rs was created");
  assert.strictEqual(count(serverTrace(userData), /Received request 'workspace\/applyEdit/g), applied);
  assert.strictEqual(await page.locator(".tabs-container .tab.dirty", { hasText: "main.rs" }).count(), 0);
  await bench.screenshot("rename-with-file");
  passed.push(
    "rename: one that would also rename a file (a Rust module's) is refused with why; nothing changes",
  );
  return passed;
}
