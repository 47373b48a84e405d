import * as assert from "assert";
import type { Choice } from "../src/answers";
import { Approvals, CHANGE_SET_EDITED_FEEDBACK, PENDING_CONTEXT_KEY } from "../src/approvals";
import { approvalView } from "../src/panel/model";
import { proposalUri } from "../src/panel/sharedApprovals";
import type { AgentApproveParams, DiffPreview } from "../src/protocol";
import { ProposalFiles } from "../src/proposalFiles";
import { SaveGuard } from "../src/saveGuard";
import * as vscode from "./fakeVscode";

const LIB = "file:///work/app/lib.py";
const APP = "file:///work/app/src/app.py";
const LIB_TEXT = "def greet(name):\n    return name\n";
const APP_TEXT = "from lib import greet\n\nprint(greet('you'))\n";

/** A rename's approval as the server sends it: one diff of every file, no `proposed` window. */
const RENAME: AgentApproveParams = {
  runId: "r-7",
  callId: "call_9",
  tool: "rename",
  title: "Rename greet → salute in 2 files (answered by VS Code)",
  arguments: { path: "lib.py", line: 1, symbol: "greet", new_name: "salute" },
  preview: {
    kind: "diff",
    uri: LIB,
    diff: [
      "--- a/lib.py",
      "+++ b/lib.py",
      "@@ -1,2 +1,2 @@",
      "-def greet(name):",
      "+def salute(name):",
      "     return name",
      "--- a/src/app.py",
      "+++ b/src/app.py",
      "@@ -1,3 +1,3 @@",
      "-from lib import greet",
      "+from lib import salute",
      " ",
      "-print(greet('you'))",
      "+print(salute('you'))",
      "",
    ].join("\n"),
  },
  suggestedPatterns: null,
};

function callsOf(name: string): unknown[][] {
  return vscode.calls.filter(([n]) => n === name).map(([, args]) => args);
}

type Resource = [vscode.Uri, vscode.Uri, vscode.Uri];

/** The `vscode.changes` call: the multi-file diff editor's title and [file, left, right] rows. */
function changesCall(): { title: string; rows: Resource[] } {
  const [args] = callsOf("executeCommand").filter((a) => a[0] === "vscode.changes");
  assert.ok(args, "vscode.changes was not opened");
  return { title: args[1] as string, rows: args[2] as Resource[] };
}

