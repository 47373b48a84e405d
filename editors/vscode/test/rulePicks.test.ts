import * as assert from "assert";
import type { AgentApproveParams } from "../src/protocol";
import { MCP_CALL } from "./mcpCall";
import { rulePicks, suggestedPatterns, withPickedRule } from "../src/rulePicks";

const BASH: AgentApproveParams = {
  runId: "r",
  callId: "c",
  tool: "bash",
  title: "Run pytest -q tests",
  arguments: { command: "pytest -q tests" },
  preview: { kind: "command", command: "pytest -q tests", cwd: "/w" },
  suggestedPatterns: ["pytest -q tests", "pytest *"],
};

describe("allow-always rules offered by the server", () => {
  it("offers each pattern, narrowest first, in each scope; a command has no 'every' entry", () => {
    assert.deepStrictEqual(
      rulePicks(BASH).map((p) => [p.label, p.description, p.rule?.pattern, p.rule?.scope]),
      [
        ["Always allow `pytest -q tests`", "this session", "pytest -q tests", "session"],
        ["Always allow `pytest -q tests`", "this project", "pytest -q tests", "project"],
        ["Always allow `pytest -q tests`", "all my projects", "pytest -q tests", "user"],
        ["Always allow `pytest *`", "this session", "pytest *", "session"],
        ["Always allow `pytest *`", "this project", "pytest *", "project"],
        ["Always allow `pytest *`", "all my projects", "pytest *", "user"],
      ],
    );
  });

  it("offers an MCP tool's rule as every call of that tool, and no 'every file'", () => {
    assert.deepStrictEqual(
      rulePicks({ ...MCP_CALL, suggestedPatterns: ["*"] }).map((p) => [p.label, p.rule?.scope]),
      [
        ["Always allow every call of this tool", "session"],
        ["Always allow every call of this tool", "project"],
        ["Always allow every call of this tool", "user"],
      ],
    );
  });

  it("offers nothing when the server sent nothing (or nothing usable)", () => {
    assert.deepStrictEqual(rulePicks({ ...BASH, suggestedPatterns: undefined }), []);
    assert.deepStrictEqual(rulePicks({ ...BASH, suggestedPatterns: null }), []);
    assert.deepStrictEqual(rulePicks({ ...BASH, suggestedPatterns: [] }), []);
    assert.deepStrictEqual(suggestedPatterns({ ...BASH, suggestedPatterns: [" ", 3 as never, "ls"] }), [
      "ls",
    ]);
  });

  it("puts the picked rule only on an allow-always answer", () => {
    const rule = { pattern: "pytest *", scope: "project" as const };
    assert.deepStrictEqual(withPickedRule({ decision: "allow-always" }, { rule }), {
      decision: "allow-always",
      rule,
    });
    assert.deepStrictEqual(withPickedRule({ decision: "allow" }, { rule }), { decision: "allow" });
    assert.deepStrictEqual(withPickedRule({ decision: "allow-always" }, {}), { decision: "allow-always" });
  });
});
