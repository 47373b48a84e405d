import * as assert from "assert";
import type { AgentEventParams } from "../../src/protocol";
import { MCP_CALL } from "../mcpCall";
import { PanelModel, approvalView } from "../../src/panel/model";
import { splitTitle } from "../../src/titles";

const RUN = "r-1";
let seq = 0;
function ev(event: Record<string, unknown>): AgentEventParams {
  seq += 1;
  return { runId: RUN, seq, ...event } as AgentEventParams;
}
const relative = (p: string): string => p.replace(/^file:\/\/\/work\//, "");

/** A panel model that has seen run RUN start (prompt "p", session s-1). */
function started(): PanelModel {
  const model = new PanelModel(relative);
  model.apply(ev({ kind: "run-started", prompt: "p", sessionId: "s-1" }));
  return model;
}

describe("panel: events → view model", () => {
  it("says on the card that a command ran in the sandbox, and that its walls stopped it when asked again", () => {
    const model = new PanelModel(relative);
    model.apply(ev({ kind: "run-started", sessionId: "s", prompt: "install" }));
    model.apply(ev({ kind: "tool-call", callId: "c1", tool: "bash", arguments: { command: "npm install" } }));
    model.apply(ev({ kind: "approval", callId: "c1", decision: "auto", sandbox: "landlock" }));
    const card = (): Record<string, unknown> => {
      const [item] = model.views()[0].items;
      assert.ok(item.kind === "tool");
      return item.card as unknown as Record<string, unknown>;
    };
    assert.strictEqual(card().sandbox, "ran in the sandbox (landlock)");
    assert.strictEqual(card().decision, "auto");
    model.apply(ev({ kind: "approval", callId: "c1", decision: "deny" }));
    assert.strictEqual(
      card().sandbox,
      "ran in the sandbox (landlock); its walls stopped it, so it was asked again",
    );
    assert.strictEqual(card().decision, "deny");
    model.apply(ev({ kind: "tool-call", callId: "c2", tool: "bash", arguments: { command: "ls" } }));
    model.apply(ev({ kind: "approval", callId: "c2", decision: "allow" }));
    const [, second] = model.views()[0].items;
    assert.ok(second.kind === "tool" && second.card.sandbox === undefined); // asked, not sandboxed
  });

  it("streams the answer as Markdown, shows tool cards, the decision, the output, outcome and usage", () => {
    const model = new PanelModel(relative);
    const events = [
      ev({ kind: "run-started", prompt: "multiply", sessionId: "s-1" }),
      ev({ kind: "step", step: 1 }),
      ev({ kind: "text-delta", text: "Changing " }),
      ev({ kind: "text-delta", text: "**the sum**." }),
      ev({ kind: "assistant", text: "Changing **the sum**." }),
      ev({ kind: "usage", inputTokens: 10, outputTokens: 4, costUsd: 0.0012 }),
      ev({
        kind: "tool-call",
        callId: "c1",
        tool: "edit_file",
        arguments: { path: "app.py", old_text: "a + b", new_text: "a * b" },
      }),
      ev({ kind: "approval", callId: "c1", decision: "allow" }),
      ev({ kind: "tool-result", callId: "c1", tool: "edit_file", ok: true, output: "edited app.py" }),
      ev({ kind: "tool-call", callId: "c2", tool: "bash", arguments: { command: "pytest -q" } }),
      ev({
        kind: "approval",
        callId: "c2",
        decision: "auto",
        rules: [{ tool: "bash", pattern: "pytest *", decision: "allow", scope: "project" }],
      }),
      ev({ kind: "tool-result", callId: "c2", tool: "bash", ok: false, output: "1 failed\n" }),
      ev({ kind: "step", step: 2 }),
      ev({ kind: "assistant", text: "Done." }),
      ev({ kind: "run-finished", outcome: "done", steps: 2 }),
    ];
    const changed = events.map((e) => model.apply(e));
    assert.deepStrictEqual(changed, [
      true,
      false,
      true,
      true,
      false,
      true,
      true,
      true,
      true,
      true,
      true,
      true,
      false,
      true,
      true,
    ]);
    const [run] = model.views();
    assert.deepStrictEqual(run.items, [
      { kind: "text", html: "<p>Changing <strong>the sum</strong>.</p>" },
      {
        kind: "tool",
        card: {
          callId: "c1",
          tool: "edit_file",
          title: "edit_file app.py",
          detail: "-a + b\n+a * b",
          status: "ok",
          decision: "allow",
          output: "edited app.py",
          stat: { added: 1, removed: 1 },
        },
      },
      {
        kind: "tool",
        card: {
          callId: "c2",
          tool: "bash",
          title: "$ pytest -q",
          detail: "pytest -q",
          status: "failed",
          decision: "auto (rule: pytest *, project)",
          output: "1 failed",
        },
      },
      { kind: "text", html: "<p>Done.</p>" },
    ]);
    assert.deepStrictEqual(
      {
        running: run.running,
        outcome: run.outcome,
        steps: run.steps,
        usage: run.usage,
        summary: run.summary,
      },
      {
        running: false,
        outcome: "done",
        steps: 2,
        usage: { inputTokens: 10, outputTokens: 4, costUsd: 0.0012 },
        summary: "done · 2 steps · 10 in / 4 out tokens · $0.0012",
      },
    );
  });

  it("marks a card waiting for the user, then denied; the run's result adds changed files", () => {
    const model = started();
    model.apply(
      ev({
        kind: "tool-call",
        callId: "c1",
        tool: "write_file",
        arguments: { path: "n.py", content: "x = 1\n" },
      }),
    );
    model.awaiting(RUN, "c1");
    assert.strictEqual((model.views()[0].items[0] as { card: { status: string } }).card.status, "awaiting");
    model.apply(ev({ kind: "approval", callId: "c1", decision: "deny" }));
    model.apply(
      ev({ kind: "tool-result", callId: "c1", tool: "write_file", ok: false, output: "denied: keep it" }),
    );
    model.finish({
      runId: RUN,
      sessionId: "s-1",
      outcome: "done",
      answer: "",
      steps: 1,
      usage: { inputTokens: 3, outputTokens: 1 },
      changedFiles: ["file:///work/a.py"],
    });
    const [run] = model.views();
    assert.strictEqual((run.items[0] as { card: { status: string } }).card.status, "denied");
    assert.deepStrictEqual(run.changedFiles, ["a.py"]);
    assert.strictEqual(run.summary, "done · 1 step · 3 in / 1 out tokens"); // the result's, no cost known
    assert.strictEqual(model.undoTarget(), RUN);
    model.undone(RUN, "reverted a.py");
    assert.strictEqual(model.views()[0].undone, "reverted a.py");
    assert.strictEqual(model.undoTarget(), undefined);
  });

  it("Undo this run aims at the last run that changed a file, not a later one that changed none", () => {
    const model = new PanelModel(relative);
    const run = (runId: string, changedFiles: string[]): void => {
      model.apply({
        runId,
        seq: 1,
        kind: "run-started",
        prompt: runId,
        sessionId: "s-1",
      } as AgentEventParams);
      model.finish({
        runId,
        sessionId: "s-1",
        outcome: "done",
        answer: "",
        steps: 1,
        usage: {},
        changedFiles,
      });
    };
    run("edits", ["file:///work/a.py"]);
    run("answers", []);
    assert.strictEqual(model.undoTarget(), "edits");
    model.undone("edits", "reverted a.py");
    assert.strictEqual(model.undoTarget(), undefined);
    // A palette run the panel only saw as events: an edit's card that ran counts.
    model.apply({
      runId: "seen",
      seq: 1,
      kind: "run-started",
      prompt: "p",
      sessionId: "s-1",
    } as AgentEventParams);
    model.apply({
      runId: "seen",
      seq: 2,
      kind: "tool-call",
      callId: "c1",
      tool: "write_file",
      arguments: { path: "n.py", content: "x\n" },
    } as AgentEventParams);
    model.apply({
      runId: "seen",
      seq: 3,
      kind: "tool-result",
      callId: "c1",
      tool: "write_file",
      ok: true,
      output: "",
    } as AgentEventParams);
    model.apply({
      runId: "seen",
      seq: 4,
      kind: "run-finished",
      outcome: "done",
      steps: 1,
    } as AgentEventParams);
    assert.strictEqual(model.undoTarget(), "seen");
  });

  it("a denied call's card says the denial once; an edit's card counts the lines its diff changes", () => {
    const model = started();
    const denial = "Not done: the user denied it; nothing was changed. The user said: not again";
    model.apply(
      ev({ kind: "tool-call", callId: "c1", tool: "bash", arguments: { command: "rm -rf build" } }),
    );
    model.apply(ev({ kind: "approval", callId: "c1", decision: "deny" }));
    // As the server sends a failure: the same words as output and as error.
    model.apply(
      ev({ kind: "tool-result", callId: "c1", tool: "bash", ok: false, output: denial, error: denial }),
    );
    const oldText = "def add(a, b):\n    # the sum\n    total = a + b\n    return total\n";
    const newText = "def add(a, b):\n    # the sum\n    total = a * b\n    return total\n";
    model.apply(
      ev({
        kind: "tool-call",
        callId: "c2",
        tool: "edit_file",
        arguments: { path: "app.py", old_text: oldText, new_text: newText },
      }),
    );
    const [denied, edit] = model.views()[0].items as unknown as Array<{
      card: { output?: string; stat?: unknown; detail: string };
    }>;
    assert.strictEqual(denied.card.output, denial);
    assert.deepStrictEqual(edit.card.stat, { added: 1, removed: 1 });
    assert.strictEqual(
      edit.card.detail,
      " def add(a, b):\n     # the sum\n-    total = a + b\n+    total = a * b\n     return total",
    );
    // While it is asked, the card shows the proposal's diff: the count of the approval's card.
    const diff =
      "--- a/app.py\n+++ b/app.py\n@@ -2,2 +2,2 @@\n     # the sum\n-    total = a + b\n+    total = a * b\n";
    model.awaiting(RUN, "c2", diff);
    const [, asked] = model.views()[0].items as unknown as Array<{
      card: { stat?: unknown; detail: string };
    }>;
    assert.deepStrictEqual(asked.card.stat, { added: 1, removed: 1 });
    assert.strictEqual(asked.card.detail, diff);
  });

  it("a call still waiting or running when the run ends (cancelled) shows as not run", () => {
    const model = started();
    model.apply(ev({ kind: "tool-call", callId: "c1", tool: "bash", arguments: { command: "ls" } }));
    model.awaiting(RUN, "c1");
    model.apply(ev({ kind: "run-finished", outcome: "cancelled", steps: 1 }));
    assert.strictEqual((model.views()[0].items[0] as { card: { status: string } }).card.status, "stopped");
  });

  it("names an MCP call by its label (server · tool), not the model's mcp__ name", () => {
    const model = started();
    model.apply(
      ev({
        kind: "tool-call",
        callId: "m1",
        tool: "mcp__notes__echo",
        label: "notes · echo",
        arguments: { text: "hi" },
      }),
    );
    const card = (model.views()[0].items[0] as { card: { title: string; tool: string } }).card;
    assert.strictEqual(card.title, 'notes · echo {"text":"hi"}');
    assert.strictEqual(card.tool, "mcp__notes__echo");
  });

  it("ignores events of runs it never saw start", () => {
    const model = new PanelModel(relative);
    assert.strictEqual(model.apply({ runId: "other", seq: 3, kind: "text-delta", text: "x" }), false);
    assert.deepStrictEqual(model.views(), []);
  });
});

describe("panel: approval cards", () => {
  const shown = (p: string): string => p.replace("file:///w/", "");

  it("shows an edit with its +N −M, and a command the sandbox stopped as a headline and a muted reason", () => {
    const edit = approvalView(
      {
        runId: "r",
        callId: "c",
        tool: "edit_file",
        title: "Edit app.py",
        arguments: {},
        preview: { kind: "diff", uri: "file:///w/app.py", diff: "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n+z\n" },
      },
      "file",
      shown,
      "1 of 2 accepted",
    );
    assert.deepStrictEqual(
      {
        title: edit.title,
        subject: edit.subject,
        stat: edit.stat,
        alsoIn: edit.alsoIn,
        progress: edit.progress,
      },
      {
        title: "Edit app.py",
        subject: "app.py",
        stat: { added: 2, removed: 1 },
        alsoIn: "file",
        progress: "1 of 2 accepted",
      },
    );
    assert.strictEqual(edit.reason, undefined);
    const command = approvalView(
      {
        runId: "r",
        callId: "c",
        tool: "bash",
        title:
          "Run touch /x — outside the sandbox: in it, it needs writing outside the workspace (Read-only file system)",
        arguments: {},
        preview: { kind: "command", command: "touch /x", cwd: "/w" },
        suggestedPatterns: ["touch /x"],
      },
      "none",
      shown,
    );
    assert.strictEqual(command.title, "Run touch /x outside the sandbox?");
    assert.strictEqual(
      command.reason,
      "The sandbox stopped it: it needs writing outside the workspace (Read-only file system)",
    );
    assert.deepStrictEqual(command.suggestions, ["touch /x"]);
    assert.strictEqual(command.editable, true);
    // An MCP call is shown as is: the server refuses a changed one, so the card offers no edit.
    const mcp = approvalView(MCP_CALL, "none", shown);
    assert.deepStrictEqual(
      [mcp.kind, mcp.subject, mcp.editable],
      ["command", 'notes › echo {"text": "hello"}', false],
    );
    assert.deepStrictEqual(splitTitle("Edit .env — a sensitive path"), {
      headline: "Edit .env",
      reason: "a sensitive path",
    });
    assert.deepStrictEqual(splitTitle("Run ls"), { headline: "Run ls" });
  });
});

describe("panel: the plan", () => {
  it("shows the model's latest step list at the top of the run, each plan replacing the last", () => {
    const model = new PanelModel((p) => p);
    let n = 0;
    const at = (event: Record<string, unknown>): boolean =>
      model.apply({ runId: "r-p", seq: ++n, ...event } as AgentEventParams);
    at({ kind: "run-started", prompt: "fix it", sessionId: "s" });
    assert.ok(
      at({
        kind: "plan",
        entries: [
          { content: "Read the failing test", status: "in_progress", priority: "high" },
          { content: "Fix add()" },
        ],
      }),
    );
    assert.deepStrictEqual(model.views()[0].plan, [
      { content: "Read the failing test", status: "in_progress", priority: "high" },
      { content: "Fix add()", status: "pending" },
    ]);
    at({
      kind: "plan",
      entries: [
        { content: "Read the failing test", status: "completed" },
        { content: "Fix add()", status: "in_progress" },
      ],
    });
    assert.deepStrictEqual(
      model.views()[0].plan?.map((step) => `${step.status} ${step.content}`),
      ["completed Read the failing test", "in_progress Fix add()"],
    );
  });
});

describe("panel: the model's thinking", () => {
  it("streams each step's thinking into a collapsed section of its own before the answer, escaped", () => {
    const model = started();
    const items = (): unknown[] => model.views()[0].items.map((item) => ({ ...item }));
    model.apply(ev({ kind: "step", step: 1 }));
    assert.strictEqual(model.apply(ev({ kind: "thinking", text: "The te" })), true);
    assert.deepStrictEqual(items(), [{ kind: "thinking", text: "The te", words: 2 }]);
    model.apply(ev({ kind: "thinking", text: "st wants a comma.\nAdd it\u001b[2J \u202eexe.txt" }));
    const thought = "The test wants a comma.\nAdd it\\x1b[2J \\u202eexe.txt";
    assert.deepStrictEqual(items(), [{ kind: "thinking", text: thought, words: 8 }]);
    model.apply(ev({ kind: "text-delta", text: "Adding **it**." }));
    model.apply(ev({ kind: "assistant", text: "Adding **it**." }));
    model.apply(ev({ kind: "tool-call", callId: "c1", tool: "list_files", arguments: {} }));
    model.apply(ev({ kind: "step", step: 2 }));
    model.apply(ev({ kind: "thinking", text: "Done." }));
    model.apply(ev({ kind: "assistant", text: "Added." }));
    const [first, answer, card, second, last] = model.views()[0].items;
    assert.deepStrictEqual(first, { kind: "thinking", text: thought, words: 8 });
    assert.deepStrictEqual(answer, { kind: "text", html: "<p>Adding <strong>it</strong>.</p>" });
    assert.ok(card.kind === "tool");
    assert.deepStrictEqual(second, { kind: "thinking", text: "Done.", words: 1 }); // a new section
    assert.deepStrictEqual(last, { kind: "text", html: "<p>Added.</p>" }); // never in the answer
  });
});

describe("panel: text from outside, escaped before it is shown", () => {
  it("escapes the answer before Markdown, the tools' names, calls, output and errors, and the plan", () => {
    const model = started();
    const items = () => model.views()[0].items;
    model.apply(ev({ kind: "step", step: 1 }));
    // An escape sequence, a bidi override, a \r\n cut between two deltas, a zero-width
    // space, a tag character; the model's own `\x1b` (four characters) stays as it is.
    model.apply(ev({ kind: "text-delta", text: "A \u001b[31m**red**\u001b[0m \u202eexe.txt\r" }));
    model.apply(
      ev({
        kind: "text-delta",
        text: "\nzero\u200bwidth tag\u{e0041} `\\x1b`\n\n```\ncode\u202e <b>\n```\n",
      }),
    );
    model.apply(ev({ kind: "assistant", text: "ignored: streamed" }));
    const [answer] = items();
    assert.deepStrictEqual(answer, {
      kind: "text",
      html:
        "<p>A \\x1b[31m<strong>red</strong>\\x1b[0m \\u202eexe.txt<br>" +
        "zero\\u200bwidth tag\\U000e0041 <code>\\x1b</code></p>" +
        "<pre><code>code\\u202e &lt;b&gt;</code></pre>",
    });
    const label = "notes\u001b[2K\r · echo\u202e";
    model.apply(
      ev({
        kind: "tool-call",
        callId: "c1",
        tool: "mcp__notes__echo",
        arguments: { text: "hi\u202e" },
        label,
      }),
    );
    model.apply(
      ev({
        kind: "tool-result",
        callId: "c1",
        tool: "mcp__notes__echo",
        ok: false,
        output: "out\u001b[1m\u200b\nnext\rline",
        error: "bad\u202eerror\u0007",
        label,
      }),
    );
    model.apply(ev({ kind: "plan", entries: [{ content: "plan\u001b[2J\u202e", status: "pending" }] }));
    model.apply(ev({ kind: "step", step: 2 }));
    model.apply(ev({ kind: "assistant", text: "Done\u202e \u001b]0;title\u0007 \\x1b" }));
    model.apply(ev({ kind: "step", step: 3 }));
    model.apply(ev({ kind: "text-delta", text: "last\r" }));
    model.apply(ev({ kind: "run-finished", outcome: "done", steps: 3 }));
    const [, call, done, last] = items();
    assert.ok(call.kind === "tool");
    assert.strictEqual(call.card.title, 'notes\\x1b[2K\\r · echo\\u202e {"text":"hi\\u202e"}');
    assert.ok(![..."\u001b\u202e\r"].some((c) => call.card.detail.includes(c)), call.card.detail);
    assert.strictEqual(call.card.output, "out\\x1b[1m\\u200b\nnext\\rline\nbad\\u202eerror\\x07");
    assert.deepStrictEqual(done, { kind: "text", html: "<p>Done\\u202e \\x1b]0;title\\x07 \\x1b</p>" });
    assert.deepStrictEqual(last, { kind: "text", html: "<p>last\\r</p>" }); // the \r held, then shown
    assert.deepStrictEqual(
      model.views()[0].plan?.map((step) => step.content),
      ["plan\\x1b[2J\\u202e"],
    );
    const everything = JSON.stringify(model.views());
    assert.ok(!everything.includes("\\\\\\\\"), everything); // nothing escaped twice
  });
});
