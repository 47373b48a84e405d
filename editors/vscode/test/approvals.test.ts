import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { Approvals, OUTSIDE_WINDOW_FEEDBACK, PENDING_CONTEXT_KEY } from "../src/approvals";
import type { AgentApproveParams } from "../src/protocol";
import { ProposalFiles } from "../src/proposalFiles";
import * as vscode from "./fakeVscode";

const GOLDEN = path.resolve(__dirname, "../../../../tests/golden");
const [EDIT, BASH] = JSON.parse(
  fs.readFileSync(path.join(GOLDEN, "agent-approve.params.json"), "utf8"),
) as AgentApproveParams[];
const TARGET = vscode.Uri.parse(EDIT.preview.kind === "diff" ? (EDIT.preview as { uri: string }).uri : "");

function callsOf(name: string): unknown[][] {
  return vscode.calls.filter(([n]) => n === name).map(([, args]) => args);
}

function diffCall(): { left: vscode.Uri; right: vscode.Uri; title: string } {
  const [args] = callsOf("executeCommand").filter((a) => a[0] === "vscode.diff");
  assert.ok(args, "vscode.diff was not opened");
  return { left: args[1] as vscode.Uri, right: args[2] as vscode.Uri, title: args[3] as string };
}

function contextValues(): unknown[] {
  return callsOf("executeCommand")
    .filter((a) => a[0] === "setContext" && a[1] === PENDING_CONTEXT_KEY)
    .map((a) => a[2]);
}

