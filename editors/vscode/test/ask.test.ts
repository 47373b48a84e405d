import * as assert from "assert";
import { PassThrough } from "stream";
import { CancellationTokenSource as RpcCancellation } from "vscode-jsonrpc";
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";
import { TYPE_AN_ANSWER, answerAsk, plainLabel, plainPrompt } from "../src/ask";
import { EventRenderer, describeCall } from "../src/events";
import type { AgentAskParams, AgentEventParams } from "../src/protocol";
import { CLIENT_CAPABILITIES, TetherProtocol } from "../src/protocolClient";
import * as vscode from "./fakeVscode";

type Token = vscode.CancellationTokenSource["token"];
interface Item {
  label: string;
}

const QUESTION = "Which database should the cache use?";
const params = (extra: Partial<AgentAskParams> = {}): AgentAskParams => ({
  runId: "r1",
  callId: "call_1",
  question: QUESTION,
  choices: ["sqlite", "postgres"],
  freeText: false,
  ...extra,
});

/** The call `name` made to the fake UI (the only one). */
function called(name: string): unknown[] {
  const found = vscode.calls.filter(([call]) => call === name);
  assert.strictEqual(found.length, 1, `${name} called ${found.length} times`);
  return found[0][1];
}

function labels(args: unknown[]): string[] {
  return (args[0] as Item[]).map((item) => item.label);
}

describe("agent/ask answered in VS Code", () => {
  beforeEach(() => vscode.reset());

  it("offers the choices in a quick pick and answers the one picked, as sent", async () => {
    vscode.answers.showQuickPick = async (items) => (items as Item[])[1];
    const token = new vscode.CancellationTokenSource().token;
    assert.deepStrictEqual(await answerAsk(params(), token), { answer: "postgres" });
    const args = called("showQuickPick");
    assert.deepStrictEqual(labels(args), ["sqlite", "postgres"]); // no typing: only the choices
    const options = args[1] as { title: string; ignoreFocusOut: boolean };
    assert.strictEqual(options.title, `Tether asks: ${QUESTION}`);
    assert.strictEqual(options.ignoreFocusOut, true); // a look at the code does not decline
    assert.strictEqual(args[2], token);
    assert.ok(!vscode.calls.some(([call]) => call === "showInputBox"));
  });

  it("offers Type an answer… when the model takes one, and answers the text typed", async () => {
    vscode.answers.showQuickPick = async (items) => (items as Item[]).at(-1);
    vscode.answers.showInputBox = async () => "redis, it is already running";
    const answer = await answerAsk(params({ freeText: true }), new vscode.CancellationTokenSource().token);
    assert.deepStrictEqual(answer, { answer: "redis, it is already running" });
    assert.deepStrictEqual(labels(called("showQuickPick")), ["sqlite", "postgres", TYPE_AN_ANSWER]);
    const [options] = called("showInputBox") as [{ title: string; prompt: string }];
    assert.strictEqual(options.title, `Tether asks: ${QUESTION}`);
    assert.strictEqual(options.prompt, QUESTION);
  });

  it("asks for typed text alone when there are no choices (freeText absent)", async () => {
    vscode.answers.showInputBox = async () => "cache.db";
    const answer = await answerAsk(
      { runId: "r1", callId: "c", question: "Name of the file?" },
      new vscode.CancellationTokenSource().token,
    );
    assert.deepStrictEqual(answer, { answer: "cache.db" });
    assert.ok(!vscode.calls.some(([call]) => call === "showQuickPick"));
  });

  it("takes a secret's answer in a password box, as typed", async () => {
    vscode.answers.showInputBox = async () => " s3cret ";
    const answer = await answerAsk(
      { runId: "r1", callId: "c", question: "Password:", secret: true },
      new vscode.CancellationTokenSource().token,
    );
    assert.deepStrictEqual(answer, { answer: " s3cret " });
    const [options] = called("showInputBox") as [{ password: boolean }];
    assert.strictEqual(options.password, true);
    vscode.reset();
    vscode.answers.showInputBox = async () => "cache.db";
    await answerAsk(
      { runId: "r1", callId: "c", question: "Name?" },
      new vscode.CancellationTokenSource().token,
    );
    assert.strictEqual((called("showInputBox") as [{ password: boolean }])[0].password, false);
  });

  it("answers a dismissed pick, a dismissed or empty input as declined ({})", async () => {
    const token = new vscode.CancellationTokenSource().token;
    assert.deepStrictEqual(await answerAsk(params(), token), {}); // the fake pick answers undefined
    vscode.answers.showQuickPick = async (items) => (items as Item[]).at(-1);
    assert.deepStrictEqual(await answerAsk(params({ freeText: true }), token), {});
    vscode.answers.showInputBox = async () => "   ";
    assert.deepStrictEqual(await answerAsk(params({ choices: null }), token), {});
  });

  it("answers Enter alone as an empty answer to a command's question (enterAlone), Escape as none", async () => {
    const token = new vscode.CancellationTokenSource().token;
    const question = { runId: "r1", callId: "c", question: "Install? [Y/n]", enterAlone: true };
    vscode.answers.showInputBox = async () => "";
    assert.deepStrictEqual(await answerAsk(question, token), { answer: "" });
    const [options] = called("showInputBox") as [{ placeHolder: string }];
    assert.strictEqual(options.placeHolder, "Your answer, or Enter alone (Escape: no answer)");
    vscode.answers.showInputBox = async () => undefined;
    assert.deepStrictEqual(await answerAsk(question, token), {});
    vscode.answers.showInputBox = async () => "n";
    assert.deepStrictEqual(await answerAsk(question, token), { answer: "n" });
  });

  it("closes the pick when the server withdraws the question, and answers nothing", async () => {
    const source = new vscode.CancellationTokenSource();
    let closed = false;
    // As VS Code does: a pick given a token closes (undefined) when the token is cancelled.
    vscode.answers.showQuickPick = (_items, _options, token) =>
      new Promise((resolve) =>
        (token as Token).onCancellationRequested(() => {
          closed = true;
          resolve(undefined);
        }),
      );
    const answered = answerAsk(params({ freeText: true }), source.token);
    await vscode.until(() => vscode.calls.length > 0);
    source.cancel();
    assert.deepStrictEqual(await answered, {});
    assert.ok(closed);
    assert.ok(!vscode.calls.some(([call]) => call === "showInputBox")); // not asked on
  });

  it("asks nothing for a question withdrawn before it was shown", async () => {
    const source = new vscode.CancellationTokenSource();
    source.cancel();
    assert.deepStrictEqual(await answerAsk(params(), source.token), {});
    assert.deepStrictEqual(vscode.calls, []);
  });

  it("shows the server's escaped text as text: an icon or a link in it is not rendered", async () => {
    const question = "Run $(alert) or [this](command:workbench.action.terminal.new)?\nSay \\x1b.";
    vscode.answers.showQuickPick = async (items) => (items as Item[])[0];
    const answer = await answerAsk(
      params({ question, choices: ["$(check) yes", "\\$(x) no"] }),
      new vscode.CancellationTokenSource().token,
    );
    assert.deepStrictEqual(answer, { answer: "$(check) yes" }); // the choice as sent
    const args = called("showQuickPick");
    // Quick pick labels render $(name) as an icon; a backslash before it shows it as typed.
    assert.deepStrictEqual(labels(args), ["\\$(check) yes", "\\\\$(x) no"]);
    assert.strictEqual(
      (args[1] as { title: string }).title, // a title is text (no icons, no links), one line
      "Tether asks: Run $(alert) or [this](command:workbench.action.terminal.new)? Say \\x1b.",
    );
    // An input box's prompt renders icons and [links](command:…): neither survives.
    const prompt = plainPrompt(question);
    assert.ok(!/\]\((?:https?:\/\/|command:|file:)/i.test(prompt), prompt);
    assert.ok(prompt.includes("\\$(alert)"));
    assert.strictEqual(prompt.replace("\u200b", ""), question.replace("$(alert)", "\\$(alert)"));
  });
});

