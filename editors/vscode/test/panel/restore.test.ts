import * as assert from "assert";
import type { AgentEventParams, AgentRunResult } from "../../src/protocol";
import { PanelController, PanelServices } from "../../src/panel/controller";
import { parseFromView, type ToView } from "../../src/panel/messages";
import { EditorApprovals, SharedApprovals } from "../../src/panel/sharedApprovals";
import * as vscode from "../fakeVscode";

/** A server with one run (r-1 in session s-1) and the rewind the panel asks for. */
class FakeServer implements PanelServices {
  readonly rewinds: Array<[string, string]> = [];
  onEvent: (event: AgentEventParams) => void = () => undefined;
  run(
    prompt: string,
    _sessionId: string | undefined,
    onRunId: (id: string) => void,
  ): Promise<AgentRunResult> {
    onRunId("r-1");
    this.onEvent({ runId: "r-1", seq: 1, kind: "run-started", prompt, sessionId: "s-1" } as AgentEventParams);
    return Promise.resolve({
      runId: "r-1",
      sessionId: "s-1",
      outcome: "done",
      answer: "",
      steps: 2,
      usage: {},
    });
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
  async rewind(sessionId: string, runId: string): Promise<void> {
    this.rewinds.push([sessionId, runId]);
  }
}

const noEditor: EditorApprovals = {
  approve: () => vscode.never(),
  runEnded: () => undefined,
  decide: () => false,
};

describe("panel: Restore checkpoint on a message", () => {
  beforeEach(() => vscode.reset());

  it("is a message of its own from the page, with the run's id", () => {
    assert.deepStrictEqual(parseFromView({ type: "restore", runId: "r-1" }), {
      type: "restore",
      runId: "r-1",
    });
    assert.strictEqual(parseFromView({ type: "restore", runId: 7 }), undefined);
  });

  it("rewinds to before that run, in that run's session; a run it does not show is ignored", async () => {
    const server = new FakeServer();
    const posted: ToView[] = [];
    const controller = new PanelController(
      server,
      new SharedApprovals(noEditor, () => true),
      (m) => posted.push(m),
      (p) => p,
      0,
    );
    server.onEvent = (e) => controller.onEvent(e);
    await controller.handle({ type: "run", prompt: "go" });
    await controller.handle({ type: "restore", runId: "r-1" });
    await controller.handle({ type: "restore", runId: "r-404" });
    assert.deepStrictEqual(server.rewinds, [["s-1", "r-1"]]);
  });
});
