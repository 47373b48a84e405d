import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import {
  EventRenderer,
  EventView,
  describeCall,
  diffStat,
  indentOutput,
  oneLine,
  outputTail,
  steps,
  tokens,
  usageView,
} from "../src/events";
import type { AgentEventParams, EventKind } from "../src/protocol";

const GOLDEN = path.resolve(__dirname, "../../../../tests/golden");
const relative = (p: string): string => p.replace(/^file:\/\/\/work\//, "");

/** Every kind of the protocol's RunEvent (the compiler checks each name; the test, that none is missing). */
const ALL_KINDS: Record<EventKind, true> = {
  "run-started": true,
  step: true,
  "text-delta": true,
  assistant: true,
  "tool-call": true,
  approval: true,
  "tool-result": true,
  usage: true,
  "run-finished": true,
  compacted: true,
  "injection-flagged": true,
  plan: true,
  retry: true,
  thinking: true,
  "tool-progress": true,
};

let seq = 0;
function ev(event: Record<string, unknown>, runId = "r"): AgentEventParams {
  seq += 1;
  return { runId, seq, ...event } as AgentEventParams;
}

describe("events: one renderer for the transcript and the panel", () => {
  it("renders the golden stream, one record for each of the protocol's event kinds", () => {
    const events = JSON.parse(
      fs.readFileSync(path.join(GOLDEN, "agent-event.params.json"), "utf8"),
    ) as AgentEventParams[];
    assert.deepStrictEqual(new Set(events.map((event) => event.kind)), new Set(Object.keys(ALL_KINDS)));
    const renderer = new EventRenderer(relative);
    const expected: EventView[] = [
      {
        kind: "run-started",
        runId: "r-1",
        sessionId: "s-1",
        prompt: "Fix it",
        lines: ["▶ Fix it", "  run r-1 · session s-1"],
      },
      { kind: "step", runId: "r-1", step: 1, lines: ["── step 1 ──"] },
      { kind: "text-delta", runId: "r-1", text: "Let me " },
      { kind: "thinking", runId: "r-1", text: "The greeting lacks a comma.", lines: [] }, // the panel shows it
      { kind: "assistant", runId: "r-1", text: "" }, // streamed: its deltas showed it
      {
        kind: "tool-call",
        runId: "r-1",
        callId: "call_1_1",
        tool: "read_file",
        title: "read_file src/app.py",
        detail: '{\n  "path": "src/app.py"\n}',
        lines: ['→ read_file {"path":"src/app.py"}'],
      },
      {
        kind: "approval",
        runId: "r-1",
        callId: "call_1_1",
        decision: "auto (rule: git status *, builtin)",
        denied: false,
        asked: false,
        lines: [], // decided by a rule: the transcript says nothing
      },
      {
        kind: "tool-result",
        runId: "r-1",
        callId: "call_1_1",
        ok: false,
        output: "file not found: src/app.py", // the error is the output: said once
        lines: ["✗ read_file", "  file not found: src/app.py"],
      },
      {
        kind: "usage",
        runId: "r-1",
        usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.001 },
        lines: [],
      },
      {
        kind: "run-finished",
        runId: "r-1",
        outcome: "done",
        steps: 1,
        lines: ["■ done after 1 step"],
      },
      { kind: "unshown", runId: "r-1", lines: [] }, // compacted
      { kind: "unshown", runId: "r-1", lines: [] }, // injection-flagged
      {
        kind: "plan",
        runId: "r-1",
        plan: [
          { content: "Find why test_total fails", status: "completed", priority: "high" },
          { content: "Fix total_value", status: "in_progress", priority: "high" },
          { content: "Run the tests", status: "pending", priority: "medium" },
        ],
        lines: [],
      },
      { kind: "unshown", runId: "r-1", lines: [] }, // retry
      {
        kind: "tool-progress",
        runId: "r-1",
        callId: "call_1_2",
        status: "⠴ 3 s · collected 12 items",
        output: "===== test session starts =====\ncollected 12 items",
        lines: [], // the transcript waits for the result
      },
    ];
    assert.deepStrictEqual(
      events.map((event) => renderer.render(event)),
      expected,
    );
  });

  it("gives a message's whole text when none of it streamed, per run and per step", () => {
    const renderer = new EventRenderer(relative);
    const text = (event: AgentEventParams): string => {
      const view = renderer.render(event);
      assert.ok(view.kind === "assistant" || view.kind === "text-delta");
      return view.text;
    };
    assert.strictEqual(text(ev({ kind: "assistant", text: "All at once." })), "All at once.");
    assert.strictEqual(text(ev({ kind: "text-delta", text: "Str" })), "Str");
    assert.strictEqual(text(ev({ kind: "assistant", text: "Other run." }, "other")), "Other run.");
    assert.strictEqual(text(ev({ kind: "assistant", text: "Streamed." })), "");
    renderer.render(ev({ kind: "step", step: 2 }));
    assert.strictEqual(text(ev({ kind: "assistant", text: "Step 2, whole." })), "Step 2, whole.");
    renderer.render(ev({ kind: "text-delta", text: "x" }));
    renderer.render(ev({ kind: "run-finished", outcome: "done", steps: 2 }));
    assert.strictEqual(text(ev({ kind: "assistant", text: "After the end." })), "After the end.");
  });

  it("renders edits with their -/+ lines and +N −M, commands by their command, MCP calls by their label", () => {
    const renderer = new EventRenderer(relative);
    const call = (event: Record<string, unknown>): EventView =>
      renderer.render(ev({ kind: "tool-call", callId: "c", ...event }));
    assert.deepStrictEqual(
      call({ tool: "edit_file", arguments: { path: "file:///work/a.py", old_text: "x\ny", new_text: "z" } }),
      {
        kind: "tool-call",
        runId: "r",
        callId: "c",
        tool: "edit_file",
        title: "edit_file a.py",
        detail: "-x\n-y\n+z",
        stat: { added: 1, removed: 2 },
        lines: ['→ edit_file {"path":"file:///work/a.py","old_text":"x\\ny","new_text":"z"}'],
      },
    );
    assert.deepStrictEqual(call({ tool: "write_file", arguments: { path: "n.py", content: "a\nb\n" } }), {
      kind: "tool-call",
      runId: "r",
      callId: "c",
      tool: "write_file",
      title: "write_file n.py",
      detail: "+a\n+b",
      stat: { added: 2, removed: 0 },
      lines: ['→ write_file {"path":"n.py","content":"a\\nb\\n"}'],
    });
    assert.deepStrictEqual(call({ tool: "bash", arguments: { command: "pytest -q" } }), {
      kind: "tool-call",
      runId: "r",
      callId: "c",
      tool: "bash",
      title: "$ pytest -q",
      detail: "pytest -q",
      lines: ['→ bash {"command":"pytest -q"}'],
    });
    assert.deepStrictEqual(
      call({ tool: "mcp__notes__echo", label: "notes · echo", arguments: { text: "hi" } }),
      {
        kind: "tool-call",
        runId: "r",
        callId: "c",
        tool: "mcp__notes__echo",
        title: 'notes · echo {"text":"hi"}',
        detail: '{\n  "text": "hi"\n}',
        lines: ['→ notes · echo {"text":"hi"}'],
      },
    );
    const result = renderer.render(
      ev({
        kind: "tool-result",
        callId: "c",
        tool: "mcp__notes__echo",
        label: "notes · echo",
        ok: true,
        output: "hi\n",
      }),
    );
    assert.deepStrictEqual(result, {
      kind: "tool-result",
      runId: "r",
      callId: "c",
      ok: true,
      output: "hi",
      lines: ["✓ notes · echo", "  hi"],
    });
  });

  it("renders a long output as its first lines in the transcript and its last lines on a card", () => {
    const output = Array.from({ length: 25 }, (_, i) => `l${i + 1}`).join("\n");
    const view = new EventRenderer(relative).render(
      ev({ kind: "tool-result", callId: "c", tool: "bash", ok: false, output, error: "exit code: 1" }),
    );
    assert.ok(view.kind === "tool-result");
    assert.deepStrictEqual(view.lines, [
      "✗ bash",
      ...Array.from({ length: 12 }, (_, i) => `  l${i + 1}`),
      "  … 13 more lines …",
    ]);
    assert.deepStrictEqual(view.output.split("\n"), [
      "… 6 earlier lines …",
      ...Array.from({ length: 19 }, (_, i) => `l${i + 7}`),
      "exit code: 1",
    ]);
  });

  it("renders each approval: asked, denied (by the user or by default), run in the sandbox, a rule's scope", () => {
    const renderer = new EventRenderer(relative);
    const approval = (event: Record<string, unknown>): EventView =>
      renderer.render(ev({ kind: "approval", callId: "c", ...event }));
    assert.deepStrictEqual(approval({ decision: "deny" }), {
      kind: "approval",
      runId: "r",
      callId: "c",
      decision: "deny",
      denied: true,
      asked: true,
      lines: ["  approval: deny"],
    });
    assert.deepStrictEqual(approval({ decision: "denied-by-default" }), {
      kind: "approval",
      runId: "r",
      callId: "c",
      decision: "denied-by-default",
      denied: true,
      asked: true,
      lines: ["  approval: denied-by-default"],
    });
    assert.deepStrictEqual(
      approval({ decision: "allow-always", rules: [{ tool: "bash", pattern: "ls *", decision: "allow" }] }),
      {
        kind: "approval",
        runId: "r",
        callId: "c",
        decision: "allow-always (rule: ls *, session)",
        denied: false,
        asked: true,
        lines: ["  approval: allow-always"],
      },
    );
    assert.deepStrictEqual(approval({ decision: "auto", sandbox: "bwrap" }), {
      kind: "approval",
      runId: "r",
      callId: "c",
      decision: "auto",
      denied: false,
      asked: false,
      sandbox: "ran in the sandbox (bwrap)",
      lines: ["  ran in the sandbox (bwrap)"],
    });
  });

  it("renders a plan entry without a status as to do, and usage without a cost", () => {
    const renderer = new EventRenderer(relative);
    assert.deepStrictEqual(renderer.render(ev({ kind: "plan", entries: [{ content: "Fix add()" }] })), {
      kind: "plan",
      runId: "r",
      plan: [{ content: "Fix add()", status: "pending" }],
      lines: [],
    });
    assert.deepStrictEqual(
      renderer.render(ev({ kind: "usage", inputTokens: 5, outputTokens: 1, costUsd: null })),
      {
        kind: "usage",
        runId: "r",
        usage: { inputTokens: 5, outputTokens: 1 },
        lines: [],
      },
    );
    assert.deepStrictEqual(renderer.render(ev({ kind: "run-finished", outcome: "max-steps", steps: 40 })), {
      kind: "run-finished",
      runId: "r",
      outcome: "max-steps",
      steps: 40,
      lines: ["■ max-steps after 40 steps"],
    });
    // A kind newer than this extension is shown nowhere, not an error.
    assert.deepStrictEqual(renderer.render(ev({ kind: "future-kind", text: "hm" })), {
      kind: "unshown",
      runId: "r",
      lines: [],
    });
  });
});

