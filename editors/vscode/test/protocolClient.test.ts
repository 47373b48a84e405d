import * as assert from "assert";
import { PassThrough } from "stream";
import {
  MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from "vscode-jsonrpc/node";
import type { AgentApproveParams, AgentEventParams } from "../src/protocol";
import { TetherHandlers, TetherProtocol, WorkDoneProgress } from "../src/protocolClient";
import { until } from "./fakeVscode";

/** A connected pair in memory: `server` plays `tether serve`, `client` is under test. */
function pair(): { client: MessageConnection; server: MessageConnection } {
  const up = new PassThrough();
  const down = new PassThrough();
  const client = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
  const server = createMessageConnection(new StreamMessageReader(up), new StreamMessageWriter(down));
  client.listen();
  server.listen();
  return { client, server };
}

const APPROVE: AgentApproveParams = {
  runId: "r",
  callId: "c",
  tool: "bash",
  title: "Run ls",
  arguments: { command: "ls" },
  preview: { kind: "command", command: "ls", cwd: "/w" },
};

describe("TetherProtocol (in memory)", () => {
  let connections: { client: MessageConnection; server: MessageConnection };
  let events: AgentEventParams[];
  let handlers: TetherHandlers;
  let protocol: TetherProtocol;

  beforeEach(() => {
    connections = pair();
    events = [];
    handlers = {
      onEvent: (event) => events.push(event),
      approve: async () => ({ decision: "allow" }),
      saveDocuments: async (params) => ({ saved: params.uris.slice(0, 1) }),
    };
    protocol = new TetherProtocol(connections.client, {
      onEvent: (event) => handlers.onEvent(event),
      approve: (params, token) => handlers.approve(params, token),
      saveDocuments: (params) => handlers.saveDocuments(params),
      applyEdit: async (params) => ({ applied: params.label === "ok" }),
    });
  });

  afterEach(() => {
    protocol.dispose();
    connections.client.dispose();
    connections.server.dispose();
  });

  it("answers agent/approve with the handler's answer", async () => {
    handlers.approve = async (params) => ({
      decision: "deny",
      feedback: `not ${String(params.arguments.command)}`,
    });
    const answer = await connections.server.sendRequest("agent/approve", APPROVE);
    assert.deepStrictEqual(answer, { decision: "deny", feedback: "not ls" });
  });

  it("denies, saying why, when the approval handler fails", async () => {
    handlers.approve = () => Promise.reject(new Error("no window"));
    const answer = await connections.server.sendRequest("agent/approve", APPROVE);
    assert.deepStrictEqual(answer, { decision: "deny", feedback: "the editor failed to ask: no window" });
  });

  it("passes valid events on and drops malformed ones", async () => {
    await connections.server.sendNotification("agent/event", { runId: "r", seq: 1, kind: "step", step: 1 });
    await connections.server.sendNotification("agent/event", { seq: 2, kind: "step" });
    await connections.server.sendNotification("agent/event", {
      runId: "r",
      seq: 3,
      kind: "usage",
      inputTokens: 1,
      outputTokens: 2,
    });
    await until(() => events.some((event) => event.seq === 3)); // the last, so the others are in
    assert.deepStrictEqual(events, [
      { runId: "r", seq: 1, kind: "step", step: 1 },
      { runId: "r", seq: 3, kind: "usage", inputTokens: 1, outputTokens: 2 },
    ]);
  });

  it("routes agent/saveDocuments and workspace/applyEdit", async () => {
    assert.deepStrictEqual(
      await connections.server.sendRequest("agent/saveDocuments", { uris: ["file:///a", "file:///b"] }),
      {
        saved: ["file:///a"],
      },
    );
    assert.deepStrictEqual(
      await connections.server.sendRequest("workspace/applyEdit", { label: "ok", edit: {} }),
      { applied: true },
    );
  });

  it("sends agent/run, agent/cancel, configuration and progress cancel as the contract spells them", async () => {
    const seen: Array<[string, unknown]> = [];
    connections.server.onRequest("agent/run", (params: { runId: string }) => {
      seen.push(["agent/run", params]);
      return {
        runId: params.runId,
        sessionId: "s",
        outcome: "done",
        answer: "",
        steps: 1,
        usage: {},
        changedFiles: [],
      };
    });
    connections.server.onRequest("agent/cancel", (params) => {
      seen.push(["agent/cancel", params]);
      return { cancelled: false };
    });
    connections.server.onNotification("workspace/didChangeConfiguration", (params) =>
      seen.push(["config", params]),
    );
    connections.server.onNotification("window/workDoneProgress/cancel", (params) =>
      seen.push(["progress-cancel", params]),
    );
    const result = await protocol.run({ prompt: "go", runId: "r9", workDoneToken: "t" });
    assert.strictEqual(result.outcome, "done");
    assert.deepStrictEqual(await protocol.cancel("r9"), { cancelled: false });
    await protocol.configure({ maxSteps: 3 });
    await protocol.cancelProgress("t");
    await until(() => seen.some(([what]) => what === "progress-cancel"));
    assert.deepStrictEqual(seen, [
      ["agent/run", { prompt: "go", runId: "r9", workDoneToken: "t" }],
      ["agent/cancel", { runId: "r9" }],
      ["config", { settings: { tether: { maxSteps: 3 } } }],
      ["progress-cancel", { token: "t" }],
    ]);
  });

  it("delivers $/progress of one token only", async () => {
    const values: WorkDoneProgress[] = [];
    const subscription = protocol.onProgress("mine", (value) => values.push(value));
    await connections.server.sendNotification("$/progress", {
      token: "other",
      value: { kind: "report", message: "x" },
    });
    await connections.server.sendNotification("$/progress", {
      token: "mine",
      value: { kind: "begin", title: "Tether" },
    });
    await connections.server.sendNotification("$/progress", {
      token: "mine",
      value: { kind: "end", message: "done" },
    });
    await until(() => values.some((value) => value.kind === "end"));
    subscription.dispose();
    assert.deepStrictEqual(values, [
      { kind: "begin", title: "Tether" },
      { kind: "end", message: "done" },
    ]);
  });
});
