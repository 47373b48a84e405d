import * as assert from "assert";
import { buildAnswer, choiceOf, commandAnswer, diffAnswer } from "../src/answers";
import type { AgentApproveParams } from "../src/protocol";

const EDIT: AgentApproveParams = {
  runId: "r-1",
  callId: "call_2_1",
  tool: "edit_file",
  title: "Edit src/app.py",
  arguments: { path: "src/app.py", old_text: "a + b", new_text: "a * b" },
  preview: {
    kind: "diff",
    uri: "file:///work/app/src/app.py",
    diff: "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-a + b\n+a * b\n",
  },
};
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

  it("sends no arguments when the proposal was allowed unchanged", () => {
    const texts = { current: "a + b\n", proposed: "a * b\n", edited: "a * b\n" };
    assert.deepStrictEqual(diffAnswer("allow", EDIT, texts), { decision: "allow" });
  });

  it("sends the user's edited new text as arguments", () => {
    const texts = { current: "a + b\n", proposed: "a * b\n", edited: "a ** b\n" };
    assert.deepStrictEqual(diffAnswer("allow-always", EDIT, texts), {
      decision: "allow-always",
      arguments: { path: "src/app.py", old_text: "a + b\n", new_text: "a ** b\n" },
    });
  });

  it("ignores edits when denying, keeping the feedback", () => {
    const texts = { current: "a + b\n", proposed: "a * b\n", edited: "zzz\n" };
    assert.deepStrictEqual(diffAnswer("deny", EDIT, texts, "leave it"), {
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
});
