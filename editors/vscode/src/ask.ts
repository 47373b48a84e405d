// `agent/ask`: the model's question (its `ask_user` tool) asked in VS Code — a quick pick of
// the choices (and "Type an answer…" when the model takes a typed one), an input box for the
// typed answer. The question and the choices arrive escaped by the server (controls, bidi and
// zero-width characters written out); they are shown as text, never as icons or links.
import * as vscode from "vscode";
import type { AgentAskParams, AgentAskResult } from "./protocol";

export const TYPE_AN_ANSWER = "Type an answer…";

/** Nothing answered: the user closed the question, or the server withdrew it. */
const DECLINED: AgentAskResult = {};

/** `$(name)` is an icon in a quick pick's label and an input box's prompt. */
const ICON = /\$\([A-Za-z0-9-]+(?:~[A-Za-z]+)?\)/g;
/** `[label](command:…)` is a link an input box's prompt makes (a click runs the command). */
const LINK = /\]\((?=https?:\/\/|command:|file:)/gi;

/** `text` as a quick pick label shows it: a backslash keeps each `$(name)` from becoming an icon. */
export function plainLabel(text: string): string {
  return text.replace(ICON, "\\$&");
}

/**
 * `text` as an input box's prompt shows it: no icons, and no links — a zero-width space between
 * `]` and `(` keeps `[label](command:…)` as the text it is (it adds nothing visible).
 */
export function plainPrompt(text: string): string {
  return plainLabel(text).replace(LINK, "]\u200b(");
}

/** The question on one line: a title shows no line breaks. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

interface ChoiceItem extends vscode.QuickPickItem {
  /** The choice's position in `choices`; undefined: "Type an answer…". */
  readonly index?: number;
}

async function typed(
  params: AgentAskParams,
  title: string,
  token: vscode.CancellationToken,
): Promise<AgentAskResult> {
  const text = await vscode.window.showInputBox(
    {
      title,
      prompt: plainPrompt(params.question),
      placeHolder:
        params.enterAlone === true
          ? "Your answer, or Enter alone (Escape: no answer)"
          : "Your answer (Escape: no answer)",
      ignoreFocusOut: true,
      password: params.secret === true, // a command's password prompt: hidden as typed
    },
    token,
  );
  if (text === undefined || token.isCancellationRequested) {
    return DECLINED;
  }
  if (text.trim() === "") {
    // Enter alone: an answer to a command's question (its default), else no answer.
    return params.enterAlone === true ? { answer: "" } : DECLINED;
  }
  return { answer: text };
}

/**
 * The user's answer to `params`: a choice exactly as the server sent it, or the text typed;
 * `{}` when the pick or the input box was closed, or the server withdrew the question
 * (`$/cancelRequest`, which closes them through `token`).
 */
export async function answerAsk(
  params: AgentAskParams,
  token: vscode.CancellationToken,
): Promise<AgentAskResult> {
  if (token.isCancellationRequested) {
    return DECLINED;
  }
  const choices = (params.choices ?? []).filter((choice): choice is string => typeof choice === "string");
  const title = `Tether asks: ${oneLine(params.question)}`;
  if (choices.length === 0) {
    return typed(params, title, token);
  }
  const free = params.freeText !== false;
  const items: ChoiceItem[] = choices.map((choice, index) => ({ label: plainLabel(choice), index }));
  if (free) {
    items.push({ label: TYPE_AN_ANSWER, alwaysShow: true });
  }
  const picked = await vscode.window.showQuickPick(
    items,
    {
      title,
      placeHolder: free ? `Pick an answer, or ${TYPE_AN_ANSWER} for your own` : "Pick an answer",
      ignoreFocusOut: true,
    },
    token,
  );
  if (picked === undefined || token.isCancellationRequested) {
    return DECLINED;
  }
  if (picked.index === undefined) {
    return typed(params, title, token);
  }
  return { answer: choices[picked.index] };
}