// VS Code's own parsers (1.139): a quick pick label and an input box prompt make `$(name)`
// an icon unless a backslash comes before it (iconLabels.ts), and a prompt makes
// `[label](https://…|command:…|file:…)` a link (linkedText.ts, used by the quick input).
const VS_ICON = /(\\)?\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g;
const VS_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;

/** The text VS Code shows for `label` and how many icons it makes of it. */
function renderedIcons(label: string): { text: string; icons: number } {
  let icons = 0;
  const text = label.replace(VS_ICON, (_match, escaped: string | undefined, name: string) => {
    if (escaped) {
      return `$(${name})`;
    }
    icons += 1;
    return "";
  });
  return { text, icons };
}

/** A small seeded generator (the same spellings every run). */
function spellings(count: number): string[] {
  const pieces = [
    "$",
    "(",
    ")",
    "[",
    "]",
    "\\",
    "a",
    "x-1",
    "~spin",
    " ",
    "command:",
    "https://",
    "file:",
    '"',
    "'",
    "\n",
    "[a]",
    "(command:x)",
    "(https://x)",
    "$(a)",
    "\\$(",
  ];
  let seed = 12345;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor(seed / 65536) % n; // the high bits: the low ones repeat quickly
  };
  const found: string[] = [];
  for (let i = 0; i < count; i++) {
    let text = "";
    const length = 1 + next(16);
    for (let j = 0; j < length; j++) {
      text += pieces[next(pieces.length)];
    }
    found.push(text);
  }
  return found;
}

