import * as assert from "assert";
import type {
  AgentCheckpointsResult,
  AgentRewindParams,
  AgentRewindResult,
  Checkpoint,
} from "../src/protocol";
import { rewindSession, type RewindEndpoint } from "../src/rewind";
import { rewindTarget } from "../src/rewindCommand";
import * as vscode from "./fakeVscode";

const APP = "file:///work/app/src/app.py";
const README = "file:///work/app/README.md";
const NOTES = "file:///work/app/notes.txt";

const EDIT: Checkpoint = {
  id: "cp-1",
  runId: "r-1",
  step: 1,
  time: "2026-12-05T15:40:12Z",
  tool: "edit_file",
  title: "Edit src/app.py",
  files: [{ uri: APP, path: "src/app.py", change: "modified" }],
};
const BASH: Checkpoint = {
  id: "cp-2",
  runId: "r-1",
  step: 2,
  time: "2026-12-05T15:40:13Z",
  tool: "bash",
  title: "Run echo more >> README.md && rm notes.txt # \u001b[2J\u202e",
  files: [
    { uri: README, path: "README.md", change: "modified" },
    { uri: NOTES, path: "notes.txt", change: "deleted", restorable: false },
  ],
};
const LATER: Checkpoint = { ...EDIT, id: "cp-3", runId: "r-2", step: 1 };

class FakeServer implements RewindEndpoint {
  listed: string[] = [];
  rewinds: AgentRewindParams[] = [];
  constructor(
    private readonly checkpointList: Checkpoint[],
    private readonly answers: Array<AgentRewindResult | Error>,
  ) {}
  async checkpoints(sessionId: string): Promise<AgentCheckpointsResult> {
    this.listed.push(sessionId);
    return { sessionId, checkpoints: this.checkpointList };
  }
  async rewind(params: AgentRewindParams): Promise<AgentRewindResult> {
    this.rewinds.push(params);
    const answer = this.answers.shift();
    if (answer === undefined) {
      throw new Error("an unexpected rewind");
    }
    if (answer instanceof Error) {
      throw answer;
    }
    return answer;
  }
}

type Item = { label: string; description?: string; detail?: string };

/** Answers the quick picks in turn, each with the item whose label starts with the given text. */
function pickInTurn(...wanted: string[]): Array<{ items: Item[]; title?: string }> {
  const shown: Array<{ items: Item[]; title?: string }> = [];
  vscode.answers.showQuickPick = async (...args: unknown[]) => {
    const items = (await (args[0] as Promise<Item[]> | Item[])) as Item[];
    shown.push({ items, title: (args[1] as { title?: string } | undefined)?.title });
    const label = wanted.shift();
    return items.find((item) => label !== undefined && item.label.startsWith(label));
  };
  return shown;
}

function messages(kind: string): string[] {
  return vscode.calls.filter(([name]) => name === kind).map(([, args]) => String(args[0]));
}

