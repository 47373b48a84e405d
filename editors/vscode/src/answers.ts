// Building the answer to `agent/approve` from what the user chose and changed.
// No `vscode` import: tested directly.
import type { AgentApproveParams, AgentApproveResult } from "./protocol";

export type Choice = "allow" | "allow-always" | "deny";

/** The button labels, in the order they are offered. */
export const CHOICE_LABELS: Readonly<Record<Choice, string>> = {
  allow: "Allow",
  "allow-always": "Allow Always",
  deny: "Deny",
};

export function choiceOf(label: string | undefined): Choice | undefined {
  const entry = Object.entries(CHOICE_LABELS).find(([, text]) => text === label);
  return entry === undefined ? undefined : (entry[0] as Choice);
}

/** The answer: feedback only with a deny, changed arguments or text only with an allow. */
export function buildAnswer(
  choice: Choice,
  changes: { feedback?: string; arguments?: { [key: string]: unknown }; editedText?: string } = {},
): AgentApproveResult {
  if (choice === "deny") {
    const feedback = changes.feedback?.trim();
    return feedback ? { decision: "deny", feedback } : { decision: "deny" };
  }
  if (changes.editedText !== undefined) {
    return { decision: choice, editedText: changes.editedText };
  }
  return changes.arguments === undefined
    ? { decision: choice }
    : { decision: choice, arguments: changes.arguments };
}

/** For a diff preview: the user's version of the proposed window (undefined: unchanged). */
export function diffAnswer(
  choice: Choice,
  editedText: string | undefined,
  feedback?: string,
): AgentApproveResult {
  return buildAnswer(choice, choice === "deny" ? { feedback } : { editedText });
}

/** The shell tool: the one call whose preview is a command line the user may change. */
export const SHELL_TOOL = "bash";

/**
 * For a command preview: an edited command line becomes changed arguments — for the shell
 * tool only. Other calls shown this way (an MCP tool: server · tool and its JSON arguments)
 * have no command line, so what the dialog shows is never sent back as a change.
 */
export function commandAnswer(
  choice: Choice,
  params: AgentApproveParams,
  editedCommand?: string,
  feedback?: string,
): AgentApproveResult {
  if (choice === "deny") {
    return buildAnswer(choice, { feedback });
  }
  const changed =
    params.tool === SHELL_TOOL && editedCommand !== undefined && editedCommand !== params.arguments.command
      ? { ...params.arguments, command: editedCommand }
      : undefined;
  return buildAnswer(choice, { arguments: changed });
}