describe("events: a running command", () => {
  it("says the seconds so far and the last line, its spinner turned by the time", () => {
    const renderer = new EventRenderer(relative);
    const running = (elapsedMs: number, lastLine: string): EventView =>
      renderer.render(ev({ kind: "tool-progress", callId: "c", tool: "bash", elapsedMs, lastLine }));
    assert.deepStrictEqual(running(3200, "compiling foo.c"), {
      kind: "tool-progress",
      runId: "r",
      callId: "c",
      status: "⠹ 3 s · compiling foo.c",
      output: "",
      lines: [],
    });
    const status = (view: EventView): string => (view.kind === "tool-progress" ? view.status : "");
    assert.strictEqual(status(running(500, "")), "⠴ 0 s");
    assert.strictEqual(status(running(61_900, "a\tb")), "⠏ 61 s · a b"); // one line
  });
});

describe("events: the texts", () => {
  it("describes calls by their command or file, and keeps the tail of long output", () => {
    assert.deepStrictEqual(describeCall("bash", { command: "ls -la" }, relative), {
      title: "$ ls -la",
      detail: "ls -la",
    });
    assert.strictEqual(
      describeCall("read_file", { path: "file:///work/x.py" }, relative).title,
      "read_file x.py",
    );
    assert.strictEqual(
      describeCall("search", { pattern: "y".repeat(100) }, relative).title,
      `search {"pattern":"${"y".repeat(67)}…`,
    );
    const long = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n");
    const tail = outputTail(long, 5).split("\n");
    assert.deepStrictEqual(tail, [
      "… 25 earlier lines …",
      "line 26",
      "line 27",
      "line 28",
      "line 29",
      "line 30",
    ]);
  });

  it("counts an edit's lines added and removed, headers left out", () => {
    assert.deepStrictEqual(diffStat("--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n a\n-b\n+B\n+C\n"), {
      added: 2,
      removed: 1,
    });
  });

  it("counts steps in words: 1 step, 2 steps", () => {
    assert.deepStrictEqual([steps(1), steps(2), steps(0)], ["1 step", "2 steps", "0 steps"]);
  });

  it("says tokens in and out, and the cost when known", () => {
    assert.strictEqual(tokens({ inputTokens: 1200, outputTokens: 140 }), "1200 in / 140 out tokens");
    assert.strictEqual(
      tokens({ inputTokens: 3, outputTokens: 1, costUsd: 0.00123 }),
      "3 in / 1 out tokens · $0.0012",
    );
    assert.deepStrictEqual(usageView({ costUsd: null }), { inputTokens: 0, outputTokens: 0 });
  });

  it("cuts long arguments and long output", () => {
    assert.strictEqual(oneLine({ text: "x".repeat(300) }, 20), '{"text":"xxxxxxxxxx…');
    const output = Array.from({ length: 15 }, (_, i) => `l${i}`).join("\n");
    assert.deepStrictEqual(indentOutput(output, 3), ["  l0", "  l1", "  l2", "  … 12 more lines …"]);
  });
});
