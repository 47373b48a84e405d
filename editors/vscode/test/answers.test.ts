import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { buildAnswer, choiceOf, commandAnswer, diffAnswer } from "../src/answers";
import type { AgentApproveParams } from "../src/protocol";
import { MCP_CALL as MCP } from "./mcpCall";

const GOLDEN = path.resolve(__dirname, "../../../../tests/golden");
const BASH: AgentApproveParams = {
  runId: "r-1",
  callId: "call_3_1",
  tool: "bash",
  title: "Run python -m unittest",
  arguments: { command: "python -m unittest" },
  preview: { kind: "command", command: "python -m unittest", cwd: "/work/app" },
};

describe("approval answers", () => {
  it("maps the button labels to decisions", () => {
    assert.deepStrictEqual(["Allow", "Allow Always", "Deny", "Later", undefined].map(choiceOf), [
      "allow",
      "allow-always",
      "deny",
      undefined,
      undefined,
    ]);
  });

  it("carries feedback only with a deny, trimmed, and none when empty", () => {
    assert.deepStrictEqual(buildAnswer("deny", { feedback: "  use pytest instead " }), {
      decision: "deny",
      feedback: "use pytest instead",
    });
    assert.deepStrictEqual(buildAnswer("deny", { feedback: "   " }), { decision: "deny" });
    assert.deepStrictEqual(buildAnswer("allow", { feedback: "ignored" }), { decision: "allow" });
    assert.deepStrictEqual(buildAnswer("allow-always"), { decision: "allow-always" });
  });

  it("sends nothing more when the proposal was allowed unchanged", () => {
    assert.deepStrictEqual(diffAnswer("allow", undefined), { decision: "allow" });
  });

  it("sends the user's version of the window as editedText (the golden example)", () => {
    const golden = JSON.parse(
      fs.readFileSync(path.join(GOLDEN, "agent-approve.result.json"), "utf8"),
    ) as unknown[];
    const answer = diffAnswer("allow", "a ** b\n");
    assert.deepStrictEqual(answer, { decision: "allow", editedText: "a ** b\n" });
    assert.ok(golden.some((g) => JSON.stringify(g) === JSON.stringify(answer)));
    assert.deepStrictEqual(diffAnswer("allow-always", "x\n"), {
      decision: "allow-always",
      editedText: "x\n",
    });
  });

  it("ignores edits when denying, keeping the feedback", () => {
    assert.deepStrictEqual(diffAnswer("deny", "zzz\n", "leave it"), {
      decision: "deny",
      feedback: "leave it",
    });
  });

  it("sends an edited command (the golden example) and nothing for an unchanged one", () => {
    assert.deepStrictEqual(commandAnswer("allow", BASH, "python -m pytest -q"), {
      decision: "allow",
      arguments: { command: "python -m pytest -q" },
    });
    assert.deepStrictEqual(commandAnswer("allow", BASH, "python -m unittest"), { decision: "allow" });
    assert.deepStrictEqual(commandAnswer("deny", BASH, "rm -rf /", "use pytest instead"), {
      decision: "deny",
      feedback: "use pytest instead",
    });
  });

  it("allows an MCP call as shown: the preview is not sent back as a changed command", () => {
    const shown = (MCP.preview as { command: string }).command;
    assert.deepStrictEqual(commandAnswer("allow", MCP, shown), { decision: "allow" });
    assert.deepStrictEqual(commandAnswer("allow-always", MCP, shown), { decision: "allow-always" });
    // Only a shell command has a command line to change: anything else is the call as shown.
    assert.deepStrictEqual(commandAnswer("allow", MCP, "rm -rf /"), { decision: "allow" });
  });
});
