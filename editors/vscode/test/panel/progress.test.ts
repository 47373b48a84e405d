import * as assert from "assert";
import type { AgentEventParams } from "../../src/protocol";
import { PanelModel } from "../../src/panel/model";
import type { ToolCard } from "../../src/panel/messages";

const RUN = "r-1";
let seq = 0;
function ev(event: Record<string, unknown>): AgentEventParams {
  seq += 1;
  return { runId: RUN, seq, ...event } as AgentEventParams;
}

function card(model: PanelModel): ToolCard {
  const [item] = model.views()[0].items;
  assert.ok(item.kind === "tool");
  return item.card;
}

function running(model: PanelModel): PanelModel {
  model.apply(ev({ kind: "run-started", prompt: "build", sessionId: "s-1" }));
  model.apply(ev({ kind: "tool-call", callId: "c1", tool: "bash", arguments: { command: "make" } }));
  model.apply(ev({ kind: "approval", callId: "c1", decision: "allow" }));
  return model;
}

const report = (elapsedMs: number, lastLine: string, tail: string): AgentEventParams =>
  ev({ kind: "tool-progress", callId: "c1", tool: "bash", elapsedMs, lastLine, tail });

describe("panel: a running command's card", () => {
  it("shows the time so far, the last line and the output so far, then the result", () => {
    const model = running(new PanelModel((p) => p));
    assert.strictEqual(model.apply(report(1200, "compiling a.c", "compiling a.c\n")), true);
    assert.strictEqual(card(model).progress, "⠹ 1 s · compiling a.c");
    assert.strictEqual(card(model).output, "compiling a.c");
    model.apply(report(2600, "compiling b.c", "compiling a.c\ncompiling b.c\n"));
    assert.strictEqual(card(model).progress, "⠦ 2 s · compiling b.c");
    assert.strictEqual(card(model).output, "compiling a.c\ncompiling b.c");
    assert.strictEqual(card(model).status, "running");
    model.apply(
      ev({ kind: "tool-result", callId: "c1", tool: "bash", ok: true, output: "exit code: 0\nbuilt\n" }),
    );
    assert.strictEqual(card(model).progress, undefined);
    assert.strictEqual(card(model).status, "ok");
    assert.strictEqual(card(model).output, "exit code: 0\nbuilt");
    // A late report of the finished call changes nothing.
    assert.strictEqual(model.apply(report(3000, "late", "late\n")), false);
    assert.strictEqual(card(model).progress, undefined);
  });

  it("stops saying it runs when the run ends first (cancelled, timed out)", () => {
    const model = running(new PanelModel((p) => p));
    model.apply(report(1200, "compiling a.c", "compiling a.c\n"));
    model.apply(ev({ kind: "run-finished", outcome: "cancelled", steps: 1 }));
    assert.strictEqual(card(model).status, "stopped");
    assert.strictEqual(card(model).progress, undefined);
  });
});
