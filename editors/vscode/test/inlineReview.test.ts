import * as assert from "assert";
import { ALL_REJECTED_FEEDBACK, Approvals } from "../src/approvals";
import type { AgentApproveParams, DiffPreview, ProposedHunk } from "../src/protocol";
import { ProposalFiles } from "../src/proposalFiles";
import { BLOCKS_CONTROLLER_ID, InlineReviews, REVIEW_CONTEXT_KEY } from "../src/review/inlineReview";
import {
  BLOCK_COMMANDS,
  HUNK_COMMANDS,
  Review,
  addedBlock,
  reviewBlocks,
  reviewLenses,
  reviewMarks,
} from "../src/review/review";
import * as vscode from "./fakeVscode";

const FILE = "line 0\nline 1\none\ntwo\nthree\nfour\nfive\nlast\n";
const TARGET = vscode.Uri.parse("file:///work/app/calc.py");
// The window: lines 2..6 ("one".."five"); two hunks, "one" and "five" changed.
const BASE = "one\ntwo\nthree\nfour\nfive\n";
const PROPOSED = "ONE\ntwo\nthree\nfour\nFIVE\n";

/** A hunk as the server sends it: whole lines `start`..`end` of the file and their new text. */
function hunk(start: number, end: number, text: string, endCharacter = 0): ProposedHunk {
  return {
    range: { start: { line: start, character: 0 }, end: { line: end, character: endCharacter } },
    text,
  };
}
const HUNKS = [hunk(2, 3, "ONE\n"), hunk(6, 7, "FIVE\n")];

function params(callId = "c-1", overrides: Partial<DiffPreview> = {}): AgentApproveParams {
  return {
    runId: "r-1",
    callId,
    tool: "edit_file",
    title: "Edit calc.py",
    arguments: { path: "calc.py", old_text: BASE, new_text: PROPOSED },
    preview: {
      kind: "diff",
      uri: TARGET.toString(),
      diff: "(unused here)",
      proposed: {
        range: { start: { line: 2, character: 0 }, end: { line: 7, character: 0 } },
        baseText: BASE,
        text: PROPOSED,
        hunks: HUNKS,
      },
      ...overrides,
    },
  };
}

function callsOf(name: string): unknown[][] {
  return vscode.calls.filter(([n]) => n === name).map(([, args]) => args);
}

