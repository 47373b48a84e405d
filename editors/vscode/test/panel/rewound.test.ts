import * as assert from "assert";
import type {
  AgentCheckpointsResult,
  AgentCommandParams,
  AgentCommandResult,
  AgentEventParams,
  AgentRewindParams,
  AgentRewindResult,
  AgentRunResult,
  Checkpoint,
} from "../../src/protocol";
import { PanelController, PanelServices } from "../../src/panel/controller";
import type { PanelState, RunView, ToView } from "../../src/panel/messages";
import { PanelModel } from "../../src/panel/model";
import { rewoundTo } from "../../src/panel/rewound";
import { EditorApprovals, SharedApprovals } from "../../src/panel/sharedApprovals";
import { onDidRewind, rewindSession, type Rewound } from "../../src/rewind";
import * as vscode from "../fakeVscode";

const EDIT: Checkpoint = {
  id: "cp-1",
  runId: "r-1",
  step: 1,
  time: "2026-12-05T15:40:12Z",
  tool: "edit_file",
  title: "Edit app.py",
  files: [{ uri: "file:///w/app.py", path: "app.py", change: "modified" }],
};
const BASH: Checkpoint = { ...EDIT, id: "cp-2", step: 2, tool: "bash", title: "Run make" };

/** The events of a run of three steps: text and an edit, a command, the answer. */
function threeSteps(runId: string, sessionId: string, prompt: string): AgentEventParams[] {
  let seq = 0;
  const ev = (e: Record<string, unknown>): AgentEventParams =>
    ({ runId, seq: ++seq, ...e }) as AgentEventParams;
  return [
    ev({ kind: "run-started", prompt, sessionId }),
    ev({ kind: "step", step: 1 }),
    ev({ kind: "text-delta", text: "Editing." }),
    ev({ kind: "tool-call", callId: `${runId}-c1`, tool: "edit_file", arguments: { path: "app.py" } }),
    ev({ kind: "tool-result", callId: `${runId}-c1`, tool: "edit_file", ok: true, output: "edited" }),
    ev({ kind: "step", step: 2 }),
    ev({ kind: "tool-call", callId: `${runId}-c2`, tool: "bash", arguments: { command: "make" } }),
    ev({ kind: "tool-result", callId: `${runId}-c2`, tool: "bash", ok: true, output: "made" }),
    ev({ kind: "step", step: 3 }),
    ev({ kind: "text-delta", text: "Done." }),
    ev({ kind: "run-finished", outcome: "done", steps: 3 }),
  ];
}

function answerOnly(runId: string, sessionId: string, prompt: string): AgentEventParams[] {
  let seq = 0;
  const ev = (e: Record<string, unknown>): AgentEventParams =>
    ({ runId, seq: ++seq, ...e }) as AgentEventParams;
  return [
    ev({ kind: "run-started", prompt, sessionId }),
    ev({ kind: "step", step: 1 }),
    ev({ kind: "text-delta", text: "An answer." }),
    ev({ kind: "run-finished", outcome: "done", steps: 1 }),
  ];
}

/** Which of each run's items are rewound, and whether all of the run is. */
function marks(views: readonly RunView[]): Array<[string, string]> {
  return views.map((run) => {
    const rewound = (run as RunView & { rewound?: { whole: boolean; fromItem: number; label: string } })
      .rewound;
    const items = run.items.map((_, index) =>
      rewound !== undefined && index >= rewound.fromItem ? "x" : ".",
    );
    return [run.prompt, `${rewound?.whole ? "whole " : ""}${items.join("")}`];
  });
}

