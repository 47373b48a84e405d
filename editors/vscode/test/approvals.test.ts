import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import type { Choice } from "../src/answers";
import { Approvals, OUTSIDE_WINDOW_FEEDBACK, PENDING_CONTEXT_KEY } from "../src/approvals";
import type { AgentApproveParams } from "../src/protocol";
import type { RulePick } from "../src/rulePicks";
import { ProposalFiles } from "../src/proposalFiles";
import { MCP_CALL } from "./mcpCall";
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
  /** Once the approval is pending (diff shown, status item up), `act` decides it from the title. */
  const whenPending = (act: () => Choice | Promise<Choice>): void => {
    void vscode
      .until(() => approvals.pendingCount > 0)
      .then(async () => {
        approvals.decide(await act(), diffCall().right as never);
      });
  };

  it("opens current vs proposed text in the diff editor and sends the user's edit with Allow", async () => {
    whenPending(() => {
      const { left, right, title } = diffCall();
      assert.strictEqual(left.toString(), "file:///work/app/src/app.py");
      assert.strictEqual(right.toString(), "tether-proposal:/app.py?r-1.call_2_1");
      assert.strictEqual(right.path, "/app.py"); // the breadcrumb shows the file's name alone
      assert.strictEqual(title, "Edit src/app.py (proposed by Tether)");
      assert.strictEqual(files.text(right as never), "a * b\n");
      assert.deepStrictEqual(
        vscode.statusItems.map((i) => [i.text, i.command, i.visible]),
        [["$(report) Tether: 1 edit to approve", "tether.approval.pick", true]],
      );
      // The user edits the right side, leaves it unsaved, and clicks Allow.
      vscode.workspace.textDocuments.push(vscode.document(right, "a ** b\n", true));
      vscode.window.tabGroups.all = [{ tabs: [{ input: new vscode.TabInputTextDiff(left, right) }] }];
      return "allow";
    });
    const answer = await approve(EDIT);
    assert.deepStrictEqual(answer, { decision: "allow", editedText: "a ** b\n" });
    assert.deepStrictEqual(callsOf("document.save"), [["tether-proposal:/app.py?r-1.call_2_1"]]);
    assert.deepStrictEqual(callsOf("showInformationMessage"), []); // no toast to outlive it
    assert.strictEqual(vscode.statusItems[0].visible, false);
    assert.strictEqual(callsOf("tabGroups.close").length, 1);
    assert.strictEqual(files.text(diffCall().right as never), undefined);
    assert.deepStrictEqual(contextValues(), [true, false]);
    assert.strictEqual(approvals.pendingCount, 0);
  });

  it("denies from the editor-title button with the feedback typed", async () => {
    whenPending(() => "deny");
    vscode.answers.showInputBox = async () => "  keep the sum ";
    assert.deepStrictEqual(await approve(EDIT), { decision: "deny", feedback: "keep the sum" });
    assert.strictEqual(approvals.decide("allow"), false); // nothing left to decide
  });

  it("sends only the window when the user edited around it, and denies an edit outside it", async () => {
    vscode.workspace.textDocuments = [vscode.document(TARGET, "a + b\nkeep\n")];
    whenPending(() => {
      const { right } = diffCall();
      assert.strictEqual(files.text(right as never), "a * b\nkeep\n");
      vscode.workspace.textDocuments.push(vscode.document(right, "a * b\r\nmore\r\nkeep\r\n", true));
      return "allow";
    });
    assert.deepStrictEqual(await approve(EDIT), { decision: "allow", editedText: "a * b\nmore\n" });

    vscode.reset();
    vscode.workspace.textDocuments = [vscode.document(TARGET, "a + b\nkeep\n")];
    whenPending(() => {
      vscode.workspace.textDocuments.push(vscode.document(diffCall().right, "a * b\nKEEP\n", true));
      return "allow";
    });
    assert.deepStrictEqual(await approve(EDIT), { decision: "deny", feedback: OUTSIDE_WINDOW_FEEDBACK });
  });

  it("shows a new file against an empty left side; Allow Always sends no arguments (no rules offered)", async () => {
    vscode.workspace.textDocuments = [];
    const create: AgentApproveParams = {
      ...EDIT,
      suggestedPatterns: null, // e.g. a sensitive path: plain Allow Always, no pick
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
    whenPending(() => {
      const { left, right } = diffCall();
      assert.strictEqual(left.toString(), "tether-proposal:/new.py?r-1.call_2_1-before");
      assert.strictEqual(files.text(left as never), "");
      assert.strictEqual(files.text(right as never), "x = 1\n");
      return "allow-always";
    });
    assert.deepStrictEqual(await approve(create), { decision: "allow-always" });
    assert.strictEqual(files.text(diffCall().left as never), undefined);
    assert.deepStrictEqual(callsOf("showQuickPick"), []);
  });

  it("shows the window alone when the file here no longer holds it, and sends its edit", async () => {
    vscode.workspace.textDocuments = [vscode.document(TARGET, "something else\n")];
    whenPending(() => {
      const { left, right } = diffCall();
      assert.strictEqual(left.toString(), "tether-proposal:/app.py?r-1.call_2_1-before");
      assert.strictEqual(files.text(left as never), "a + b\n");
      assert.strictEqual(files.text(right as never), "a * b\n");
      vscode.workspace.textDocuments.push(vscode.document(right, "a - b\n", true));
      return "allow";
    });
    assert.deepStrictEqual(await approve(EDIT), { decision: "allow", editedText: "a - b\n" });
    assert.strictEqual(files.text(diffCall().left as never), undefined);
  });

  /** What is left of a diff approval once it is over: no tab, button, status item or toast. */
  const assertAllClosed = (): void => {
    assert.deepStrictEqual(contextValues(), [true, false]); // the title buttons are gone
    assert.deepStrictEqual(
      callsOf("tabGroups.close").map(([tabs]) => (tabs as Array<{ input: unknown }>).length),
      [1],
    );
    assert.ok(vscode.statusItems.every((item) => !item.visible));
    assert.deepStrictEqual(callsOf("showInformationMessage"), []);
    assert.strictEqual(approvals.pendingCount, 0);
  };

  it("closes the diff tab, title buttons and status item when the server withdraws the request", async () => {
    void vscode
      .until(() => approvals.pendingCount > 0)
      .then(() => {
        const { left, right } = diffCall();
        vscode.window.tabGroups.all = [{ tabs: [{ input: new vscode.TabInputTextDiff(left, right) }] }];
        token.cancel(); // `$/cancelRequest` reaches the handler's CancellationToken
      });
    assert.deepStrictEqual(await approve(EDIT), { decision: "deny", feedback: "the approval was cancelled" });
    assertAllClosed();
    assert.strictEqual(callsOf("showInputBox").length, 0);
  });

  it("closes everything when the run ends while its approval is open, and only that run's", async () => {
    const other: AgentApproveParams = { ...EDIT, runId: "r-2", callId: "c-9" };
    const first = approve(EDIT);
    const second = approve(other);
    await vscode.until(() => approvals.pendingCount === 2);
    const [, right] = callsOf("executeCommand").filter((a) => a[0] === "vscode.diff")[0];
    vscode.window.tabGroups.all = [
      { tabs: [{ input: new vscode.TabInputTextDiff(TARGET, right as never) }] },
    ];
    approvals.runEnded("r-1");
    assert.deepStrictEqual(await first, { decision: "deny", feedback: "the approval was cancelled" });
    assert.strictEqual(approvals.pendingCount, 1);
    assert.strictEqual(vscode.statusItems[0].text, "$(report) Tether: 1 edit to approve");
    approvals.runEnded("r-2");
    assert.deepStrictEqual(await second, { decision: "deny", feedback: "the approval was cancelled" });
    assert.strictEqual(vscode.statusItems[0].visible, false);
    assert.deepStrictEqual(contextValues().at(-1), false);
  });

  it("the status bar item offers Allow / Allow Always / Deny in a quick pick, then the server's rules", async () => {
    const picks: unknown[] = [];
    vscode.answers.showQuickPick = async (items, options) => {
      picks.push(items);
      if (picks.length === 1) {
        assert.deepStrictEqual(items, ["Allow", "Allow Always", "Deny"]);
        assert.deepStrictEqual(options, { title: "Tether: Edit src/app.py" });
        return "Allow Always";
      }
      return (items as RulePick[]).find((p) => p.rule?.pattern === "src/*.py" && p.rule.scope === "project");
    };
    void vscode.until(() => approvals.pendingCount > 0).then(() => approvals.pick());
    assert.deepStrictEqual(await approve(EDIT), {
      decision: "allow-always",
      rule: { pattern: "src/*.py", scope: "project" },
    });
    assert.strictEqual(picks.length, 2);
  });

  it("an edit's Allow Always offers this file, its folder's files of its kind, every file; and sends the pick", async () => {
    const shown: RulePick[][] = [];
    vscode.answers.showQuickPick = async (items) => {
      shown.push(items as RulePick[]);
      return (items as RulePick[]).find((p) => p.rule?.pattern === "src/app.py" && p.rule.scope === "user");
    };
    whenPending(() => "allow-always");
    assert.deepStrictEqual(await approve(EDIT), {
      decision: "allow-always",
      rule: { pattern: "src/app.py", scope: "user" },
    });
    assert.deepStrictEqual(
      shown[0].map((p) => `${p.label} · ${p.description}`),
      [
        "Always allow `src/app.py` · this session",
        "Always allow `src/app.py` · this project",
        "Always allow `src/app.py` · all my projects",
        "Always allow `src/*.py` · this session",
        "Always allow `src/*.py` · this project",
        "Always allow `src/*.py` · all my projects",
        "Always allow every file · this session",
      ],
    );
    const [[, options]] = callsOf("showQuickPick");
    assert.strictEqual((options as { title: string }).title, "Tether: Edit src/app.py — allow always");

    vscode.reset();
    vscode.workspace.textDocuments.push(vscode.document(TARGET, "a + b\n"));
    vscode.answers.showQuickPick = async (items) => (items as RulePick[]).find((p) => p.rule === undefined);
    whenPending(() => "allow-always");
    assert.deepStrictEqual(await approve(EDIT), { decision: "allow-always" }); // every file: as before
  });

  it("keeps the edit waiting when the rule pick is dismissed, and takes the next decision", async () => {
    vscode.answers.showQuickPick = async () => undefined; // Esc
    whenPending(() => "allow-always");
    const answer = approve(EDIT);
    await vscode.until(() => callsOf("showQuickPick").length === 1 && approvals.pendingCount === 1);
    approvals.decide("allow", diffCall().right as never);
    assert.deepStrictEqual(await answer, { decision: "allow" });
  });

  it("takes the rule the panel picked without asking again", async () => {
    void vscode
      .until(() => approvals.pendingCount > 0)
      .then(() =>
        approvals.decide("allow-always", diffCall().right as never, {
          rule: { pattern: "src/*.py", scope: "session" },
        }),
      );
    assert.deepStrictEqual(await approve(EDIT), {
      decision: "allow-always",
      rule: { pattern: "src/*.py", scope: "session" },
    });
    assert.deepStrictEqual(callsOf("showQuickPick"), []);
  });

  it("denies pending approvals without asking anything when the extension goes away", async () => {
    void vscode.until(() => approvals.pendingCount > 0).then(() => approvals.dispose());
    assert.deepStrictEqual(await approve(EDIT), { decision: "deny", feedback: "the approval was cancelled" });
    assert.strictEqual(callsOf("showInputBox").length, 0);
  });

  const ITEMS = [
    { title: "Allow" },
    { title: "Allow Always…" },
    { title: "Edit Command…" },
    { title: "Deny", isCloseAffordance: true },
  ];

  it("lets the user edit a command, confirms it under a title naming the new command, then allows it", async () => {
    const modals: unknown[][] = [];
    const choices = ["Edit Command…", "Allow"];
    vscode.answers.showWarningMessage = async (...args) => {
      modals.push(args);
      const next = choices.shift();
      return ITEMS.find((item) => item.title === next);
    };
    vscode.answers.showInputBox = async () => "python -m pytest -q";
    assert.deepStrictEqual(await approve(BASH), {
      decision: "allow",
      arguments: { command: "python -m pytest -q" },
    });
    assert.deepStrictEqual(modals[0], [
      "Tether: Run python -m unittest",
      { modal: true, detail: "$ python -m unittest\n\nin /work/app" },
      ...ITEMS,
    ]);
    assert.deepStrictEqual(modals[1].slice(0, 2), [
      "Tether: Run python -m pytest -q",
      { modal: true, detail: "$ python -m pytest -q\n\nin /work/app" },
    ]);
    const [[inputOptions]] = callsOf("showInputBox");
    assert.deepStrictEqual(inputOptions, {
      title: "Command to run in /work/app",
      value: "python -m unittest",
      ignoreFocusOut: true,
    });
  });

  it("asks an MCP call without Edit Command… and allows it as shown", async () => {
    const modals: unknown[][] = [];
    vscode.answers.showWarningMessage = async (...args) => {
      modals.push(args);
      return ITEMS[0]; // Allow
    };
    assert.deepStrictEqual(await approve(MCP_CALL), { decision: "allow" });
    assert.deepStrictEqual(modals[0], [
      "Tether: MCP notes: echo",
      { modal: true, detail: 'notes › echo {"text": "hello"}\n\nin MCP server \'notes\'' },
      ITEMS[0],
      { title: "Allow Always" },
      ITEMS[3],
    ]);
  });

  it("has one deny path: Deny is the dialog's close affordance, and Esc asks the same feedback", async () => {
    vscode.answers.showWarningMessage = async (...args) => {
      assert.deepStrictEqual(args.slice(2), ITEMS); // no separate Cancel: Deny closes it
      return undefined; // Esc
    };
    vscode.answers.showInputBox = async () => "use pytest instead";
    assert.deepStrictEqual(await approve(BASH), { decision: "deny", feedback: "use pytest instead" });
    vscode.answers.showWarningMessage = async () => ITEMS[3];
    assert.deepStrictEqual(await approve(BASH), { decision: "deny", feedback: "use pytest instead" });
    assert.strictEqual(callsOf("showInputBox").length, 2);
  });

  it("answers deny, runs nothing and says so when a command's approval was withdrawn meanwhile", async () => {
    vscode.answers.showWarningMessage = async () => {
      approvals.runEnded("r-1"); // the run ended while the modal was open
      return ITEMS[0]; // then the user clicked Allow
    };
    assert.deepStrictEqual(await approve(BASH), { decision: "deny", feedback: "the approval was cancelled" });
    const [[note]] = callsOf("setStatusBarMessage");
    assert.match(String(note), /withdrawn .*nothing ran/);
    assert.strictEqual(approvals.pendingCount, 0);
  });

  it("a command's Allow Always… offers the server's rules; the answer carries the pattern and scope picked", async () => {
    const modals: unknown[][] = [];
    vscode.answers.showWarningMessage = async (...args) => {
      modals.push(args);
      return ITEMS[1];
    };
    let pickedOnce = false;
    vscode.answers.showQuickPick = async (items) => {
      if (!pickedOnce) {
        pickedOnce = true;
        return undefined; // Esc: back to the dialog
      }
      return (items as RulePick[]).find(
        (p) => p.label === "Always allow `python -m unittest *`" && p.description === "this project",
      );
    };
    assert.deepStrictEqual(await approve(BASH), {
      decision: "allow-always",
      rule: { pattern: "python -m unittest *", scope: "project" },
    });
    assert.strictEqual(modals.length, 2);
    const [[items]] = callsOf("showQuickPick");
    assert.deepStrictEqual(
      (items as RulePick[]).map((p) => [p.label, p.description]),
      [
        ["Always allow `python -m unittest`", "this session"],
        ["Always allow `python -m unittest`", "this project"],
        ["Always allow `python -m unittest`", "all my projects"],
        ["Always allow `python -m unittest *`", "this session"],
        ["Always allow `python -m unittest *`", "this project"],
        ["Always allow `python -m unittest *`", "all my projects"],
      ],
    );
  });

  it("a command without offered rules keeps plain Allow Always (no pick)", async () => {
    vscode.answers.showWarningMessage = async (...args) => {
      assert.deepStrictEqual(args.slice(2), [ITEMS[0], { title: "Allow Always" }, ITEMS[2], ITEMS[3]]);
      return { title: "Allow Always" };
    };
    assert.deepStrictEqual(await approve({ ...BASH, suggestedPatterns: undefined }), {
      decision: "allow-always",
    });
    assert.deepStrictEqual(callsOf("showQuickPick"), []);
  });

  it("offers no rule for a command the user changed (the rules were for the one shown)", async () => {
    const choices = ["Edit Command…", "Allow Always"];
    vscode.answers.showWarningMessage = async (...args) => {
      const next = choices.shift();
      return (args.slice(2) as Array<{ title: string }>).find((item) => item.title === next);
    };
    vscode.answers.showInputBox = async () => "python -m pytest";
    assert.deepStrictEqual(await approve(BASH), {
      decision: "allow-always",
      arguments: { command: "python -m pytest" },
    });
    assert.deepStrictEqual(callsOf("showQuickPick"), []);
  });

  it("titles a command asked again after the sandbox stopped it with a headline, the reason apart", async () => {
    const title = "Run npm install — outside the sandbox: in it, it needs the network (EAI_AGAIN)";
    vscode.answers.showWarningMessage = async () => ITEMS[0];
    assert.deepStrictEqual(await approve({ ...BASH, title }), { decision: "allow" });
    const [[message, options]] = callsOf("showWarningMessage");
    const { command, cwd } = BASH.preview as { command: string; cwd: string };
    assert.strictEqual(message, "Tether: Run npm install outside the sandbox?");
    assert.deepStrictEqual(options, {
      modal: true,
      detail: `The sandbox stopped it: it needs the network (EAI_AGAIN)\n\n$ ${command}\n\nin ${cwd}`,
    });
  });
});