describe("approvals in the editor", () => {
  let files: ProposalFiles;
  let approvals: Approvals;
  let token: vscode.CancellationTokenSource;

  beforeEach(() => {
    vscode.reset();
    files = new ProposalFiles();
    approvals = new Approvals(files);
    token = new vscode.CancellationTokenSource();
    vscode.workspace.textDocuments.push(vscode.document(TARGET, "a + b\n"));
  });

  const approve = (params: AgentApproveParams) =>
    approvals.approve(params, token.token as unknown as Parameters<Approvals["approve"]>[1]);

  it("opens current vs proposed text in the diff editor and sends the user's edit with Allow", async () => {
    vscode.answers.showInformationMessage = async (...args) => {
      const { left, right, title } = diffCall();
      assert.strictEqual(left.toString(), "file:///work/app/src/app.py");
      assert.strictEqual(right.toString(), "tether-proposal:/r-1/call_2_1/app.py");
      assert.strictEqual(title, "Edit src/app.py (proposed by Tether)");
      assert.strictEqual(files.text(right as never), "a * b\n");
      assert.deepStrictEqual(args, ["Tether: Edit src/app.py", "Allow", "Allow Always", "Deny"]);
      // The user edits the right side, leaves it unsaved, and clicks Allow.
      vscode.workspace.textDocuments.push(vscode.document(right, "a ** b\n", true));
      vscode.window.tabGroups.all = [{ tabs: [{ input: new vscode.TabInputTextDiff(left, right) }] }];
      return "Allow";
    };
    const answer = await approve(EDIT);
    assert.deepStrictEqual(answer, { decision: "allow", editedText: "a ** b\n" });
    assert.deepStrictEqual(callsOf("document.save"), [["tether-proposal:/r-1/call_2_1/app.py"]]);
    assert.strictEqual(callsOf("tabGroups.close").length, 1);
    assert.strictEqual(files.text(diffCall().right as never), undefined);
    assert.deepStrictEqual(contextValues(), [true, false]);
    assert.strictEqual(approvals.pendingCount, 0);
  });

  it("denies from the editor-title button with the feedback typed", async () => {
    vscode.answers.showInformationMessage = () => {
      setImmediate(() => assert.ok(approvals.decide("deny", diffCall().right as never)));
      return vscode.never();
    };
    vscode.answers.showInputBox = async () => "  keep the sum ";
    assert.deepStrictEqual(await approve(EDIT), { decision: "deny", feedback: "keep the sum" });
    assert.strictEqual(approvals.decide("allow"), false); // nothing left to decide
  });

  it("sends only the window when the user edited around it, and denies an edit outside it", async () => {
    vscode.workspace.textDocuments = [vscode.document(TARGET, "a + b\nkeep\n")];
    vscode.answers.showInformationMessage = async () => {
      const { right } = diffCall();
      assert.strictEqual(files.text(right as never), "a * b\nkeep\n");
      vscode.workspace.textDocuments.push(vscode.document(right, "a * b\r\nmore\r\nkeep\r\n", true));
      return "Allow";
    };
    assert.deepStrictEqual(await approve(EDIT), { decision: "allow", editedText: "a * b\nmore\n" });

    vscode.reset();
    vscode.workspace.textDocuments = [vscode.document(TARGET, "a + b\nkeep\n")];
    vscode.answers.showInformationMessage = async () => {
      vscode.workspace.textDocuments.push(vscode.document(diffCall().right, "a * b\nKEEP\n", true));
      return "Allow";
    };
    assert.deepStrictEqual(await approve(EDIT), { decision: "deny", feedback: OUTSIDE_WINDOW_FEEDBACK });
  });

  it("shows a new file against an empty left side; Allow Always sends no arguments", async () => {
    vscode.workspace.textDocuments = [];
    const create: AgentApproveParams = {
      ...EDIT,
      tool: "write_file",
      title: "Create pkg/new.py",
      arguments: { path: "pkg/new.py", content: "x = 1\n" },
      preview: {
        kind: "diff",
        uri: "file:///work/app/pkg/new.py",
        diff: "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+x = 1\n",
        proposed: {
          range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
          text: "x = 1\n",
          baseText: "",
        },
      },
    };
    vscode.answers.showInformationMessage = async () => {
      const { left, right } = diffCall();
      assert.strictEqual(left.toString(), "tether-proposal:/r-1/call_2_1-before/new.py");
      assert.strictEqual(files.text(left as never), "");
      assert.strictEqual(files.text(right as never), "x = 1\n");
      return "Allow Always";
    };
    assert.deepStrictEqual(await approve(create), { decision: "allow-always" });
    assert.strictEqual(files.text(diffCall().left as never), undefined);
  });

  it("shows the window alone when the file here no longer holds it, and sends its edit", async () => {
    vscode.workspace.textDocuments = [vscode.document(TARGET, "something else\n")];
    vscode.answers.showInformationMessage = async () => {
      const { left, right } = diffCall();
      assert.strictEqual(left.toString(), "tether-proposal:/r-1/call_2_1-before/app.py");
      assert.strictEqual(files.text(left as never), "a + b\n");
      assert.strictEqual(files.text(right as never), "a * b\n");
      vscode.workspace.textDocuments.push(vscode.document(right, "a - b\n", true));
      return "Allow";
    };
    assert.deepStrictEqual(await approve(EDIT), { decision: "allow", editedText: "a - b\n" });
    assert.strictEqual(files.text(diffCall().left as never), undefined);
  });

  it("denies when the server cancels the request, and clears the pending state", async () => {
    vscode.answers.showInformationMessage = () => {
      setImmediate(() => token.cancel());
      return vscode.never();
    };
    assert.deepStrictEqual(await approve(EDIT), { decision: "deny", feedback: "the approval was cancelled" });
    assert.deepStrictEqual(contextValues(), [true, false]);
    assert.strictEqual(callsOf("showInputBox").length, 0);
  });

  it("denies pending approvals without asking anything when the extension goes away", async () => {
    vscode.answers.showInformationMessage = () => {
      setImmediate(() => approvals.dispose());
      return vscode.never();
    };
    assert.deepStrictEqual(await approve(EDIT), { decision: "deny", feedback: "the approval was cancelled" });
    assert.strictEqual(callsOf("showInputBox").length, 0);
  });

  it("lets the user edit a command, confirms it with its folder, then allows it", async () => {
    const modals: unknown[][] = [];
    const choices = ["Edit Command…", "Allow"];
    vscode.answers.showWarningMessage = async (...args) => {
      modals.push(args);
      return choices.shift();
    };
    vscode.answers.showInputBox = async () => "python -m pytest -q";
    assert.deepStrictEqual(await approve(BASH), {
      decision: "allow",
      arguments: { command: "python -m pytest -q" },
    });
    assert.deepStrictEqual(modals[0], [
      "Tether: Run python -m unittest",
      { modal: true, detail: "$ python -m unittest\n\nin /work/app" },
      "Allow",
      "Allow Always",
      "Edit Command…",
      "Deny",
    ]);
    assert.deepStrictEqual(modals[1][1], { modal: true, detail: "$ python -m pytest -q\n\nin /work/app" });
    const [[inputOptions]] = callsOf("showInputBox");
    assert.deepStrictEqual(inputOptions, {
      title: "Command to run in /work/app",
      value: "python -m unittest",
      ignoreFocusOut: true,
    });
  });

  it("denies a command dismissed with Esc without asking for feedback; Deny asks", async () => {
    assert.deepStrictEqual(await approve(BASH), { decision: "deny" });
    assert.strictEqual(callsOf("showInputBox").length, 0);
    vscode.answers.showWarningMessage = async () => "Deny";
    vscode.answers.showInputBox = async () => "use pytest instead";
    assert.deepStrictEqual(await approve(BASH), { decision: "deny", feedback: "use pytest instead" });
  });
});