describe("panel: a conversation rewind shows what the model no longer sees", () => {
  it("marks the rewound run's items from the rewound step on and the session's later runs, not other sessions' runs", () => {
    const model = new PanelModel((p) => p);
    for (const event of [
      ...threeSteps("r-1", "s-1", "first"),
      ...answerOnly("r-2", "s-1", "second"),
      ...answerOnly("r-3", "s-2", "elsewhere"),
    ]) {
      model.apply(event);
    }
    model.note("/cost", "1 run", "s-1");
    assert.deepStrictEqual(marks(model.views()), [
      ["first", "...."],
      ["second", "."],
      ["elsewhere", "."],
      ["/cost", ""],
    ]);

    model.rewound("s-1", "r-1", 2); // to before the command
    assert.deepStrictEqual(marks(model.views()), [
      ["first", "..xx"],
      ["second", "whole x"],
      ["elsewhere", "."],
      ["/cost", ""],
    ]);
    const [first, second] = model.views();
    assert.strictEqual(
      first.rewound?.label,
      "rewound to before step 2: the model no longer sees what this run did from there",
    );
    assert.strictEqual(second.rewound?.label, "rewound: the model no longer sees this run");

    model.rewound("s-1", "r-1", 1); // further back: more is left out
    model.rewound("s-1", "r-1", 3); // a later point leaves out nothing more, and takes nothing back
    assert.deepStrictEqual(marks(model.views()).slice(0, 2), [
      ["first", "xxxx"],
      ["second", "whole x"],
    ]);
    assert.strictEqual(
      model.views()[0].rewound?.whole,
      false,
      "the run's prompt is still in the conversation",
    );
  });

  it("a run the panel no longer holds is older than those it shows: all of the session's are rewound", () => {
    const model = new PanelModel((p) => p);
    answerOnly("r-2", "s-1", "second").forEach((e) => model.apply(e));
    model.rewound("s-1", "r-gone", 1);
    assert.deepStrictEqual(marks(model.views()), [["second", "whole x"]]);
  });

  it("reads which checkpoint a typed /rewind cut the conversation at", () => {
    const done =
      "rewound to before cp-2 (both)\n  restored: app.py\n  the conversation continues from before that step";
    assert.strictEqual(rewoundTo(done), "cp-2");
    assert.strictEqual(rewoundTo("rewound to before cp-2 (files)\n  restored: app.py"), undefined);
    assert.strictEqual(rewoundTo("cp-1  2026-12-05 r-1 step 1  edit_file: app.py"), undefined);
  });
});

/** A server whose runs stream the events given, with `/rewind` and `agent/checkpoints`. */
class FakeServer implements PanelServices {
  readonly runsToDo: Array<(sessionId: string) => AgentEventParams[]> = [];
  readonly rewinds: Array<[string, string]> = [];
  onEvent: (event: AgentEventParams) => void = () => undefined;
  private next = 0;
  commandAnswer = "";

  async run(
    _prompt: string,
    sessionId: string | undefined,
    onRunId: (id: string) => void,
  ): Promise<AgentRunResult> {
    const events = this.runsToDo.shift()!(sessionId ?? "s-1");
    this.next += 1;
    onRunId(events[0].runId);
    events.forEach((e) => this.onEvent(e));
    return {
      runId: events[0].runId,
      sessionId: sessionId ?? "s-1",
      outcome: "done",
      answer: "",
      steps: 1,
      usage: {},
    };
  }
  async cancel(): Promise<void> {}
  async undo() {
    return {};
  }
  async sessions() {
    return [];
  }
  async rules() {
    return { rules: [], readOnlyDefaults: true };
  }
  async removeRule(): Promise<boolean> {
    return false;
  }
  async commands() {
    return [{ name: "rewind", description: "go back", argument: "[ID [files|conversation|both] [force]]" }];
  }
  async command(params: AgentCommandParams): Promise<AgentCommandResult> {
    assert.strictEqual(params.name, "rewind");
    return { message: this.commandAnswer };
  }
  async checkpoints(): Promise<Checkpoint[]> {
    return [EDIT, BASH];
  }
  async rewind(sessionId: string, runId: string): Promise<void> {
    this.rewinds.push([sessionId, runId]);
  }
}