describe("Tether: Rewind…", () => {
  beforeEach(() => vscode.reset());

  it("lists the checkpoints newest first, escaped, and rewinds the files to before the one picked", async () => {
    const server = new FakeServer(
      [EDIT, BASH],
      [{ restored: [APP, README, NOTES], conflicts: [], conversation: false }],
    );
    const shown = pickInTurn("step 1", "Files only");
    await rewindSession(server, "s-1");
    assert.deepStrictEqual(server.listed, ["s-1"]);
    const [checkpoints, restore] = shown;
    assert.strictEqual(checkpoints.title, "Tether: rewind to before which step?");
    const [newest, oldest] = checkpoints.items;
    assert.ok(newest.label.startsWith("step 2 · Run echo more"), newest.label);
    assert.ok(newest.label.includes("\\x1b[2J\\u202e"), newest.label);
    const texts = checkpoints.items.map((item) => [item.label, item.description, item.detail]);
    const visible = texts.flat().join(" ");
    assert.ok(!visible.includes("\u001b") && !visible.includes("\u202e"), "nothing raw is shown");
    assert.strictEqual(newest.detail, "README.md (modified), notes.txt (deleted, not restorable)");
    assert.strictEqual(oldest.detail, "src/app.py (modified)");
    assert.deepStrictEqual(
      restore.items.map((item) => item.label),
      ["Files and conversation", "Files only", "Conversation only"],
    );
    assert.deepStrictEqual(server.rewinds, [{ sessionId: "s-1", checkpointId: "cp-1", restore: "files" }]);
    assert.deepStrictEqual(messages("showInformationMessage"), [
      "Tether: rewound to before step 1: 3 files restored (src/app.py, README.md, notes.txt)",
    ]);
  });

  it("names each conflict, says it was kept, and forces it when asked", async () => {
    const server = new FakeServer(
      [EDIT, BASH],
      [
        { restored: [README, NOTES], conflicts: [APP], conversation: true },
        { restored: [APP], conflicts: [], conversation: false },
      ],
    );
    pickInTurn("step 1", "Files and conversation");
    vscode.answers.showWarningMessage = async () => "Force";
    await rewindSession(server, "s-1");
    const [warning] = messages("showWarningMessage");
    assert.ok(warning.includes("conflict: src/app.py changed since, kept as you have it"), warning);
    assert.ok(warning.includes("the conversation continues from before that step"), warning);
    assert.deepStrictEqual(vscode.calls.find(([name]) => name === "showWarningMessage")?.[1].slice(1), [
      "Force",
    ]);
    assert.deepStrictEqual(server.rewinds, [
      { sessionId: "s-1", checkpointId: "cp-1", restore: "both" },
      { sessionId: "s-1", checkpointId: "cp-1", restore: "files", force: true },
    ]);
    assert.deepStrictEqual(messages("showInformationMessage"), [
      "Tether: rewound to before step 1: 1 file restored (src/app.py)",
    ]);
  });

  it("keeps the conflicts when the user does not force them", async () => {
    const server = new FakeServer([EDIT], [{ restored: [], conflicts: [APP] }]);
    pickInTurn("step 1", "Files only");
    await rewindSession(server, "s-1");
    assert.strictEqual(server.rewinds.length, 1);
  });

  it("restores to before a run's first checkpoint without asking which (Restore checkpoint)", async () => {
    const server = new FakeServer([EDIT, BASH, LATER], [{ restored: [APP], conflicts: [] }]);
    const shown = pickInTurn("Files and conversation");
    await rewindSession(server, "s-1", { runId: "r-1" });
    assert.strictEqual(shown.length, 1);
    assert.deepStrictEqual(server.rewinds, [{ sessionId: "s-1", checkpointId: "cp-1", restore: "both" }]);
  });

  it("says so when there is no session, no checkpoint or no checkpoint of the run", async () => {
    const server = new FakeServer([EDIT], []);
    await rewindSession(server, undefined);
    await rewindSession(new FakeServer([], []), "s-1");
    await rewindSession(server, "s-1", { runId: "r-9" });
    assert.deepStrictEqual(messages("showInformationMessage"), [
      "Tether: no session to rewind yet: run a prompt first.",
      "Tether: no checkpoints in this session: no step changed files yet.",
      "Tether: that run changed no files: there is nothing to restore.",
    ]);
    assert.deepStrictEqual(server.rewinds, []);
  });

  it("shows the server's refusal escaped, and nothing is sent when a pick is dismissed", async () => {
    const refused = new FakeServer([EDIT], [new Error("a run is going in session s-1\u001b[2J")]);
    pickInTurn("step 1", "Files only");
    await rewindSession(refused, "s-1");
    assert.deepStrictEqual(messages("showErrorMessage"), [
      "Tether: rewind: a run is going in session s-1\\x1b[2J",
    ]);
    const dismissed = new FakeServer([EDIT], []);
    pickInTurn();
    await rewindSession(dismissed, "s-1");
    assert.deepStrictEqual(dismissed.rewinds, []);
  });
});

describe("which session Tether: Rewind… rewinds", () => {
  const runs = { book: { sessions: [{ sessionId: "s-last" }, { sessionId: "s-older" }] } };
  it("is the one given (a message's Restore checkpoint), with its run", () => {
    assert.deepStrictEqual(rewindTarget({ sessionId: "s-1", runId: "r-1" }, runs), ["s-1", { runId: "r-1" }]);
  });
  it("else the last session this window ran, or none", () => {
    assert.deepStrictEqual(rewindTarget(undefined, runs), ["s-last", {}]);
    assert.deepStrictEqual(rewindTarget({ sessionId: 3 }, { book: { sessions: [] } }), [undefined, {}]);
  });
});
