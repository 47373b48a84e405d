// What the panel reads in the server's answer to a /rewind typed in its prompt box: which
// checkpoint the conversation went back to. No `vscode` import: tested directly.

/** The server's line when the conversation was cut (`session/rewind_lines.py`). */
const CONVERSATION_CUT = "the conversation continues from before that step";

/**
 * The checkpoint a `/rewind ID …` answer says the conversation went back to: its first line
 * `rewound to before ID (…)` and, under it, that the conversation continues from there.
 * Undefined for a list, a files-only rewind, or anything else.
 */
export function rewoundTo(message: string): string | undefined {
  const [first, ...rest] = message.split("\n");
  const match = /^rewound to before (\S+) \((?:files|conversation|both)\)$/.exec(first.trim());
  if (match === null || !rest.some((line) => line.trim() === CONVERSATION_CUT)) {
    return undefined;
  }
  return match[1];
}