const noEditor: EditorApprovals = {
  approve: () => vscode.never(),
  runEnded: () => undefined,
  decide: () => false,
};

describe("panel: rewinds from every front of this window reach the panel", () => {
  let server: FakeServer;
  let posted: ToView[];
  let controller: PanelController;
  const last = (): PanelState => {
    controller.flush();
    const states = posted.flatMap((m) => (m.type === "state" ? [m.state] : []));
    return states[states.length - 1];
  };

  beforeEach(async () => {
    vscode.reset();
    server = new FakeServer();
    const sink: ToView[] = [];
    posted = sink;
    controller = new PanelController(
      server,
      new SharedApprovals(noEditor, () => true),
      (m) => sink.push(m),
      (p) => p,
      0,
    );
    server.onEvent = (e) => controller.onEvent(e);
    server.runsToDo.push(
      (s) => threeSteps("r-1", s, "first"),
      (s) => answerOnly("r-2", s, "second"),
    );
    await controller.handle({ type: "run", prompt: "first" });
    await controller.handle({ type: "run", prompt: "second" });
  });

  it("a /rewind typed in the prompt box that cut the conversation marks its run and step", async () => {
    server.commandAnswer = "rewound to before cp-2 (files)\n  restored: app.py";
    await controller.handle({ type: "run", prompt: "/rewind cp-2 files" });
    assert.deepStrictEqual(marks(last().runs), [
      ["first", "...."],
      ["second", "."],
      ["/rewind cp-2 files", ""],
    ]);
    server.commandAnswer =
      "rewound to before cp-2 (both)\n  restored: app.py\n  the conversation continues from before that step";
    await controller.handle({ type: "run", prompt: "/rewind cp-2 both" });
    assert.deepStrictEqual(marks(last().runs), [
      ["first", "..xx"],
      ["second", "whole x"],
      ["/rewind cp-2 files", ""],
      ["/rewind cp-2 both", ""],
    ]);
  });

  it("Tether: Rewind… tells the panel what the server rewound (files only: nothing marked)", async () => {
    const told: Rewound[] = [];
    const listening = onDidRewind((r) => told.push(r));
    const endpoint = {
      checkpoints: async (sessionId: string): Promise<AgentCheckpointsResult> => ({
        sessionId,
        checkpoints: [EDIT, BASH],
      }),
      rewind: async (params: AgentRewindParams): Promise<AgentRewindResult> => ({
        restored: ["file:///w/app.py"],
        conversation: params.restore !== "files",
      }),
    };
    const picks = ["Files only", "Files and conversation"];
    vscode.answers.showQuickPick = async (...args: unknown[]) => {
      const items = (await (args[0] as Promise<Array<{ label: string }>>)) as Array<{ label: string }>;
      const wanted = picks.shift()!;
      return items.find((item) => item.label === wanted);
    };
    try {
      await rewindSession(endpoint, "s-1", { runId: "r-1" });
      await rewindSession(endpoint, "s-1", { runId: "r-1" });
    } finally {
      listening.dispose();
    }
    assert.deepStrictEqual(
      told.map((r) => [r.sessionId, r.checkpoint.id, r.result.conversation]),
      [
        ["s-1", "cp-1", false],
        ["s-1", "cp-1", true],
      ],
    );
    // The panel's view passes each to the controller (src/panel/view.ts): only the second,
    // which took the conversation back, marks anything.
    controller.onRewound(told[0]);
    assert.deepStrictEqual(marks(last().runs), [
      ["first", "...."],
      ["second", "."],
    ]);
    controller.onRewound(told[1]);
    assert.deepStrictEqual(marks(last().runs), [
      ["first", "xxxx"],
      ["second", "whole x"],
    ]);
  });

  it("Restore checkpoint on a run asks for that run's rewind", async () => {
    await controller.handle({ type: "restore", runId: "r-1" });
    assert.deepStrictEqual(server.rewinds, [["s-1", "r-1"]]);
  });
});
