import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import type { AgentEventParams, AgentRunResult } from "../src/protocol";
import { OutputSink, Transcript } from "../src/transcript";

const GOLDEN = path.resolve(__dirname, "../../../../tests/golden");

class Recorder implements OutputSink {
  text = "";
  append(text: string): void {
    this.text += text;
  }
  appendLine(text: string): void {
    this.text += `${text}\n`;
  }
}

function golden<T>(name: string): T {
  return JSON.parse(fs.readFileSync(path.join(GOLDEN, name), "utf8")) as T;
}

describe("Transcript", () => {
  it("renders the golden event stream and result", () => {
    const sink = new Recorder();
    const transcript = new Transcript(sink);
    for (const event of golden<AgentEventParams[]>("agent-event.params.json")) {
      transcript.handle(event);
    }
    transcript.finish(golden<AgentRunResult>("agent-run.result.json"));
    assert.strictEqual(
      sink.text,
      [
        "▶ Fix it",
        "  run r-1 · session s-1",
        "── step 1 ──",
        "Let me ",
        '→ read_file {"path":"src/app.py"}',
        "✗ read_file",
        "  file not found: src/app.py",
        "■ done after 1 step",
        "  1200 in / 140 out tokens", // the run-finished line above gave the outcome
        "",
        "",
      ].join("\n"),
    );
  });

  it("shows a step's whole text when none was streamed, and the error and changed files", () => {
    const sink = new Recorder();
    const transcript = new Transcript(sink);
    transcript.handle({ runId: "r", seq: 1, kind: "step", step: 1 });
    transcript.handle({ runId: "r", seq: 2, kind: "assistant", text: "All at once." });
    transcript.handle({ runId: "r", seq: 3, kind: "approval", callId: "c", decision: "deny" });
    transcript.finish(golden<AgentRunResult>("agent-run.result.error.json"));
    assert.strictEqual(
      sink.text,
      [
        "── step 1 ──",
        "All at once.",
        "  approval: deny",
        "── run r-2 ──",
        "  outcome error · 1 step · 0 in / 0 out tokens · $0.0000",
        "  changed /work/app/src/app.py",
        "  error: provider failed after 4 attempts: 503 Service Unavailable",
        "",
        "",
      ].join("\n"),
    );
  });

  it("says a command ran in the sandbox (its approval event's sandbox field), then the re-ask's answer", () => {
    const sink = new Recorder();
    const transcript = new Transcript(sink);
    transcript.handle({
      runId: "r",
      seq: 1,
      kind: "approval",
      callId: "c",
      decision: "auto",
      sandbox: "bwrap",
    });
    transcript.handle({ runId: "r", seq: 2, kind: "approval", callId: "c", decision: "allow" });
    assert.strictEqual(sink.text, ["  ran in the sandbox (bwrap)", "  approval: allow", ""].join("\n"));
  });

  it("names changed files as the extension shows them (relative to the workspace)", () => {
    const sink = new Recorder();
    const transcript = new Transcript(sink, (uri) => uri.replace("file:///work/app/", ""));
    transcript.finish(golden<AgentRunResult>("agent-run.result.error.json"));
    assert.match(sink.text, /\n {2}changed src\/app\.py\n/);
  });

  it("closes a streamed line and marks the run when two runs interleave", () => {
    const sink = new Recorder();
    const transcript = new Transcript(sink);
    transcript.handle({ runId: "a", seq: 1, kind: "text-delta", text: "Hello " });
    transcript.handle({ runId: "b", seq: 1, kind: "text-delta", text: "Other" });
    transcript.handle({ runId: "a", seq: 2, kind: "text-delta", text: "world" });
    transcript.handle({ runId: "a", seq: 3, kind: "assistant", text: "Hello world" });
    assert.strictEqual(sink.text, "Hello \n── run b ──\nOther\n── run a ──\nworld\n");
  });

  it("names an MCP call by its label (server · tool)", () => {
    const sink = new Recorder();
    const transcript = new Transcript(sink);
    const base = { runId: "m", tool: "mcp__notes__echo", label: "notes · echo", callId: "c1" };
    transcript.handle({ ...base, seq: 1, kind: "tool-call", arguments: { text: "hi" } });
    transcript.handle({ ...base, seq: 2, kind: "tool-result", ok: true, output: "hi" });
    assert.strictEqual(sink.text, '→ notes · echo {"text":"hi"}\n✓ notes · echo\n  hi\n');
  });
});

describe("Transcript: text from outside", () => {
  it("writes the model's text, the tools' names and output escaped, a \\r\\n cut between deltas as one line break", () => {
    const sink = new Recorder();
    const transcript = new Transcript(sink);
    let seq = 0;
    const ev = (event: Record<string, unknown>): AgentEventParams => {
      seq += 1;
      return { runId: "r-1", seq, ...event } as AgentEventParams;
    };
    transcript.handle(ev({ kind: "run-started", prompt: "say\u001b[2J", sessionId: "s-1" }));
    transcript.handle(ev({ kind: "text-delta", text: "A\u001b[31mred \u202eexe.txt\r" }));
    transcript.handle(ev({ kind: "text-delta", text: "\nzero\u200bwidth tag\u{e0041} \\x1b" }));
    transcript.handle(ev({ kind: "assistant", text: "ignored" }));
    const label = "notes\u001b[2K\r · echo\u202e";
    transcript.handle(
      ev({ kind: "tool-call", callId: "c1", tool: "mcp__x", arguments: { text: "hi\u202e" }, label }),
    );
    transcript.handle(
      ev({
        kind: "tool-result",
        callId: "c1",
        tool: "mcp__x",
        ok: true,
        output: "out\u001b[1m\nnext\rline",
        label,
      }),
    );
    transcript.handle(ev({ kind: "step", step: 2 }));
    transcript.handle(ev({ kind: "text-delta", text: "last\r" }));
    transcript.handle(ev({ kind: "run-finished", outcome: "done", steps: 2 }));
    assert.strictEqual(
      sink.text,
      [
        "▶ say\\x1b[2J",
        "  run r-1 · session s-1",
        "A\\x1b[31mred \\u202eexe.txt",
        "zero\\u200bwidth tag\\U000e0041 \\x1b",
        '→ notes\\x1b[2K\\r · echo\\u202e {"text":"hi\\u202e"}',
        "✓ notes\\x1b[2K\\r · echo\\u202e",
        "  out\\x1b[1m",
        "  next\\rline",
        "── step 2 ──",
        "last\\r",
        "■ done after 2 steps",
        "",
      ].join("\n"),
    );
  });
});