describe("Review (the model of one inline review)", () => {
  const target = { uri: TARGET as never, startLine: 2, baseText: BASE, text: PROPOSED, hunks: HUNKS };

  it("offers Accept | Reject per hunk, and Accept All / Reject All / Open Diff on the first", () => {
    const review = new Review("r/c", target, { finish: () => undefined, openDiff: () => undefined });
    const rows = reviewLenses(review).map((lens) => [lens.line, lens.title, lens.command, lens.arguments]);
    assert.deepStrictEqual(rows, [
      [2, "Tether change 1 of 2: Accept", HUNK_COMMANDS.accept, ["r/c", 0]],
      [2, "Reject", HUNK_COMMANDS.reject, ["r/c", 0]],
      [2, "Accept All", HUNK_COMMANDS.acceptAll, ["r/c"]],
      [2, "Reject All", HUNK_COMMANDS.rejectAll, ["r/c"]],
      [2, "Open Diff", HUNK_COMMANDS.openDiff, ["r/c"]],
      [6, "Tether change 2 of 2: Accept", HUNK_COMMANDS.accept, ["r/c", 1]],
      [6, "Reject", HUNK_COMMANDS.reject, ["r/c", 1]],
    ]);
    assert.deepStrictEqual(reviewMarks(review), {
      removed: [
        { line: 2, accepted: undefined },
        { line: 6, accepted: undefined },
      ],
      added: [
        { line: 2, atEnd: true, text: "ONE", full: "ONE\n", accepted: undefined },
        { line: 6, atEnd: true, text: "FIVE", full: "FIVE\n", accepted: undefined },
      ],
    });
  });

  it("reports the verdict once, when the last hunk is decided; Undo takes a choice back before", () => {
    const verdicts: unknown[] = [];
    const review = new Review("r/c", target, { finish: (v) => verdicts.push(v), openDiff: () => undefined });
    review.choose([1], false);
    review.choose([1], undefined);
    review.choose([0], true);
    assert.deepStrictEqual(verdicts, []);
    assert.strictEqual(reviewLenses(review)[0].title, "Tether change 1 of 2: Accepted · Undo");
    review.choose([1], false);
    assert.deepStrictEqual(verdicts, [{ decision: "allow", editedText: "ONE\ntwo\nthree\nfour\nfive\n" }]);
    review.choose([1], true); // too late: the answer is on its way
    assert.strictEqual(verdicts.length, 1);
  });

  it("marks a rejected hunk no more, and shows an insertion after the line before it", () => {
    const insert = { ...target, baseText: "a\nb\n", text: "a\nnew\nb\n", hunks: [hunk(3, 3, "new\n")] };
    const review = new Review("r/c", insert, { finish: () => undefined, openDiff: () => undefined });
    assert.deepStrictEqual(reviewMarks(review).added, [
      { line: 2, atEnd: true, text: "new", full: "new\n", accepted: undefined },
    ]);
    const top = new Review(
      "r/c",
      { ...insert, startLine: 0, baseText: "a\n", text: "new\na\n", hunks: [hunk(0, 0, "new\n")] },
      {
        finish: () => undefined,
        openDiff: () => undefined,
      },
    );
    assert.deepStrictEqual(reviewMarks(top).added, [
      { line: 0, atEnd: false, text: "new", full: "new\n", accepted: undefined },
    ]);
    top.choose([0], false);
    assert.deepStrictEqual(reviewMarks(top), { removed: [], added: [] });
  });

  it("shows each hunk's added lines as a block below its last old line, green as a diff's added lines", () => {
    const review = new Review("r/c", target, { finish: () => undefined, openDiff: () => undefined });
    assert.deepStrictEqual(reviewBlocks(review), [
      {
        index: 0,
        line: 2,
        state: "pending",
        expanded: true,
        label: "Tether change 1 of 2: 1 line to add",
        body: "```diff\n+ONE\n```",
      },
      {
        index: 1,
        line: 6,
        state: "pending",
        expanded: true,
        label: "Tether change 2 of 2: 1 line to add",
        body: "```diff\n+FIVE\n```",
      },
    ]);
    review.choose([0], true); // accepted: the block stays, folded, its title says so
    review.choose([1], false); // rejected: nothing is added there, no block
    assert.deepStrictEqual(
      reviewBlocks(review).map((b) => [b.index, b.line, b.state, b.expanded, b.label]),
      [[0, 2, "accepted", false, "Tether change 1 of 2: accepted (1 line)"]],
    );
  });

  it("gives a block to hunks that add lines only: below the line before an insertion, none for a deletion", () => {
    const text = "a\nb\nc\n";
    const review = new Review(
      "r/c",
      {
        uri: TARGET as never,
        startLine: 0,
        baseText: text,
        text: "top\na\nc\nx\ny\n",
        hunks: [hunk(0, 0, "top\n"), hunk(1, 2, ""), hunk(3, 3, "x\ny\n")],
      },
      { finish: () => undefined, openDiff: () => undefined },
    );
    assert.deepStrictEqual(
      reviewBlocks(review).map((b) => [b.index, b.line, b.label, b.body]),
      [
        [0, 0, "Tether change 1 of 3: 1 line to add, above line 1", "```diff\n+top\n```"],
        [2, 2, "Tether change 3 of 3: 2 lines to add", "```diff\n+x\n+y\n```"],
      ],
    );
  });

  it("fences a block longer than any backticks in it, and keeps empty and CRLF lines", () => {
    assert.strictEqual(
      addedBlock(["say ```hi```\r\n", "\n", "end"]),
      "````diff\n+say ```hi```\n+\n+end\n````",
    );
  });

  it("follows typing above the window, ignores it below, and gives up on a change inside", () => {
    const review = new Review("r/c", target, { finish: () => undefined, openDiff: () => undefined });
    const change = (l1: number, c1: number, l2: number, c2: number, text: string) => ({
      range: new vscode.Range(l1, c1, l2, c2) as never,
      text,
    });
    assert.ok(review.follow(change(0, 3, 0, 3, "x\ny\n"))); // two lines added above
    assert.strictEqual(review.lineOf(0), 4);
    assert.ok(review.follow(change(0, 0, 2, 0, ""))); // two lines removed above
    assert.strictEqual(review.lineOf(1), 6);
    assert.ok(review.follow(change(7, 0, 7, 4, "LAST"))); // below the window
    assert.strictEqual(review.lineOf(0), 2);
    assert.ok(review.follow(change(2, 0, 2, 0, "# new\n"))); // a line typed right above its first line
    assert.strictEqual(review.lineOf(0), 3);
    assert.ok(review.follow(change(2, 0, 3, 0, ""))); // that line deleted again
    assert.strictEqual(review.lineOf(0), 2);
    assert.ok(review.follow(change(1, 3, 2, 0, "x\n"))); // line 1's end rewritten, the window whole
    assert.strictEqual(review.lineOf(0), 2);
    assert.strictEqual(review.follow(change(1, 3, 2, 0, "")), false); // line 1 joined to its first line
    assert.strictEqual(review.follow(change(2, 0, 2, 0, "x")), false); // typed on its first line
    assert.strictEqual(review.follow(change(4, 1, 4, 2, "H")), false); // inside it
  });
});

