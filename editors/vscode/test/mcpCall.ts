import type { AgentApproveParams } from "../src/protocol";

/**
 * An MCP tool's call as the server asks it: previewed like a command (server › tool and its
 * JSON arguments) but with no command line, so what a dialog shows must never come back as
 * changed arguments.
 */
export const MCP_CALL: AgentApproveParams = {
  runId: "r-1",
  callId: "call_4_1",
  tool: "mcp__notes__echo",
  title: "MCP notes: echo",
  arguments: { text: "hello" },
  preview: { kind: "command", command: 'notes › echo {"text": "hello"}', cwd: "MCP server 'notes'" },
};