describe("a change of several files (a rename) in the editor", () => {
  let files: ProposalFiles;
  let approvals: Approvals;
  let token: vscode.CancellationTokenSource;
  let dirty: string[];

  beforeEach(() => {
    vscode.reset();
    files = new ProposalFiles();
    dirty = [];
    const saves = new SaveGuard(
      () => dirty,
      () => undefined,
    );
    approvals = new Approvals(files, saves);
    token = new vscode.CancellationTokenSource();
    // lib.py open in the editor (its buffer), app.py on disk only.
    vscode.workspace.textDocuments.push(vscode.document(vscode.Uri.parse(LIB), LIB_TEXT));
    vscode.answers.readFile = async (uri) => {
      assert.strictEqual(String(uri), APP);
      return new TextEncoder().encode(APP_TEXT);
    };
  });

  const approve = (params: AgentApproveParams) =>
    approvals.approve(params, token.token as unknown as Parameters<Approvals["approve"]>[1]);
  const whenPending = (act: () => Choice | undefined | Promise<Choice | undefined>): void => {
    void vscode
      .until(() => approvals.pendingCount > 0)
      .then(async () => {
        const choice = await act();
        if (choice !== undefined) {
          approvals.decide(choice, changesCall().rows[1][2] as never);
        }
      });
  };

  it("shows every file whole in one multi-file diff editor and allows the change as proposed", async () => {
    whenPending(() => {
      const { title, rows } = changesCall();
      assert.strictEqual(
        title,
        "Rename greet → salute in 2 files (answered by VS Code) (proposed by Tether)",
      );
      assert.deepStrictEqual(
        rows.map((row) => row.map(String)),
        [
          // Each proposal has its file's path (else the editor would show the file as renamed).
          [LIB, LIB, "tether-proposal:/work/app/lib.py?r-7.call_9"],
          [APP, APP, "tether-proposal:/work/app/src/app.py?r-7.call_9-1"],
        ],
      );
      assert.strictEqual(files.text(rows[0][2] as never), "def salute(name):\n    return name\n");
      assert.strictEqual(files.text(rows[1][2] as never), "from lib import salute\n\nprint(salute('you'))\n");
      assert.deepStrictEqual(
        vscode.statusItems.map((i) => [i.text, i.visible]),
        [["$(report) Tether: 1 edit to approve", true]],
      );
      assert.strictEqual(callsOf("executeCommand").filter((a) => a[0] === "vscode.diff").length, 0);
      dirty = [APP]; // the user has unsaved typing in app.py when allowing
      vscode.window.tabGroups.all = [
        { tabs: [{ input: { textDiffs: rows.map(([, l, r]) => new vscode.TabInputTextDiff(l, r)) } }] },
      ];
      return "allow";
    });
    assert.deepStrictEqual(await approve(RENAME), { decision: "allow" }); // no editedText
    assert.strictEqual(callsOf("tabGroups.close").length, 1); // the multi-file diff tab
    assert.strictEqual(
      files.text(vscode.Uri.parse("tether-proposal:/lib.py?r-7.call_9") as never),
      undefined,
    );
    assert.strictEqual(
      files.text(vscode.Uri.parse("tether-proposal:/app.py?r-7.call_9-1") as never),
      undefined,
    );
    assert.strictEqual(vscode.statusItems[0].visible, false);
    assert.deepStrictEqual(
      callsOf("executeCommand")
        .filter((a) => a[0] === "setContext" && a[1] === PENDING_CONTEXT_KEY)
        .map((a) => a[2]),
      [true, false],
    );
    // app.py held the user's typing: the server's save after the rename leaves it unsaved.
    const saves = new SaveGuard(
      () => [APP],
      () => undefined,
    );
    const guarded = new Approvals(new ProposalFiles(), saves);
    void vscode.until(() => guarded.pendingCount > 0).then(() => guarded.decide("allow"));
    await guarded.approve(RENAME, token.token as never);
    assert.deepStrictEqual(saves.filter([APP, LIB]), [LIB]);
  });

  it("is decided by the panel's card through the proposal the panel names", async () => {
    whenPending(() => {
      assert.ok(approvals.decide("allow", proposalUri(RENAME, RENAME.preview as DiffPreview) as never));
      return undefined;
    });
    assert.deepStrictEqual(await approve(RENAME), { decision: "allow" });
  });

  it("is a card of the whole diff in the panel, without Edit in Diff Editor (nothing to edit)", () => {
    const card = approvalView(RENAME, "diff editor", (p) => p.replace("file:///work/app/", ""));
    assert.strictEqual(card.kind, "diff");
    assert.strictEqual(card.diff, (RENAME.preview as DiffPreview).diff);
    assert.deepStrictEqual(card.stat, { added: 3, removed: 3 });
    assert.strictEqual(card.editable, false);
  });

  it("denies with the feedback typed, and says so when the server withdraws it", async () => {
    whenPending(() => "deny");
    vscode.answers.showInputBox = async () => "keep greet";
    assert.deepStrictEqual(await approve(RENAME), { decision: "deny", feedback: "keep greet" });
    const [[box]] = callsOf("showInputBox") as Array<[{ title: string }]>;
    assert.strictEqual(box.title, `Deny: ${RENAME.title}`);

    vscode.reset();
    vscode.workspace.textDocuments.push(vscode.document(vscode.Uri.parse(LIB), LIB_TEXT));
    whenPending(() => {
      token.cancel();
      return undefined;
    });
    assert.deepStrictEqual(await approve(RENAME), {
      decision: "deny",
      feedback: "the approval was cancelled",
    });
    assert.strictEqual(approvals.pendingCount, 0);
  });

  it("denies, saying why, when the user edited a proposed file (a change of several files cannot carry it)", async () => {
    whenPending(() => {
      const { rows } = changesCall();
      vscode.workspace.textDocuments.push(vscode.document(rows[1][2], "from lib import salute as s\n", true));
      return "allow";
    });
    assert.deepStrictEqual(await approve(RENAME), { decision: "deny", feedback: CHANGE_SET_EDITED_FEEDBACK });
    assert.ok(callsOf("showWarningMessage").length === 1);
  });

  it("shows a file that changed since the proposal by its hunks alone, on both sides", async () => {
    vscode.answers.readFile = async () => new TextEncoder().encode("# rewritten meanwhile\n");
    whenPending(() => {
      const { rows } = changesCall();
      const [file, left, right] = rows[1];
      assert.strictEqual(String(file), APP);
      assert.strictEqual(String(left), "tether-proposal:/work/app/src/app.py?r-7.call_9-1-before");
      assert.strictEqual(files.text(left as never), "from lib import greet\n\nprint(greet('you'))\n");
      assert.strictEqual(files.text(right as never), "from lib import salute\n\nprint(salute('you'))\n");
      return "allow";
    });
    assert.deepStrictEqual(await approve(RENAME), { decision: "allow" });
  });

  it("falls back to one diff editor per file where the multi-file diff editor is missing", async () => {
    const commands = vscode.commands as { executeCommand: (...args: unknown[]) => Promise<unknown> };
    const original = commands.executeCommand;
    const opened: unknown[][] = [];
    commands.executeCommand = async (...args: unknown[]) => {
      if (args[0] === "vscode.changes") {
        throw new Error("command 'vscode.changes' not found");
      }
      opened.push(args);
      return undefined;
    };
    try {
      void vscode
        .until(() => approvals.pendingCount > 0 && opened.filter((a) => a[0] === "vscode.diff").length === 2)
        .then(() => approvals.decide("allow"));
      assert.deepStrictEqual(await approve(RENAME), { decision: "allow" });
    } finally {
      commands.executeCommand = original;
    }
    const diffs = opened.filter((a) => a[0] === "vscode.diff");
    assert.deepStrictEqual(
      diffs.map((a) => [String(a[1]), String(a[2]), a[3]]),
      [
        [LIB, "tether-proposal:/work/app/lib.py?r-7.call_9", `lib.py: ${RENAME.title} (proposed by Tether)`],
        [
          APP,
          "tether-proposal:/work/app/src/app.py?r-7.call_9-1",
          `src/app.py: ${RENAME.title} (proposed by Tether)`,
        ],
      ],
    );
  });
});
