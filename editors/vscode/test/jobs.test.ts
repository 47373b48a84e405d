import * as assert from "assert";
import type {
  AgentJobOutputParams,
  AgentJobOutputResult,
  AgentJobsResult,
  AgentJobStopResult,
} from "../src/protocol";
import { JobViews, type JobsEndpoint } from "../src/jobs";
import * as vscode from "./fakeVscode";

type JobInfo = AgentJobsResult["jobs"][number];

const JOB: JobInfo = {
  jobId: "job-1",
  sessionId: "s-1",
  command: "npm run dev\u202e # \u001b[2J",
  state: "running",
  runtimeSeconds: 12.4,
  lastLine: "ready on :5173",
};

/** A server whose job prints the given answers to agent/jobOutput in turn. */
class FakeServer implements JobsEndpoint {
  reads: AgentJobOutputParams[] = [];
  stops: Array<[string, string]> = [];
  constructor(
    private readonly listed: JobInfo[],
    private readonly answers: AgentJobOutputResult[],
  ) {}
  async jobs(): Promise<AgentJobsResult> {
    return { jobs: this.listed };
  }
  async jobOutput(params: AgentJobOutputParams): Promise<AgentJobOutputResult> {
    this.reads.push(params);
    const answer = this.answers.shift();
    if (answer === undefined) {
      throw new Error("read after the job ended");
    }
    return answer;
  }
  async jobStop(sessionId: string, jobId: string): Promise<AgentJobStopResult> {
    this.stops.push([sessionId, jobId]);
    return { stopped: true };
  }
}

/** Ticks the views' timer by hand: each `tick()` lets one read happen. */
class Ticks {
  private waiting: Array<() => void> = [];
  readonly wait = (): Promise<void> => new Promise((resolve) => this.waiting.push(resolve));
  async tick(): Promise<void> {
    for (let i = 0; i < 100 && this.waiting.length === 0; i++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const next = this.waiting.shift();
    assert.ok(next, "the view is not waiting for its next read");
    next();
  }
  async settled(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  get idle(): boolean {
    return this.waiting.length === 0;
  }
}

describe("Tether: Show Job Output", () => {
  beforeEach(() => vscode.reset());

  it("lists the jobs, follows the one picked in an output channel, and stops at its end", async () => {
    const server = new FakeServer(
      [JOB],
      [
        { text: "line-1\npart", next: 11, lost: 0, state: "running" },
        { text: "", next: 11, lost: 0, state: "running" },
        { text: "line-9\n", next: 58, lost: 40, state: "running" },
        { text: "bye\n", next: 62, lost: 0, state: "exited", exitCode: 0 },
      ],
    );
    const ticks = new Ticks();
    vscode.answers.showQuickPick = async (...args: unknown[]) => (args[0] as unknown[])[0];
    const views = new JobViews(async () => server, ticks.wait);
    await views.show();
    const [, [items]] = vscode.calls.find(([name]) => name === "showQuickPick")!;
    const [item] = items as Array<{ label: string; description: string; detail: string }>;
    assert.strictEqual(item.label, "job-1 · running · 12 s");
    assert.strictEqual(item.description, "npm run dev\\u202e # \\x1b[2J"); // the model's text, escaped
    assert.strictEqual(item.detail, "ready on :5173");
    await ticks.settled();
    assert.strictEqual(vscode.outputs["Tether job-1"], "job-1 · npm run dev\\u202e # \\x1b[2J\nline-1\npart");
    for (let i = 0; i < 3; i++) {
      await ticks.tick();
      await ticks.settled();
    }
    assert.strictEqual(
      vscode.outputs["Tether job-1"],
      "job-1 · npm run dev\\u202e # \\x1b[2J\nline-1\npart\n" +
        "… [40 characters cut] …\nline-9\nbye\n[job-1 exited 0]\n",
    );
    // Each read goes on from the last one's `next`; none after the end.
    assert.deepStrictEqual(
      server.reads.map((r) => [r.sessionId, r.jobId, r.since]),
      [
        ["s-1", "job-1", 0],
        ["s-1", "job-1", 11],
        ["s-1", "job-1", 11],
        ["s-1", "job-1", 58],
      ],
    );
    assert.ok(ticks.idle, "the view still reads after the job ended");
  });

  it("stops the job from its toast, and says when there are no jobs", async () => {
    const server = new FakeServer([JOB], [{ text: "", next: 0, lost: 0, state: "running" }]);
    const ticks = new Ticks();
    vscode.answers.showQuickPick = async (...args: unknown[]) => (args[0] as unknown[])[0];
    vscode.answers.showInformationMessage = async () => "Stop Job";
    const views = new JobViews(async () => server, ticks.wait);
    await views.show();
    await ticks.settled();
    assert.deepStrictEqual(server.stops, [["s-1", "job-1"]]);
    views.dispose();

    vscode.reset();
    const none = new JobViews(async () => new FakeServer([], []), ticks.wait);
    await none.show();
    assert.ok(
      vscode.calls.some(
        ([name, args]) => name === "showInformationMessage" && args[0] === "Tether: no background jobs",
      ),
    );
  });
});
