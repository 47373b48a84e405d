import * as assert from "assert";
import { MAX_OPEN_FILES, RecentFiles, askAboutSelection, currentContext, runContext } from "../src/context";
import type { RunContext } from "../src/protocol";
import * as vscode from "./fakeVscode";

function selection(startLine: number, startChar: number, endLine: number, endChar: number) {
  return {
    isEmpty: startLine === endLine && startChar === endChar,
    start: { line: startLine, character: startChar },
    end: { line: endLine, character: endChar },
  };
}

const TEXT = "def add(a, b):\n    return a + b\n";

/** An editor on `uri` whose document answers getText(range) from TEXT. */
function editor(uri: string, sel = selection(0, 0, 0, 0), visible = [selection(0, 0, 30, 0)]) {
  const lines = TEXT.split("\n");
  const getText = (range?: ReturnType<typeof selection>): string => {
    if (range === undefined) {
      return TEXT;
    }
    const picked = lines.slice(range.start.line, range.end.line + 1);
    picked[picked.length - 1] = picked[picked.length - 1].slice(0, range.end.character);
    picked[0] = picked[0].slice(range.start.character);
    return picked.join("\n");
  };
  return {
    document: { uri: vscode.Uri.parse(uri), getText },
    selection: sel,
    visibleRanges: visible,
  } as unknown as Parameters<typeof runContext>[0];
}

describe("runContext", () => {
  it("sends the active file, its selection and selected text, and the first visible range", () => {
    assert.deepStrictEqual(runContext(editor("file:///w/a.py", selection(1, 4, 1, 10))), {
      uri: "file:///w/a.py",
      selection: { start: { line: 1, character: 4 }, end: { line: 1, character: 10 } },
      selectedText: "return",
      visibleRange: { start: { line: 0, character: 0 }, end: { line: 30, character: 0 } },
    });
  });

  it("sends no selection when nothing is selected, and no visible range when there is none", () => {
    assert.deepStrictEqual(runContext(editor("file:///w/a.py", selection(1, 4, 1, 4), [])), {
      uri: "file:///w/a.py",
    });
  });

  it("sends nothing of output panes or proposals, but still the open files", () => {
    assert.strictEqual(runContext(editor("output:tether")), undefined);
    assert.strictEqual(runContext(editor("tether-proposal:/a.py?r.c")), undefined);
    assert.strictEqual(runContext(undefined), undefined);
    assert.deepStrictEqual(runContext(undefined, ["file:///w/b.py"]), { openFiles: ["file:///w/b.py"] });
  });

  it("caps the open files at the most recent ones", () => {
    const many = Array.from({ length: 30 }, (_, i) => `file:///w/f${i}.py`);
    const context = runContext(editor("file:///w/a.py"), many) as RunContext;
    assert.deepStrictEqual(context.openFiles, many.slice(0, MAX_OPEN_FILES));
  });
});

describe("RecentFiles", () => {
  beforeEach(() => vscode.reset());

  it("orders the open tabs' files by recent use, then in tab order; no proposals or duplicates", () => {
    const recent = new RecentFiles();
    for (const uri of ["file:///w/a.py", "file:///w/c.py", "file:///w/b.py"]) {
      vscode.activeEditorChanges.fire({ document: { uri: vscode.Uri.parse(uri) } });
    }
    vscode.activeEditorChanges.fire(undefined); // the output pane took focus: nothing changes
    vscode.window.tabGroups.all = [
      {
        tabs: [
          { input: new vscode.TabInputText(vscode.Uri.parse("file:///w/a.py")) },
          { input: new vscode.TabInputText(vscode.Uri.parse("file:///w/never.py")) },
          { input: new vscode.TabInputText(vscode.Uri.parse("file:///w/b.py")) },
        ],
      },
      {
        tabs: [
          { input: new vscode.TabInputText(vscode.Uri.parse("file:///w/c.py")) },
          {
            input: new vscode.TabInputTextDiff(
              vscode.Uri.parse("file:///w/a.py"),
              vscode.Uri.parse("tether-proposal:/a.py?r.c"),
            ),
          },
          { input: new vscode.TabInputText(vscode.Uri.parse("file:///w/b.py")) },
          { input: { viewType: "webview" } },
        ],
      },
    ];
    assert.deepStrictEqual(recent.openFiles(), [
      "file:///w/b.py",
      "file:///w/c.py",
      "file:///w/a.py",
      "file:///w/never.py",
    ]);
    recent.dispose();
  });

  it("goes into the run's context with the active editor", () => {
    vscode.window.activeTextEditor = editor("file:///w/a.py");
    const recent = new RecentFiles(); // the editor active when it starts counts as used
    vscode.window.tabGroups.all = [
      {
        tabs: [
          { input: new vscode.TabInputText(vscode.Uri.parse("file:///w/z.py")) },
          { input: new vscode.TabInputText(vscode.Uri.parse("file:///w/a.py")) },
        ],
      },
    ];
    assert.deepStrictEqual(currentContext(recent), {
      uri: "file:///w/a.py",
      visibleRange: { start: { line: 0, character: 0 }, end: { line: 30, character: 0 } },
      openFiles: ["file:///w/a.py", "file:///w/z.py"],
    });
    recent.dispose();
  });
});

describe("Tether: Ask about Selection", () => {
  beforeEach(() => vscode.reset());

  it("asks for a prompt about the selected lines and runs it with the selection as context", async () => {
    vscode.window.activeTextEditor = editor("file:///work/app/calc.py", selection(0, 0, 1, 16));
    vscode.answers.showInputBox = async () => "  why add?  ";
    const started: Array<[string, RunContext | undefined]> = [];
    await askAboutSelection(async (prompt, context) => started.push([prompt, context]));
    const [[options]] = vscode.calls.filter(([name]) => name === "showInputBox").map(([, args]) => args);
    assert.deepStrictEqual(options, {
      title: "Tether: Ask about Selection",
      prompt: "About lines 1–2 of calc.py (the selected text goes along)",
      ignoreFocusOut: true,
    });
    assert.deepStrictEqual(started, [
      [
        "why add?",
        {
          uri: "file:///work/app/calc.py",
          selection: { start: { line: 0, character: 0 }, end: { line: 1, character: 16 } },
          selectedText: TEXT.trimEnd(),
          visibleRange: { start: { line: 0, character: 0 }, end: { line: 30, character: 0 } },
        },
      ],
    ]);
  });

  it("says to select something first when nothing is selected, and runs nothing on Esc", async () => {
    const started: string[] = [];
    vscode.window.activeTextEditor = editor("file:///work/app/calc.py");
    await askAboutSelection(async (prompt) => started.push(prompt));
    const [[message]] = vscode.calls.filter(([name]) => name === "showInformationMessage").map(([, a]) => a);
    assert.match(String(message), /select some text first/);
    vscode.window.activeTextEditor = editor("file:///work/app/calc.py", selection(1, 4, 1, 10));
    await askAboutSelection(async (prompt) => started.push(prompt)); // Esc: undefined
    assert.deepStrictEqual(started, []);
  });
});
