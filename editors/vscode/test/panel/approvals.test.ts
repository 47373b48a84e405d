import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { Approvals } from "../../src/approvals";
import type { AgentApproveParams, AgentApproveResult } from "../../src/protocol";
import { ProposalFiles } from "../../src/proposalFiles";
import { SharedApprovals } from "../../src/panel/sharedApprovals";
import * as vscode from "../fakeVscode";

const GOLDEN = path.resolve(__dirname, "../../../../../tests/golden");
const [EDIT, BASH] = JSON.parse(
  fs.readFileSync(path.join(GOLDEN, "agent-approve.params.json"), "utf8"),
) as AgentApproveParams[];
const TARGET = vscode.Uri.parse("file:///work/app/src/app.py");

type Token = Parameters<SharedApprovals["approve"]>[1];

function callsOf(name: string): unknown[][] {
  return vscode.calls.filter(([n]) => n === name).map(([, args]) => args);
}

describe("panel: approvals shared with the editor's UI", () => {
  let editor: Approvals;
  let shared: SharedApprovals;
  let panelVisible: boolean;
  let server: vscode.CancellationTokenSource;

  beforeEach(() => {
    vscode.reset();
    vscode.workspace.textDocuments.push(vscode.document(TARGET, "a + b\n"));
    editor = new Approvals(new ProposalFiles());
    panelVisible = true;
    shared = new SharedApprovals(editor, () => panelVisible);
    server = new vscode.CancellationTokenSource();
  });

  const approve = (params: AgentApproveParams): Promise<AgentApproveResult> =>
    shared.approve(params, server.token as unknown as Token);
  const pendingInBoth = async (): Promise<void> => {
    await vscode.until(() => shared.pending().length > 0 && editor.pendingCount > 0);
  };

  it("Allow on the panel's card goes through the diff editor (the user's edit of the proposal is sent) and closes it", async () => {
    const answer = approve(EDIT);
    await pendingInBoth();
    assert.deepStrictEqual(
      shared.pending().map((p) => [p.params.callId, p.alsoIn]),
      [["call_2_1", "diff editor"]],
    );
    const right = vscode.Uri.parse("tether-proposal:/app.py?r-1.call_2_1");
    vscode.workspace.textDocuments.push(vscode.document(right, "a ** b\n", true));
    assert.strictEqual(shared.answer("call_2_1", { choice: "allow" }), true);
    assert.deepStrictEqual(await answer, { decision: "allow", editedText: "a ** b\n" });
    assert.strictEqual(editor.pendingCount, 0);
    assert.deepStrictEqual(shared.pending(), []);
    assert.strictEqual(shared.answer("call_2_1", { choice: "deny" }), false); // nothing left to answer
  });

  it("Always allow on an edit's card sends the offered rule and scope through the diff editor", async () => {
    const answer = approve(EDIT);
    await pendingInBoth();
    assert.strictEqual(
      shared.answer("call_2_1", { choice: "allow-always", rule: { pattern: "src/*.py", scope: "project" } }),
      true,
    );
    assert.deepStrictEqual(await answer, {
      decision: "allow-always",
      rule: { pattern: "src/*.py", scope: "project" },
    });
    assert.deepStrictEqual(callsOf("showQuickPick"), []); // picked on the card: not asked again
  });

  it("sends only a rule the server offered (the webview is not trusted), and none when none was offered", async () => {
    const offered = approve(BASH);
    await vscode.until(() => shared.pending().length > 0);
    shared.answer("call_3_1", { choice: "allow-always", rule: { pattern: "*", scope: "user" } });
    assert.deepStrictEqual(await offered, { decision: "allow-always" });

    const none = approve({ ...BASH, suggestedPatterns: undefined });
    await vscode.until(() => shared.pending().length > 0);
    assert.deepStrictEqual(shared.pending()[0].params.suggestedPatterns, undefined);
    shared.answer("call_3_1", { choice: "allow-always" });
    assert.deepStrictEqual(await none, { decision: "allow-always" });
  });

  it("Edit in Diff Editor on the card brings the approval's diff tab to the front", async () => {
    const answer = approve(EDIT);
    await pendingInBoth();
    const right = vscode.Uri.parse("tether-proposal:/app.py?r-1.call_2_1");
    const tab = {
      input: new vscode.TabInputTextDiff(TARGET, right),
      label: "Edit src/app.py (proposed by Tether)",
    };
    vscode.window.tabGroups.all = [{ tabs: [tab] }];
    const before = callsOf("executeCommand").filter((a) => a[0] === "vscode.diff").length;
    assert.strictEqual(await shared.reveal("call_2_1"), true);
    const diffs = callsOf("executeCommand").filter((a) => a[0] === "vscode.diff");
    assert.strictEqual(diffs.length, before + 1);
    assert.deepStrictEqual(diffs[diffs.length - 1].map(String), [
      String("vscode.diff"),
      TARGET.toString(),
      right.toString(),
      "Edit src/app.py (proposed by Tether)",
    ]);
    assert.strictEqual(await shared.reveal("nope"), false);
    shared.answer("call_2_1", { choice: "deny" });
    await answer;
  });

  it("Deny with feedback on the card answers at once, without the feedback box, and withdraws the diff", async () => {
    const answer = approve(EDIT);
    await pendingInBoth();
    shared.answer("call_2_1", { choice: "deny", feedback: " keep the sum " });
    assert.deepStrictEqual(await answer, { decision: "deny", feedback: "keep the sum" });
    await vscode.until(() => editor.pendingCount === 0);
    assert.deepStrictEqual(callsOf("showInputBox"), []);
    assert.deepStrictEqual(shared.pending(), []);
  });

  it("an answer in the diff editor's title removes the panel's card", async () => {
    const answer = approve(EDIT);
    await pendingInBoth();
    let changes = 0;
    shared.onDidChange(() => (changes += 1));
    editor.decide("allow");
    assert.deepStrictEqual(await answer, { decision: "allow" });
    assert.deepStrictEqual(shared.pending(), []);
    assert.strictEqual(changes, 1);
  });

  it("asks a command in the panel only while it is visible (no modal to block it), with the edited command or a rule", async () => {
    const first = approve(BASH);
    await vscode.until(() => shared.pending().length > 0);
    assert.strictEqual(shared.pending()[0].alsoIn, "none");
    shared.answer("call_3_1", { choice: "allow", command: "python -m unittest -v" });
    assert.deepStrictEqual(await first, {
      decision: "allow",
      arguments: { command: "python -m unittest -v" },
    });

    const second = approve(BASH);
    await vscode.until(() => shared.pending().length > 0);
    shared.answer("call_3_1", {
      choice: "allow-always",
      rule: { pattern: "python -m unittest *", scope: "project" },
    });
    assert.deepStrictEqual(await second, {
      decision: "allow-always",
      rule: { pattern: "python -m unittest *", scope: "project" },
    });
    assert.deepStrictEqual(callsOf("showWarningMessage"), []);

    // A changed command remembers nothing: what was shown is not what runs.
    const third = approve(BASH);
    await vscode.until(() => shared.pending().length > 0);
    shared.answer("call_3_1", {
      choice: "allow-always",
      command: "ls",
      rule: { pattern: "ls", scope: "user" },
    });
    assert.deepStrictEqual(await third, { decision: "allow-always", arguments: { command: "ls" } });
  });

  it("asks a command in the modal when the panel is hidden; answering in the panel later is still taken", async () => {
    panelVisible = false;
    vscode.answers.showWarningMessage = () => vscode.never();
    const answer = approve(BASH);
    await vscode.until(() => shared.pending().length > 0);
    assert.strictEqual(shared.pending()[0].alsoIn, "dialog");
    assert.strictEqual(callsOf("showWarningMessage").length, 1);
    shared.answer("call_3_1", { choice: "deny" });
    assert.deepStrictEqual(await answer, { decision: "deny" });
  });

  it("the server's $/cancelRequest closes the card and the diff; so does the run's end for a panel-only one", async () => {
    const edit = approve(EDIT);
    await pendingInBoth();
    server.cancel();
    assert.deepStrictEqual(await edit, { decision: "deny", feedback: "the approval was cancelled" });
    assert.deepStrictEqual(shared.pending(), []);
    assert.strictEqual(editor.pendingCount, 0);

    server = new vscode.CancellationTokenSource();
    const command = approve(BASH);
    await vscode.until(() => shared.pending().length > 0);
    shared.runEnded("r-1");
    assert.deepStrictEqual(await command, { decision: "deny", feedback: "the approval was cancelled" });
    assert.deepStrictEqual(shared.pending(), []);
  });
});