describe("agent/ask's text as VS Code renders it (generated spellings)", () => {
  it("generates spellings that VS Code would make icons and links of", () => {
    const generated = spellings(3000);
    assert.ok(generated.filter((text) => renderedIcons(text).icons > 0).length > 500);
    assert.ok(generated.filter((text) => text.match(VS_LINK) !== null).length > 60);
  });

  it("a label shows every spelling as sent, with no icon", () => {
    for (const text of [...spellings(3000), "$(alert)", "\\$(alert)", "\\\\$(x~spin)"]) {
      assert.deepStrictEqual(renderedIcons(plainLabel(text)), { text, icons: 0 }, JSON.stringify(text));
    }
  });

  it("a prompt makes no link of any spelling and shows it as sent (the zero-width space aside)", () => {
    for (const text of [...spellings(3000), "[a](command:x)", "[a](HTTPS://x)", "[a](file:/x 'y')"]) {
      const prompt = plainPrompt(text);
      assert.strictEqual(prompt.match(VS_LINK), null, JSON.stringify(prompt));
      const shown = renderedIcons(prompt);
      assert.deepStrictEqual({ ...shown, text: shown.text.replace(/\u200b/g, "") }, { text, icons: 0 });
    }
  });
});

describe("agent/ask over the protocol layer", () => {
  beforeEach(() => vscode.reset());

  it("declares ask and routes the request; $/cancelRequest closes the pick; an error answers {}", async () => {
    assert.strictEqual(CLIENT_CAPABILITIES.ask, true);
    const [up, down] = [new PassThrough(), new PassThrough()];
    const client = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
    const server = createMessageConnection(new StreamMessageReader(up), new StreamMessageWriter(down));
    client.listen();
    server.listen();
    const protocol = new TetherProtocol(client, {
      onEvent: () => undefined,
      approve: async () => ({ decision: "deny" }),
      saveDocuments: async () => ({ saved: [] }),
      ask: (asked, token) => {
        if (asked.question === "fail") {
          throw new Error("no window");
        }
        return answerAsk(asked, token);
      },
    });
    vscode.answers.showQuickPick = async (items) => (items as Item[])[0];
    assert.deepStrictEqual(await server.sendRequest("agent/ask", params()), { answer: "sqlite" });
    assert.deepStrictEqual(await server.sendRequest("agent/ask", params({ question: "fail" })), {});
    let closed = false;
    vscode.answers.showQuickPick = (_items, _options, token) =>
      new Promise((resolve) =>
        (token as Token).onCancellationRequested(() => {
          closed = true;
          resolve(undefined);
        }),
      );
    vscode.calls.length = 0;
    const cancel = new RpcCancellation();
    const waiting = server.sendRequest("agent/ask", params({ question: "wait" }), cancel.token);
    waiting.catch(() => undefined); // the server side's own promise ends with the cancel
    await vscode.until(() => vscode.calls.length > 0); // the pick is shown
    cancel.cancel(); // $/cancelRequest
    await vscode.until(() => closed);
    protocol.dispose();
    client.dispose();
    server.dispose();
  });
});

describe("agent/ask's call in the panel and the transcript", () => {
  const relative = (uri: string): string => uri;

  it("says the question, whole in the details with the choices, not the call's JSON", () => {
    const call = describeCall(
      "ask_user",
      { question: "Which database\nfor the cache?", choices: ["sqlite", "postgres"], free_text: false },
      relative,
    );
    assert.deepStrictEqual(call, {
      title: "ask_user: Which database for the cache?",
      detail: "Which database\nfor the cache?\n\n· sqlite\n· postgres",
    });
    const typed = describeCall(
      "ask_user",
      { question: `Name? ${"x".repeat(100)}`, choices: ["a"] },
      relative,
    );
    assert.strictEqual(typed.title, `ask_user: Name? ${"x".repeat(73)}…`);
    assert.strictEqual(typed.detail, `Name? ${"x".repeat(100)}\n\n· a\n· or an answer of your own`);
  });

  it("shows the model's controls and bidi characters escaped, as every call", () => {
    const view = new EventRenderer(relative).render({
      runId: "r",
      seq: 1,
      kind: "tool-call",
      callId: "c",
      tool: "ask_user",
      arguments: { question: "Pick\u001b[31m one", choices: ["a\u202e"] },
    } as unknown as AgentEventParams);
    assert.ok(view.kind === "tool-call");
    assert.strictEqual(view.title, "ask_user: Pick\\x1b[31m one");
    assert.strictEqual(view.detail, "Pick\\x1b[31m one\n\n· a\\u202e\n· or an answer of your own");
  });
});
