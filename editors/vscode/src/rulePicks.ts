// "Allow always" as a choice among the rules the server offers (`suggestedPatterns`,
// narrowest first) and where to keep the picked one (session, project, user). The server
// computes the list once for every client; the extension only shows it and sends back the
// pick. No `vscode` import: tested directly.
import type { AgentApproveParams, AgentApproveResult, ProposedRule } from "./protocol";

export type RuleScope = ProposedRule["scope"] & string;

/** The scopes in the order offered, with how each reads after "Always allow …". */
export const RULE_SCOPES: ReadonlyArray<{ readonly scope: RuleScope; readonly text: string }> = [
  { scope: "session", text: "this session" },
  { scope: "project", text: "this project" },
  { scope: "user", text: "all my projects" },
];

/** One entry of the Allow Always pick; `rule` undefined: plain allow-always (the server's default). */
export interface RulePick {
  readonly label: string;
  readonly description: string;
  readonly rule?: ProposedRule;
}

/** The allow-always rule the user picked; `rule` undefined: plain allow-always. */
export interface PickedRule {
  readonly rule?: ProposedRule;
}

/** The rules the server offers for this call (empty: none, so Allow Always is as before). */
export function suggestedPatterns(params: AgentApproveParams): string[] {
  const offered = params.suggestedPatterns;
  return Array.isArray(offered) ? offered.filter((p) => typeof p === "string" && p.trim() !== "") : [];
}

/** Whether `tool` is an MCP server's tool (`mcp__notes__echo`): its rule `*` is every call of it. */
export function isMcpTool(tool: string): boolean {
  return tool.startsWith("mcp__");
}

/** "Always allow `pytest *`": the words a user reads on a button or in a pick. */
export function alwaysAllowLabel(pattern: string, tool = "bash"): string {
  return isMcpTool(tool) && pattern === "*"
    ? "Always allow every call of this tool"
    : `Always allow \`${pattern}\``;
}

/**
 * The Allow Always pick for a call: each offered rule in each scope, narrowest first. An edit
 * also keeps the server's default (every edit of that tool, this session), which is what
 * Allow Always did before rules were offered. Empty when the server offered nothing.
 */
export function rulePicks(params: AgentApproveParams): RulePick[] {
  const patterns = suggestedPatterns(params);
  if (patterns.length === 0) {
    return [];
  }
  const picks: RulePick[] = patterns.flatMap((pattern) =>
    RULE_SCOPES.map(({ scope, text }) => ({
      label: alwaysAllowLabel(pattern, params.tool),
      description: text,
      rule: { pattern, scope },
    })),
  );
  if (params.tool !== "bash" && !isMcpTool(params.tool)) {
    picks.push({ label: "Always allow every file", description: "this session" });
  }
  return picks;
}

/** An allow-always answer with the rule the user picked (none picked: the server's default). */
export function withPickedRule(
  answer: AgentApproveResult,
  picked: PickedRule | undefined,
): AgentApproveResult {
  return answer.decision === "allow-always" && picked?.rule !== undefined
    ? { ...answer, rule: picked.rule }
    : answer;
}
