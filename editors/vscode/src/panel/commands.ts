// The session commands typed in the panel's prompt box: the server's (`agent/commands`:
// /undo, /new, /model, /effort, /compact, /cost — run with `agent/command`) and the panel's own two,
// which act on what only the panel has: /resume (its session) and /rules (its rules list).
// No `vscode` import: tested directly.
import type { SessionCommand } from "../protocol";

/** The panel's own commands, listed after the server's. */
export const PANEL_COMMANDS: readonly SessionCommand[] = [
  { name: "resume", description: "continue a stored session in this panel", argument: "[SESSION]" },
  { name: "rules", description: "the approval rules in force" },
];

/**
 * The server's commands that, typed without an argument, offer their choices in a quick pick:
 * its title, and what follows the current choice in the command's answer (`model: NAME (…`,
 * `effort: LEVEL;…`), which marks it current.
 */
export const PICKED_COMMANDS: Readonly<Record<string, { title: string; after: string }>> = {
  model: { title: "Tether: the model of the next prompts (or type /model NAME in the panel)", after: " (" },
  effort: {
    title: "Tether: how hard the model thinks in the next prompts (or type /effort LEVEL in the panel)",
    after: ";",
  },
};

/** The server's commands, then the panel's own that the server does not list. */
export function commandList(server: readonly SessionCommand[]): SessionCommand[] {
  const listed = new Set(server.map((command) => command.name));
  return [...server, ...PANEL_COMMANDS.filter((command) => !listed.has(command.name))];
}

/** `/name argument` when `name` is a listed command; anything else is a prompt. */
export function parseCommand(
  text: string,
  commands: readonly SessionCommand[],
): { name: string; argument?: string } | undefined {
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (match === null || !commands.some((command) => command.name === match[1])) {
    return undefined;
  }
  const argument = match[2]?.trim();
  return argument ? { name: match[1], argument } : { name: match[1] };
}

/** The run `/undo` put back and what it says of it: the server's `undid run ID` and the lines under it. */
export function undoneRun(message: string): { runId: string; note: string } | undefined {
  const [first, ...rest] = message.split("\n");
  const match = /^undid run (\S+)$/.exec(first.trim());
  if (match === null) {
    return undefined;
  }
  const note = rest.map((line) => line.trim()).filter((line) => line !== "");
  return { runId: match[1], note: note.length > 0 ? note.join("; ") : "put back" };
}