describe("inline review of an edit approval (fake VS Code)", () => {
  let files: ProposalFiles;
  let reviews: InlineReviews;
  let approvals: Approvals;
  let inline: boolean;
  let doc: vscode.FakeDocument;
  let shown: vscode.FakeEditor;
  const token = (): never => new vscode.CancellationTokenSource().token as never;

  beforeEach(() => {
    vscode.reset();
    files = new ProposalFiles();
    reviews = new InlineReviews();
    inline = false;
    approvals = new Approvals(files, undefined, reviews, () => inline);
    doc = vscode.document(TARGET, FILE);
    vscode.workspace.textDocuments.push(doc);
    shown = vscode.editor(doc);
    vscode.window.visibleTextEditors = [shown];
  });

  afterEach(() => reviews.dispose());

  const lenses = (): Array<{ line: number; title: string; command: string; args: unknown[] }> =>
    reviews.provideCodeLenses(doc as never).map((lens) => ({
      line: lens.range.start.line,
      title: lens.command!.title,
      command: lens.command!.command,
      args: lens.command!.arguments ?? [],
    }));
  /** Clicks the CodeLens titled `title` on `line`. */
  const click = (line: number, title: string): void => {
    const lens = lenses().find((l) => l.line === line && l.title.endsWith(title));
    assert.ok(lens, `no lens "${title}" on line ${line}: ${JSON.stringify(lenses())}`);
    void vscode.commands.registered.get(lens.command)!(...lens.args);
  };
  const diffs = (): number => callsOf("executeCommand").filter((a) => a[0] === "vscode.diff").length;
  /** The blocks not disposed: [line, label, state, expanded, body]. */
  const blocks = (): unknown[][] =>
    vscode.threads
      .filter((t) => !t.disposed)
      .map((t) => [
        t.range.start.line,
        t.label,
        t.contextValue,
        t.collapsibleState === vscode.CommentThreadCollapsibleState.Expanded,
        t.comments.map((c) => c.body.value).join(""),
      ]);
  /** Clicks a title action of the block shown below `line`. */
  const onBlock = (line: number, command: string): void => {
    const thread = vscode.threads.find((t) => !t.disposed && t.range.start.line === line);
    assert.ok(thread, `no block below line ${line}`);
    void vscode.commands.registered.get(command)!(thread);
  };
  /** All decorations on the editor, flattened: [type index, line]. */
  const marked = (): number[] =>
    [...shown.decorations.values()].flatMap((ranges) =>
      ranges.map((r) => (r as { range: vscode.Range }).range.start.line),
    );

  it("moves an approval from the diff editor into the file: Accept one hunk, Reject the other", async () => {
    const answer = approvals.approve(params(), token());
    await vscode.until(() => approvals.pendingCount === 1 && diffs() === 1);
    const [, left, right] = callsOf("executeCommand").find((a) => a[0] === "vscode.diff")!;
    vscode.window.tabGroups.all = [
      { tabs: [{ input: new vscode.TabInputTextDiff(left as never, right as never) }] },
    ];
    assert.ok(await approvals.reviewInFile());
    assert.strictEqual(callsOf("tabGroups.close").length, 1); // the diff tab makes way for the file
    vscode.window.tabGroups.all = [];
    assert.deepStrictEqual(
      callsOf("openTextDocument").map(([uri]) => String(uri)),
      [TARGET.toString()],
    );
    assert.deepStrictEqual(
      lenses().map((l) => [l.line, l.title]),
      [
        [2, "Tether change 1 of 2: Accept"],
        [2, "Reject"],
        [2, "Accept All"],
        [2, "Reject All"],
        [2, "Open Diff"],
        [6, "Tether change 2 of 2: Accept"],
        [6, "Reject"],
      ],
    );
    assert.deepStrictEqual(marked().sort(), [2, 6]); // old lines struck; the new ones in blocks below
    assert.deepStrictEqual(blocks(), [
      [2, "Tether change 1 of 2: 1 line to add", "pending", true, "```diff\n+ONE\n```"],
      [6, "Tether change 2 of 2: 1 line to add", "pending", true, "```diff\n+FIVE\n```"],
    ]);
    assert.ok(vscode.threads.every((t) => !t.canReply && t.uri.toString() === TARGET.toString()));
    assert.strictEqual(doc.getText(), FILE); // the buffer is untouched
    click(2, "Accept");
    assert.deepStrictEqual(lenses()[0].title, "Tether change 1 of 2: Accepted · Undo");
    click(6, "Reject");
    assert.deepStrictEqual(await answer, { decision: "allow", editedText: "ONE\ntwo\nthree\nfour\nfive\n" });
    assert.deepStrictEqual(lenses(), []); // the review is over: no lens, no mark, no block
    assert.deepStrictEqual(marked(), []);
    assert.deepStrictEqual(blocks(), []);
    // The Comments view VS Code opened for the blocks (once a window) is closed with them.
    assert.deepStrictEqual(
      callsOf("executeCommand").filter(([id]) => id === "workbench.action.closePanel"),
      [["workbench.action.closePanel"]],
    );
    vscode.calls.length = 0;
    const second = approvals.approve(params("c-2"), token());
    await vscode.until(() => approvals.pendingCount === 1);
    assert.ok(await approvals.reviewInFile());
    click(2, "Accept All");
    await second;
    assert.deepStrictEqual(
      callsOf("executeCommand").filter(([id]) => id === "workbench.action.closePanel"),
      [],
      "a later review closed a panel VS Code did not open for it",
    );
    assert.strictEqual(approvals.pendingCount, 0);
    const keys = callsOf("executeCommand").filter(
      (a) => a[0] === "setContext" && a[1] === REVIEW_CONTEXT_KEY,
    );
    assert.deepStrictEqual(keys.at(-1), ["setContext", REVIEW_CONTEXT_KEY, false]);
  });

  it("works from the keyboard: next / previous change move the cursor, accept / reject act on the change there; progress follows", async () => {
    inline = true;
    const seen: Array<string | undefined> = [];
    approvals.onDidChangeReview(() => seen.push(approvals.reviewProgress("r-1", "c-1")));
    const answer = approvals.approve(params(), token());
    await vscode.until(() => lenses().length > 0);
    vscode.window.activeTextEditor = shown;
    assert.strictEqual(approvals.reviewProgress("r-1", "c-1"), "2 changes to review");
    const key = (command: string): void => void vscode.commands.registered.get(command)!();
    key(HUNK_COMMANDS.next);
    assert.strictEqual(shown.selection.active.line, 2);
    key(HUNK_COMMANDS.next);
    assert.strictEqual(shown.selection.active.line, 6);
    key(HUNK_COMMANDS.next); // wraps around
    assert.strictEqual(shown.selection.active.line, 2);
    key(HUNK_COMMANDS.previous);
    assert.strictEqual(shown.selection.active.line, 6);
    key(HUNK_COMMANDS.previous);
    assert.strictEqual(shown.selection.active.line, 2);
    key(HUNK_COMMANDS.accept); // the change under the cursor; the cursor goes on to the next
    assert.strictEqual(lenses()[0].title, "Tether change 1 of 2: Accepted · Undo");
    assert.strictEqual(shown.selection.active.line, 6);
    assert.strictEqual(approvals.reviewProgress("r-1", "c-1"), "1 of 2 accepted");
    assert.ok(seen.includes("1 of 2 accepted"), JSON.stringify(seen));
    key(HUNK_COMMANDS.reject);
    assert.deepStrictEqual(await answer, { decision: "allow", editedText: "ONE\ntwo\nthree\nfour\nfive\n" });
    assert.strictEqual(approvals.reviewProgress("r-1", "c-1"), undefined);
  });

  it("with tether.reviewEdits inline, starts in the file: all accepted is a plain allow; Open Diff opens the diff", async () => {
    inline = true;
    const answer = approvals.approve(params(), token());
    await vscode.until(() => lenses().length > 0);
    assert.strictEqual(diffs(), 0);
    click(2, "Open Diff");
    assert.strictEqual(diffs(), 1);
    click(2, "Accept All");
    assert.deepStrictEqual(await answer, { decision: "allow" });
  });

  it("denies without asking why when every hunk was rejected", async () => {
    inline = true;
    const answer = approvals.approve(params(), token());
    await vscode.until(() => lenses().length > 0);
    click(6, "Reject");
    click(2, "Reject");
    assert.deepStrictEqual(await answer, { decision: "deny", feedback: ALL_REJECTED_FEEDBACK });
    assert.strictEqual(callsOf("showInputBox").length, 0);
  });

  it("Allow from the title with a hunk rejected and one undecided accepts the undecided one", async () => {
    inline = true;
    const answer = approvals.approve(params(), token());
    await vscode.until(() => lenses().length > 0);
    click(2, "Reject");
    approvals.decide("allow", TARGET as never);
    assert.deepStrictEqual(await answer, { decision: "allow", editedText: "one\ntwo\nthree\nfour\nFIVE\n" });
  });

  it("follows the user's typing above the hunks, and hands over to the diff editor on typing inside", async () => {
    inline = true;
    const answer = approvals.approve(params(), token());
    await vscode.until(() => lenses().length > 0);
    const type = (l1: number, c1: number, l2: number, c2: number, text: string): void =>
      vscode.textDocumentChanges.fire({
        document: { uri: TARGET },
        contentChanges: [{ range: new vscode.Range(l1, c1, l2, c2), text }],
      });
    type(0, 0, 0, 0, "# a comment\n");
    assert.deepStrictEqual([...new Set(lenses().map((l) => l.line))], [3, 7]);
    assert.deepStrictEqual([...new Set(marked())].sort(), [3, 7]);
    type(5, 0, 5, 3, "TWO"); // inside the window
    assert.deepStrictEqual(lenses(), []);
    assert.strictEqual(diffs(), 1);
    assert.match(String(callsOf("showWarningMessage")[0][0]), /changed lines under review/);
    // The diff's title buttons decide now, from the (unchanged) proposal.
    approvals.decide("allow");
    assert.deepStrictEqual(await answer, { decision: "allow" });
  });

  it("keeps a new file in the diff editor (nothing in a file to review)", async () => {
    vscode.workspace.textDocuments = [];
    const created = params("c-2", {
      uri: "file:///work/app/new.py",
      proposed: {
        range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        baseText: "",
        text: "x\n",
        hunks: [hunk(0, 0, "x\n")],
      },
    });
    const answer = approvals.approve(created, token());
    await vscode.until(() => approvals.pendingCount === 1 && diffs() === 1);
    assert.strictEqual(await approvals.reviewInFile(), false);
    assert.match(String(callsOf("setStatusBarMessage")[0][0]), /only be reviewed in the diff editor/);
    approvals.decide("allow");
    assert.deepStrictEqual(await answer, { decision: "allow" });
  });

  it("refuses to leave the diff editor when the user edited the proposal there", async () => {
    const answer = approvals.approve(params(), token());
    await vscode.until(() => approvals.pendingCount === 1 && diffs() === 1);
    const right = callsOf("executeCommand").find((a) => a[0] === "vscode.diff")![2] as vscode.Uri;
    vscode.workspace.textDocuments.push(vscode.document(right, FILE.replace("one", "mine"), true));
    assert.strictEqual(await approvals.reviewInFile(), false);
    assert.match(String(callsOf("showWarningMessage")[0][0]), /you changed the proposal/);
    approvals.decide("deny");
    assert.deepStrictEqual(await answer, { decision: "deny" });
  });

  it("Allow in the title of a file under review decides that file's approval, not the oldest", async () => {
    const other = vscode.Uri.parse("file:///work/app/other.py");
    vscode.workspace.textDocuments.push(vscode.document(other, FILE));
    const first = approvals.approve(params("c-1", { uri: other.toString() }), token());
    await vscode.until(() => approvals.pendingCount === 1);
    inline = true;
    const second = approvals.approve(params("c-2"), token());
    await vscode.until(() => lenses().length > 0);
    click(6, "Reject");
    approvals.decide("allow", TARGET as never); // the title of calc.py's editor
    assert.deepStrictEqual(await second, { decision: "allow", editedText: "ONE\ntwo\nthree\nfour\nfive\n" });
    assert.strictEqual(approvals.pendingCount, 1);
    approvals.decide("deny", other as never);
    assert.deepStrictEqual(await first, { decision: "deny" });
  });

  it("reviews a change to a last line without a line end (lines added after it), on that line", async () => {
    inline = true;
    doc.text = "a\nb";
    const atEnd = params("c-3", {
      proposed: {
        range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } },
        baseText: "b",
        text: "b\nc",
        hunks: [hunk(1, 1, "b\nc", 1)],
      },
    });
    const answer = approvals.approve(atEnd, token());
    await vscode.until(() => lenses().length > 0);
    assert.deepStrictEqual(
      lenses().map((l) => [l.line, l.title]),
      [
        [1, "Tether change: Accept"],
        [1, "Reject"],
        [1, "Open Diff"],
      ],
    );
    click(1, "Reject");
    assert.deepStrictEqual(await answer, { decision: "deny", feedback: ALL_REJECTED_FEEDBACK });
  });

  it("sends the user's text from the diff editor (Open Diff) over the changes accepted inline", async () => {
    inline = true;
    const answer = approvals.approve(params(), token());
    await vscode.until(() => lenses().length > 0);
    click(2, "Reject");
    click(2, "Open Diff");
    const right = callsOf("executeCommand").find((a) => a[0] === "vscode.diff")![2] as vscode.Uri;
    const mine = FILE.replace("one", "uno").replace("five", "FIVE");
    vscode.workspace.textDocuments.push(vscode.document(right, mine, true));
    approvals.decide("allow", right as never);
    assert.deepStrictEqual(await answer, { decision: "allow", editedText: "uno\ntwo\nthree\nfour\nFIVE\n" });
  });

  it("decides from the blocks' titles: Accept folds the block, Undo opens it again, Reject removes it", async () => {
    inline = true;
    const answer = approvals.approve(params(), token());
    await vscode.until(() => lenses().length > 0);
    assert.deepStrictEqual(callsOf("createCommentController")[0], [BLOCKS_CONTROLLER_ID, "Tether review"]);
    onBlock(2, BLOCK_COMMANDS.accept);
    assert.deepStrictEqual(blocks()[0].slice(0, 4), [
      2,
      "Tether change 1 of 2: accepted (1 line)",
      "accepted",
      false,
    ]);
    assert.strictEqual(lenses()[0].title, "Tether change 1 of 2: Accepted · Undo");
    onBlock(2, BLOCK_COMMANDS.undo);
    assert.deepStrictEqual(blocks()[0].slice(0, 4), [
      2,
      "Tether change 1 of 2: 1 line to add",
      "pending",
      true,
    ]);
    onBlock(6, BLOCK_COMMANDS.reject);
    assert.deepStrictEqual(
      blocks().map((b) => b[0]),
      [2],
    );
    onBlock(2, BLOCK_COMMANDS.accept);
    assert.deepStrictEqual(await answer, { decision: "allow", editedText: "ONE\ntwo\nthree\nfour\nfive\n" });
    assert.deepStrictEqual(blocks(), []);
    assert.ok(vscode.threads.every((t) => t.disposed));
    assert.strictEqual(doc.getText(), FILE);
  });

  it("moves the blocks with typing above them, and disposes them when the review goes to the diff editor", async () => {
    inline = true;
    const answer = approvals.approve(params(), token());
    await vscode.until(() => lenses().length > 0);
    const type = (l1: number, c1: number, l2: number, c2: number, text: string): void =>
      vscode.textDocumentChanges.fire({
        document: { uri: TARGET },
        contentChanges: [{ range: new vscode.Range(l1, c1, l2, c2), text }],
      });
    type(0, 0, 0, 0, "# a comment\n# and another\n");
    assert.deepStrictEqual(
      blocks().map((b) => b[0]),
      [4, 8],
    );
    assert.strictEqual(vscode.threads.length, 2); // moved, not made again
    type(5, 0, 5, 3, "TWO"); // inside the window
    assert.deepStrictEqual(blocks(), []);
    approvals.decide("deny");
    assert.deepStrictEqual(await answer, { decision: "deny" });
  });

  it("with comments.visible off (no blocks shown), puts the added text back after the old lines", async () => {
    inline = true;
    vscode.settings.visible = false;
    const answer = approvals.approve(params(), token());
    await vscode.until(() => lenses().length > 0);
    assert.deepStrictEqual(marked().sort(), [2, 2, 6, 6]);
    approvals.runEnded("r-1");
    await answer;
  });

  it("ends the review when the run ends: no lens or mark is left", async () => {
    inline = true;
    const answer = approvals.approve(params(), token());
    await vscode.until(() => lenses().length > 0);
    approvals.runEnded("r-1");
    assert.deepStrictEqual(await answer, { decision: "deny", feedback: "the approval was cancelled" });
    assert.deepStrictEqual(lenses(), []);
    assert.deepStrictEqual(marked(), []);
    assert.deepStrictEqual(blocks(), []);
  });
});
